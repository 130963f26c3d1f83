"""The evidence reports show what client-side tools did, and answers as the reader sees them.

A real agent (the plugin's ``agentloop_agent`` on OpenRouter, scripted) searches with our
``web_search`` (``ScriptedSearch``) and fetches with ``web_fetch`` (``ScriptedPages``)
under an allowlist while the plugin records a cassette and writes both reports.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

AGENT_TEST = """
import pytest

from agentloop_tools.testing import (
    ScriptedPages, ScriptedProvider, ScriptedSearch, brave_results, chat_completion,
)
from agentloop_tools.web import DomainPolicy, web_fetch, web_search
from agentloop_tools.web.backends import brave

POLICY = DomainPolicy.allow(["python.org"])
HITS = [
    ("https://docs.python.org/3/whatsnew/3.13.html", "What's New In Python 3.13", "New REPL."),
    ("https://realpython.com/python313-repl/", "A Modern REPL", "Paste mode."),
    ("https://medium.com/@someone/repl", "The REPL, explained", "A blog post."),
]
PAGES = {
    "https://docs.python.org/3/tutorial/": "<html><head><title>Tutorial</title></head>"
    "<body><p>The tutorial, in full.</p></body></html>",
    "https://docs.python.org/3/old-tutorial.html": (
        301, "", {"location": "https://docs.python.org/3/tutorial/"}
    ),
}
ANSWER = (
    "## The new REPL\\n\\n"
    "Python 3.13 has a **new REPL** ([notes](https://docs.python.org/3/whatsnew/3.13.html)); "
    "see [the tutorial](https://docs.python.org/3/tutorial/), "
    "[made up](https://docs.python.org/3/made-up.html) and not "
    "[this](https://evil.example/page).\\n\\n"
    "![chart](https://evil.example/chart.png)<script>alert(1)</script>"
)


@pytest.mark.vcr
@pytest.mark.domain_policy(policy=POLICY)
def test_agent(agentloop_agent, agentloop_evidence):
    script = [
        chat_completion(calls=[("c1", "web_search", {"query": "python 3.13 repl", "count": 5})]),
        chat_completion(calls=[
            ("f1", "web_fetch", {"url": "https://evil.example/page"}),
            ("f2", "web_fetch", {"url": "https://docs.python.org/3/old-tutorial.html"}),
        ]),
        chat_completion(ANSWER),
    ]
    searching = ScriptedSearch("brave", [brave_results(HITS)])
    pages = ScriptedPages(PAGES)
    tools = [
        web_search(brave("placeholder"), http_client=searching.http_client(), policy=POLICY),
        web_fetch(**pages.tool_options(), policy=POLICY),
    ]
    agent = agentloop_agent(
        tools, provider="openrouter",
        http_client=ScriptedProvider("openrouter", script).http_client(),
    )
    agent.run("What changed in the Python 3.13 REPL?")
"""


@pytest.fixture
def reported(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-" + "0" * 64)
    pytester.makepyfile(test_agent=AGENT_TEST)
    result = pytester.runpytest(
        "--record-mode=once", "--agentloop-report=evidence.json", "--agentloop-report-html=r.html"
    )
    result.assert_outcomes(failed=1)
    return pytester


def test_the_json_report_shows_the_tool_calls_and_the_links(reported: pytest.Pytester) -> None:
    [test] = json.loads((reported.path / "evidence.json").read_text())["tests"]
    assert test["cassette"]["path"] == "cassettes/test_agent/test_agent.yaml"
    # The plugin's own failure says the tool refused the fetch: the policy held, and
    # that attempt alone would not fail the test (the answer's links do).
    assert test["failure"]["kind"] == "domain-policy"
    assert (
        "  - tool-call message 3: https://evil.example/page  [not on the allowlist]\n"
        "      refused by web_fetch ([blocked-by-policy]): the policy held, nothing was read\n"
    ) in test["failure"]["message"]
    assert 'does not fail the test (refused_attempts="report")' in test["failure"]["message"]
    [conversation] = test["conversations"]
    search, refused, fetched = conversation["tool_calls"]
    assert (search["tool"], search["query"], search["status"], search["withheld"]) == (
        "web_search",
        "python 3.13 repl",
        "ok",
        2,
    )
    assert [hit["url"] for hit in search["hits"]] == [
        "https://docs.python.org/3/whatsnew/3.13.html"
    ]
    assert search["outcome"] == "1 result(s) shown, 2 withheld by the domain policy"
    assert (refused["url"], refused["status"], refused["code"], refused["read"]) == (
        "https://evil.example/page",
        "refused",
        "blocked-by-policy",
        None,
    )
    assert refused["outcome"] == "web_fetch refused it ([blocked-by-policy]): nothing was read"
    assert [(v["where"], v["url"]) for v in refused["violations"]] == [
        ("tool-call", "https://evil.example/page")
    ]
    assert (fetched["status"], fetched["read"], fetched["title"]) == (
        "ok",
        "https://docs.python.org/3/tutorial/",
        "Tutorial",
    )
    assert fetched["violations"] == []
    # The violation points at its call; the JSON keeps 0-based indexes.
    [caused] = [v for v in conversation["violations"] if v["where"] == "tool-call"]
    assert caused["call"] == {"call_id": "f1", "message_index": refused["message_index"]}
    assert caused["conversation"] == 0
    answer = conversation["turns"][-1]
    assert [
        (link["url"], link["text"], link["consulted"], link["violation"])
        for link in answer["links"]
    ] == [
        ("https://docs.python.org/3/whatsnew/3.13.html", "notes", True, False),
        ("https://docs.python.org/3/tutorial/", "the tutorial", True, False),
        ("https://docs.python.org/3/made-up.html", "made up", False, False),
        ("https://evil.example/page", "this", False, True),
        ("https://evil.example/chart.png", "chart", False, True),
    ]


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", "a PNG"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def _chromium(tmp_path: Path, *arguments: str) -> str:
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=3000", *arguments],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip


PROBE = """
<script>
const text = (selector) => [...document.querySelectorAll(selector)].map((e) => e.innerText);
const raw = document.querySelector("details.raw");
const hidden = !raw.open && !raw.querySelector(".answer").checkVisibility();
raw.open = true;  // the one click
const out = document.createElement("pre"); out.id = "probe";
out.textContent = JSON.stringify({
  conversations: text("h3"),
  calls: text(".tool-call > p:first-child"),
  hits: text(".tool-call ol.hits li"),
  fetched: text(".tool-call ul.fetched li"),
  callFlags: text(".tool-call p.flag"),
  pointers: [...document.querySelectorAll("ul.call-violations a")].map((a) => ({
    text: a.innerText, target: document.querySelector(a.getAttribute("href")).className})),
  rendered: document.querySelector(".answer.rendered").innerText,
  heading: document.querySelector(".answer.rendered h2").innerText,
  strong: document.querySelector(".answer.rendered strong").innerText,
  links: [...document.querySelectorAll(".answer.rendered a")]
    .map((a) => [a.className, a.innerText]),
  images: document.querySelectorAll("img").length,
  scripts: document.querySelectorAll(".answer script").length,
  rawHidden: hidden,
  rawShown: raw.querySelector(".answer").checkVisibility(),
  raw: raw.querySelector(".answer").innerText,
});
document.body.appendChild(out);
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium package")
def test_the_html_report_shows_the_tools_and_the_answer_as_read(
    reported: pytest.Pytester, tmp_path: Path
) -> None:
    page = (reported.path / "r.html").read_text()
    assert "<script" not in page.replace("&lt;script", ""), "no JavaScript"
    assert "<img" not in page, "nothing loaded from anywhere"
    assert (
        "cassette: cassettes/test_agent/test_agent.yaml "
        "(recording, scripted: no live provider answered)"
    ) in page
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"))
    dom = _chromium(tmp_path, "--dump-dom", probed.as_uri())
    seen: dict[str, Any] = json.loads(
        html.unescape(dom.split('<pre id="probe">', 1)[1].split("</pre>", 1)[0])
    )
    assert seen["conversations"] == ["Conversation 1"]
    assert seen["calls"] == [
        "Tool call 1: web_search query “python 3.13 repl” → 1 result(s) shown, 2 withheld by "
        "the domain policy (which hosts, and by which rule, the transcript does not record)",
        "Tool call 2: web_fetch https://evil.example/page → web_fetch refused it "
        "([blocked-by-policy]): nothing was read",
        "Tool call 3: web_fetch https://docs.python.org/3/old-tutorial.html → redirected, and "
        "read https://docs.python.org/3/tutorial/",
    ]
    assert seen["hits"] == [
        "https://docs.python.org/3/whatsnew/3.13.html (What's New In Python 3.13)"
    ]
    assert seen["fetched"] == ["read: https://docs.python.org/3/tutorial/"]
    assert seen["callFlags"] == [
        "REFUSED ATTEMPT (tool-call): https://evil.example/page (not on the allowlist; "
        "refused by the tool, nothing read: the policy held)"
    ]
    assert seen["pointers"] == [{"text": "see tool call 2", "target": "tool-call violating"}]
    assert seen["heading"] == "The new REPL"
    assert seen["strong"] == "new REPL"
    assert seen["links"] == [
        ["link-consulted", "notes"],
        ["link-consulted", "the tutorial"],
        ["link-unconsulted", "made up"],
        ["link-violating", "this"],
        ["link-violating", "[image: chart]"],
    ]
    assert seen["rendered"].endswith(
        "see the tutorial[consulted], made up[not consulted] and not "
        "this[VIOLATION: not on the allowlist].\n\n"
        "[image: chart][VIOLATION: not on the allowlist]"
    )
    assert (seen["images"], seen["scripts"]) == (0, 0)
    assert seen["rawHidden"], "the raw text waits behind one click"
    assert seen["rawShown"], "and the click shows it"
    assert seen["raw"].startswith("## The new REPL\n\nPython 3.13 has a **new REPL** ([notes](")
    shot = tmp_path / "report.png"
    _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1600", page_uri(reported))
    assert _png_size(shot) == (1200, 1600)
    keep = os.environ.get("AGENTLOOP_TOOLS_KEEP_SCREENSHOT")
    if keep:  # for a look by eye: AGENTLOOP_TOOLS_KEEP_SCREENSHOT=/tmp/report.png
        shutil.copy(shot, keep)


def page_uri(reported: pytest.Pytester) -> str:
    return (reported.path / "r.html").as_uri()


ANSWER_LINKS = re.compile(r"<a href=\"[^\"]*\" rel=\"[^\"]*\" class='(link-[a-z]+)'")


def _evidence_html(reported: pytest.Pytester, *options: str) -> tuple[int, str]:
    done = run(
        "evidence", "--format", "html", "-o", "page.html", *options,
        "cassettes/test_agent/test_agent.yaml", cwd=reported.path,
    )  # fmt: skip
    assert done.stdout == ""
    return done.returncode, (reported.path / "page.html").read_text()


def test_the_command_line_writes_the_same_page_for_a_cassette(reported: pytest.Pytester) -> None:
    code, page = _evidence_html(reported)
    assert code == 0
    # No policy given and none in the project: nothing is marked violating.
    assert ANSWER_LINKS.findall(page) == [
        "link-consulted", "link-consulted", "link-unconsulted", "link-unconsulted",
        "link-unconsulted",
    ]  # fmt: skip
    assert "VIOLATION" not in page
    assert "<h3 id='" in page
    assert ">Conversation 1</h3>" in page
    assert "cassette: cassettes/test_agent/test_agent.yaml (file)" in page
    assert (
        "Tool call 2: web_fetch</span> <code>https://evil.example/page</code> &rarr; "
        "web_fetch refused it" in page
    )
    code, marked = _evidence_html(reported, "--allow", "python.org")
    assert code == 0
    assert ANSWER_LINKS.findall(marked) == [
        "link-consulted", "link-consulted", "link-unconsulted", "link-violating",
        "link-violating",
    ]  # fmt: skip
    assert "see tool call 2</a>" in marked
    # The plugin's page shows the same answer, marked the same way.
    plugin_page = (reported.path / "r.html").read_text()
    assert ANSWER_LINKS.findall(plugin_page) == ANSWER_LINKS.findall(marked)


def test_the_project_policy_marks_the_page_too(reported: pytest.Pytester) -> None:
    reported.makeini("[pytest]\nagentloop_allow_domains = python.org\n")
    code, page = _evidence_html(reported)
    assert code == 0
    assert ANSWER_LINKS.findall(page).count("link-violating") == 2
    assert re.search(r"policy: allow python\.org \(from [^<]*tox\.ini\)", page)


def test_a_file_that_cannot_be_read_is_named_and_the_rest_still_written(
    reported: pytest.Pytester,
) -> None:
    (reported.path / "broken.yaml").write_text("interactions: [\n", encoding="utf-8")
    done = run(
        "evidence", "--format", "html", "-o", "page.html", "broken.yaml",
        "cassettes/test_agent/test_agent.yaml", cwd=reported.path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "evidence: could not read broken.yaml" in done.stderr
    page = (reported.path / "page.html").read_text()
    assert ANSWER_LINKS.findall(page).count("link-consulted") == 2


def test_a_policy_flag_without_html_is_refused(reported: pytest.Pytester) -> None:
    done = run(
        "evidence",
        "--allow",
        "python.org",
        "cassettes/test_agent/test_agent.yaml",
        cwd=reported.path,
    )
    assert done.returncode == 2
    assert "mark violations in --format html only" in done.stderr
