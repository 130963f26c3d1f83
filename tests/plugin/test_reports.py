"""Evidence reports from a test run: the JSON document, the terminal summary, the HTML page."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.plugin.scenarios import LEAKY_TEST

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(
        test_agent=LEAKY_TEST.format(marker='@pytest.mark.domain_policy(allow=["python.org"])')
    )
    return pytester


def test_the_json_report_and_terminal_summary(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "--record-mode=once", "--agentloop-report=evidence.json", "--agentloop-report-html=r.html"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- agentloop-tools -*",
            "1 test(s) with agent evidence, 1 conversation(s); 2 domain policy violation(s) in 1 "
            "test(s)",
            "evidence report (--agentloop-report): evidence.json",
            "evidence report (--agentloop-report-html): r.html",
        ]
    )
    document = json.loads((project.path / "evidence.json").read_text())
    assert document["summary"] == {
        "tests_with_evidence": 1,
        "failed": 1,
        "violations": 2,
        "refused_attempts": 0,
        "pages_with_violations": 1,
    }
    [test] = document["tests"]
    assert test["test"] == "test_agent.py::test_agent"
    assert test["outcome"] == "failed"
    assert test["policy"] == {
        "mode": "allow",
        "domains": ["python.org"],
        "from": "the domain_policy marker",
    }
    assert test["cassette"]["path"].endswith("cassettes/test_agent/test_agent.yaml")
    [conversation] = test["conversations"]
    assert [s["url"] for s in conversation["sources"]] == [
        "https://docs.python.org/3/",
        "https://en.wikipedia.org/wiki/Python",
    ]
    assert [(v["where"], v["url"], v["verdict"]) for v in conversation["violations"]] == [
        ("source", "https://en.wikipedia.org/wiki/Python", "not on the allowlist"),
        ("text", "https://en.wikipedia.org/wiki/Python", "not on the allowlist"),
    ]
    # One page, one line: the source and the link in the text are the same page.
    [page] = conversation["pages"]
    assert (page["url"], page["where"], page["occurrences"]) == (
        "https://en.wikipedia.org/wiki/Python",
        ["source", "text"],
        2,
    )
    assert conversation["questions"] == [{"message_index": 0, "text": "Tell me about Python"}]
    [turn] = conversation["turns"]
    [citation] = turn["citations"]
    assert (citation["url"], citation["violation"], citation["verdict"]) == (
        "https://docs.python.org/3/",
        False,
        None,
    )
    assert test["failure"]["kind"] == "domain-policy"


def test_reports_gather_evidence_from_xdist_workers(project: pytest.Pytester) -> None:
    project.runpytest("--record-mode=once")
    result = project.runpytest("-n", "2", "--agentloop-report=evidence.json")
    result.assert_outcomes(failed=1)
    assert json.loads((project.path / "evidence.json").read_text())["summary"]["violations"] == 2


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium package")
def test_the_html_report_renders_in_a_browser(project: pytest.Pytester, tmp_path: Path) -> None:
    project.runpytest("--record-mode=once", "--agentloop-report-html=report.html")
    page = (project.path / "report.html").read_text()
    assert "<script" not in page, "no JavaScript"
    assert "http" not in page.split("<body>", 1)[0], "no external resources"
    # The test (not the report) adds a probe that reads what the browser laid out.
    probe = """
    <script>
    document.querySelectorAll("details").forEach((d) => { d.open = true; });  // the click
    const box = (el) => el.getBoundingClientRect();
    const marks = [...document.querySelectorAll("mark")].map((m) => ({
      kind: m.className, text: m.textContent, shown: box(m).width > 0 && box(m).height > 0,
      background: getComputedStyle(m).backgroundColor }));
    const out = document.createElement("pre"); out.id = "probe";
    out.textContent = JSON.stringify({
      title: document.title, summary: document.getElementById("summary").innerText,
      marks, sources: [...document.querySelectorAll("ul.sources li")].map((li) => li.innerText),
      answer: document.querySelector(".answer.raw").innerText,
      rendered: document.querySelector(".answer.rendered").innerText,
      links: [...document.querySelectorAll(".answer.rendered a")].map((a) => ({
        kind: a.className, text: a.innerText, background: getComputedStyle(a).backgroundColor })),
      conversation: document.querySelector("h3").innerText,
      question: document.querySelector("blockquote.question").innerText,
      why: document.querySelector(".failure p").innerText,
      violations: [...document.querySelectorAll("ul.violations li")].map((li) => li.innerText)});
    document.body.appendChild(out);
    </script>"""
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", probe + "</body>"))
    dom = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=3000", "--dump-dom", probed.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    probe_text = dom.split('<pre id="probe">', 1)[1].split("</pre>", 1)[0]
    seen = json.loads(html.unescape(probe_text))
    assert seen["title"] == "agentloop-tools evidence report"
    assert seen["summary"] == "1 test(s) with evidence, 1 failed, 2 violation(s) on 1 page(s)."
    cited = [m for m in seen["marks"] if m["kind"] == "cited"]
    flagged = [m for m in seen["marks"] if m["kind"] == "violation"]
    assert [m["text"] for m in flagged] == ["https://en.wikipedia.org/wiki/Python"]
    assert all(m["shown"] for m in seen["marks"])
    assert flagged[0]["background"] == "rgb(255, 201, 201)"
    assert [m["text"] for m in cited] == ["See ", " for history."]
    assert cited[0]["background"] == "rgb(255, 243, 168)"
    # Marked in words too, not by colour alone.
    assert seen["answer"] == (
        "See https://en.wikipedia.org/wiki/Python[VIOLATION: not on the allowlist] for history.[1]"
    )
    # As the reader sees it: the link marked in words and colour.
    assert seen["rendered"] == (
        "See https://en.wikipedia.org/wiki/Python[VIOLATION: not on the allowlist] for history."
    )
    assert seen["links"] == [
        {
            "kind": "link-violating",
            "text": "https://en.wikipedia.org/wiki/Python",
            "background": "rgb(255, 201, 201)",
        }
    ]
    assert seen["conversation"] == "Conversation 1"
    assert seen["question"] == "Asked: Tell me about Python"
    assert seen["why"].startswith("Why it failed (domain-policy): the agent reached a domain")
    assert seen["sources"] == [
        "https://docs.python.org/3/",
        "VIOLATION https://en.wikipedia.org/wiki/Python (not on the allowlist)",
    ]
    assert seen["violations"] == [
        "message index 1 source/text: https://en.wikipedia.org/wiki/Python "
        "(not on the allowlist, 2 occurrences)"
    ]


def test_a_report_in_a_missing_folder_is_written_there(project: pytest.Pytester) -> None:
    result = project.runpytest("--record-mode=once", "--agentloop-report=out/sub/r.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*= FAILURES =*", "*domain policy violations*"])
    assert json.loads((project.path / "out/sub/r.json").read_text())["summary"]["violations"] == 2


def test_a_report_path_that_cannot_be_written_stops_the_run_at_start(
    project: pytest.Pytester,
) -> None:
    (project.path / "taken").write_text("a file, not a folder")
    for target in ("taken/r.json", "."):
        result = project.runpytest(f"--agentloop-report={target}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([f"ERROR: --agentloop-report {target}: cannot write*"])
        result.stdout.no_fnmatch_line("*passed*")


KINDS_TEST = """
import pytest
from agentloop_tools.testing import (
    ScriptedProvider, anthropic_message, anthropic_search, anthropic_text, assert_no_violations,
)
from agentloop_tools.web import DomainPolicy, native_web_search

PROMPT = "What is new in Python 3.13?"
SCRIPT = [
    anthropic_message([
        anthropic_search("python 3.13", ["https://docs.python.org/3/whatsnew/3.13.html",
                                         "https://en.wikipedia.org/wiki/Python"]),
        anthropic_text("It has a new REPL.",
                       cite=["https://docs.python.org/3/whatsnew/3.13.html"]),
    ])
]
RUNS = 1
FAIL = ""


@pytest.mark.vcr
def test_agent(agentloop_agent, agentloop_evidence):
    scripted = ScriptedProvider("anthropic", SCRIPT * RUNS)
    agent = agentloop_agent([native_web_search(max_uses=2)], provider="anthropic",
                            http_client=scripted.http_client())
    for _ in range(RUNS):
        agent.run(PROMPT)
    if FAIL == "assert":
        assert "domain policy violation" == "the answer", "the answer changed"
    if FAIL == "error":
        raise ValueError("refused to write, said the test")
    if FAIL == "helper":
        assert_no_violations(agentloop_evidence, DomainPolicy.block(["wikipedia.org"]))
"""
REAL_LOOKING_KEY = "sk-ant-api03-" + "Q" * 40


def _edit(pytester: pytest.Pytester, old: str, new: str) -> None:
    path = pytester.path / "test_agent.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _failure_after(
    pytester: pytest.Pytester, kind: str, *options: str
) -> tuple[dict[str, Any], str]:
    """Set the project up to fail the way ``kind`` names; the JSON and the HTML report."""
    record = ["--record-mode=once"]
    if kind == "stale-cassette":
        pytester.runpytest(*record).assert_outcomes(passed=1)
        _edit(pytester, "Python 3.13?", "Python 3.14?")
        record = []
    elif kind == "unused-interactions":
        _edit(pytester, "RUNS = 1", "RUNS = 2")
        pytester.runpytest(*record).assert_outcomes(passed=1)
        _edit(pytester, "RUNS = 2", "RUNS = 1")
        record = []
    elif kind == "domain-policy":
        _edit(
            pytester,
            "@pytest.mark.vcr",
            '@pytest.mark.vcr\n@pytest.mark.domain_policy(block=["wikipedia.org"])',
        )
    elif kind == "secret":
        _edit(pytester, '"What is new in Python 3.13?"', f'"Use {REAL_LOOKING_KEY} please"')
    elif kind == "missing-cassette":
        record = []
    elif kind in ("assertion", "error"):
        _edit(pytester, 'FAIL = ""', f"FAIL = {'assert' if kind == 'assertion' else 'error'!r}")
    elif kind == "assert_no_violations":
        _edit(pytester, 'FAIL = ""', 'FAIL = "helper"')
    pytester.runpytest(
        *record, *options, "--agentloop-report=r.json", "--agentloop-report-html=r.html"
    )
    document = json.loads((pytester.path / "r.json").read_text())
    return document, (pytester.path / "r.html").read_text()


@pytest.mark.parametrize(
    "kind",
    [
        "stale-cassette",
        "missing-cassette",
        "unused-interactions",
        "domain-policy",
        "assert_no_violations",
        "secret",
        "assertion",
        "error",
    ],
)
def test_the_report_says_why_each_test_failed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.delenv("CI", raising=False)
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_agent=KINDS_TEST)
    document, page = _failure_after(pytester, kind)
    [test] = document["tests"]
    assert test["outcome"] == ("error" if kind == "secret" else "failed")
    assert document["summary"]["failed"] == 1
    failure = test["failure"]
    assert failure["kind"] == ("domain-policy" if kind == "assert_no_violations" else kind)
    assert failure["reason"]
    assert failure["message"]
    assert f"Why it failed ({failure['kind']}):" in page
    # What was asked is in the report, even when the answer never came.
    [conversation] = test["conversations"][:1]
    [question] = conversation["questions"]
    assert question["text"].startswith(("What is new in Python 3.1", "Use "))
    assert "Asked:</span> " + html.escape(question["text"]) in page
    # Reports are scrubbed: the key the test sent is not in them.
    assert REAL_LOOKING_KEY not in json.dumps(test)
    assert REAL_LOOKING_KEY not in page


def test_a_passing_test_has_no_failure(project: pytest.Pytester) -> None:
    _edit(project, '@pytest.mark.domain_policy(allow=["python.org"])', "")
    project.runpytest("--record-mode=once", "--agentloop-report=r.json").assert_outcomes(passed=1)
    [test] = json.loads((project.path / "r.json").read_text())["tests"]
    assert (test["outcome"], test["failure"]) == ("passed", None)
    assert test["conversations"][0]["questions"] == [
        {"message_index": 0, "text": "Tell me about Python"}
    ]


OPENAI_TEST = """
import pytest
from agentloop_tools.testing import (
    ScriptedProvider, openai_message, openai_response, openai_search,
)
from agentloop_tools.web import native_web_search

DOCS = "https://docs.python.org/3/whatsnew/3.13.html"
MEDIUM = "https://medium.com/@someone/python-313-repl"
TEXT = "Python 3.13 has a new REPL (docs) and a tour of it (medium)."
SCRIPT = [
    openai_response([
        openai_search("python 3.13", [DOCS, MEDIUM]),
        openai_message(TEXT, cite=[(DOCS + "?utm_source=openai", "(docs)"),
                                   (MEDIUM + "?utm_source=openai", "(medium)")]),
    ])
]


@pytest.mark.vcr
@pytest.mark.domain_policy(allow=["python.org"])
def test_agent(agentloop_agent):
    agent = agentloop_agent([native_web_search()], provider="openai",
                            http_client=ScriptedProvider("openai", SCRIPT).http_client())
    agent.run("What is new in Python 3.13?")
"""


def test_a_page_cited_with_utm_source_is_one_source_and_a_violating_citation_is_flagged(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(test_agent=OPENAI_TEST)
    pytester.runpytest(
        "--record-mode=once", "--agentloop-report=r.json", "--agentloop-report-html=r.html"
    ).assert_outcomes(failed=1)
    [test] = json.loads((pytester.path / "r.json").read_text())["tests"]
    [conversation] = test["conversations"]
    docs = "https://docs.python.org/3/whatsnew/3.13.html"
    medium = "https://medium.com/@someone/python-313-repl"
    assert conversation["sources"] == [
        {"url": docs, "title": docs + "?utm_source=openai",
         "urls": [docs, docs + "?utm_source=openai"], "violation": False, "verdict": None},
        {"url": medium, "title": medium + "?utm_source=openai",
         "urls": [medium, medium + "?utm_source=openai"], "violation": True,
         "verdict": "not on the allowlist"},
    ]  # fmt: skip
    [turn] = conversation["turns"]
    assert [(c["url"], c["violation"], c["verdict"]) for c in turn["citations"]] == [
        (docs + "?utm_source=openai", False, None),
        (medium + "?utm_source=openai", True, "not on the allowlist"),
    ]
    [page] = conversation["pages"]
    assert page["url"] == medium
    assert page["urls"] == [medium, medium + "?utm_source=openai"]
    assert page["occurrences"] == len(conversation["violations"]) > 1
    html_page = (pytester.path / "r.html").read_text()
    assert "<mark class='cited-violation'" in html_page
    assert "[2: VIOLATION]" in html_page
    assert "[1]</sup>" in html_page
    assert (
        f"<li class='violating'><span class='flag'>VIOLATION</span> {medium}?utm_source=openai"
        in html_page
    )


def test_a_cassette_refused_at_teardown_is_reported_under_xdist_too(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    pytester.makepyfile(test_agent=KINDS_TEST)
    document, _ = _failure_after(pytester, "secret", "-n", "2")
    [test] = document["tests"]
    assert (test["outcome"], test["failure"]["kind"]) == ("error", "secret")
    assert document["summary"]["failed"] == 1
