"""The audit judges every link real renderers make of an answer (a differential test).

Two renderers render generated answers, and an HTML parser reads the HTML they make
(raw HTML included), decoding character references as browsers do:

* for allowlists, GFM itself (cmark-gfm, through ``cmarkgfm``): its autolinks, link
  destinations and HTML attributes are what a reader opens. Bare hosts
  (``evil.com``, ``config.py``) are no links to GFM, and an allowlist does not judge them;
* for blocklists, markdown-it-py with linkify-it, the fuzzy linkifier many chat UIs
  use, which links every bare host it can: a blocklist flags each of those.

Every link goes, by the WHATWG parser, to some host: if the policy refuses that host,
the audit must report something. The other way round, answers made of what an
allowlist admits, with file names, bare hosts and e-mail addresses around them, raise
no alarm.
"""

from __future__ import annotations

from html.parser import HTMLParser

import cmarkgfm
import pytest
from ada_url import join_url, parse_url
from agentloop import Transcript
from agentloop.transcript import TextPart
from cmarkgfm.cmark import Options
from hypothesis import assume, event, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from agentloop_tools.web import DomainPolicy

pytestmark = pytest.mark.core

RENDERER = MarkdownIt("gfm-like", {"linkify": True, "html": True})
BASE = "https://answer.invalid/page"
ALLOW = DomainPolicy.allow(["good.example.com"])
BLOCK = DomainPolicy.block(["evil.com"])


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.found.append(value)


def rendered_links(answer: str) -> list[str]:
    """Every href and src the rendered answer holds, as the browser receives them."""
    links: list[str] = []
    html_parts: list[str] = []

    def walk(tokens: list[Token]) -> None:
        for token in tokens:
            if token.type == "link_open":
                links.append(str(token.attrGet("href") or ""))
            elif token.type == "image":
                links.append(str(token.attrGet("src") or ""))
            elif token.type in ("html_inline", "html_block"):
                html_parts.append(token.content)
            if token.children:
                walk(token.children)

    walk(RENDERER.parse(answer))
    parser = _Links()
    parser.feed("".join(html_parts))
    parser.close()
    return links + parser.found


def gfm_links(answer: str) -> list[str]:
    """Every href and src of the answer rendered by cmark-gfm (raw HTML kept), decoded."""
    rendered = cmarkgfm.github_flavored_markdown_to_html(answer, options=Options.CMARK_OPT_UNSAFE)
    parser = _Links()
    parser.feed(rendered)
    parser.close()
    return parser.found


def host_of(link: str) -> str | None:
    """The host a browser goes to from ``link`` on an answer page, or None (no web host)."""
    try:
        url = join_url(BASE, link.strip())
        parts = parse_url(url, attributes=("protocol", "hostname"))
    except ValueError:
        return None
    if parts["protocol"] not in ("http:", "https:", "ftp:", "ws:", "wss:"):
        return None
    host = str(parts["hostname"]).rstrip(".")
    return None if host == "answer.invalid" else host


def audit(policy: DomainPolicy, answer: str) -> list[str]:
    transcript = Transcript()
    transcript.add_user_message("question")
    transcript.add_assistant_message([TextPart(text=answer)])
    return [violation.url for violation in policy.audit(transcript)]


def under(host: str, domain: str) -> bool:
    host = host.removeprefix("www.")
    return host == domain or host.endswith("." + domain)


# What an answer's link is made of: a target host, a way to write the scheme, and a
# way to encode each character (references with or without ";", escapes, invisibles).
HOSTS = st.sampled_from(
    [
        "good.example.com",
        "evil.com",
        "sub.evil.com",
        "www.evil.com",
        "Www.Evil.com",
        "good.example.com.evil.com",
        "good.example.com\\@evil.com",
        "good.example.com@evil.com",
        "good.example.com@evil.com@good.example.com",
        "evil.com\\@good.example.com",
        "ev\u00adil.com",
        "ev\ufe0fil.com",
        "ev\u200bil.com",
        "evil.com:443",
        "localhost",
        "evil.com.",
        "EVIL.COM",
    ]
)
SCHEMES = st.sampled_from(
    ["https://", "http://", "HTTPS://", "//", "\\\\", "/\\", "https:", "https:\\\\", ""]
)
PATHS = st.sampled_from(["", "/", "/x", "/a_(b)", "/?q=1&amp;r=2", "/#f", "/x.js"])


@st.composite
def encoded(draw: st.DrawFn, text: str) -> str:
    """``text`` with some characters written as references or escapes."""
    out = []
    for char in text:
        way = draw(st.sampled_from(["keep"] * 6 + ["dec", "hex", "bare", "named", "escape"]))
        if way == "dec":
            out.append(f"&#{ord(char)};")
        elif way == "hex":
            out.append(f"&#x{ord(char):X};")
        elif way == "bare":
            out.append(f"&#{ord(char)}")
        elif way == "named" and char in ".:/":
            out.append({".": "&period;", ":": "&colon;", "/": "&sol;"}[char])
        elif way == "escape" and char in ".:/@\\":
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


@st.composite
def answers(draw: st.DrawFn) -> str:
    """A short answer around one link written in some markdown or HTML form."""
    url = draw(SCHEMES) + draw(HOSTS) + draw(PATHS)
    written = draw(encoded(url)) if draw(st.booleans()) else url
    shape = draw(
        st.sampled_from(
            [
                "See {u} for more.",
                "[docs]({u})",
                "![chart]({u})",
                "<{u}>",
                '<a href="{u}">x</a>',
                "<a href='{u}'>x</a>",
                "<a href={u}>x</a>",
                '<img src="{u}">',
                "[docs][1]\n\n[1]: {u}",
                "|Name|Link|\n|---|---|\n|Docs|{u}|",
                "**{u}**",
                "({u})",
                "```sh\ncurl {u}\n```",
                "Run `{u}` to check.",
                "请访问{u}。谢谢",
                "[{u}](https://good.example.com/)",
                "[see {u}][ref]\n\n[ref]: https://good.example.com/",
            ]
        )
    )
    before = draw(st.sampled_from(["", "Answer: ", "See [good](https://good.example.com/) and "]))
    return before + shape.replace("{u}", written)


# At least 600 examples, more under a longer profile (HYPOTHESIS_PROFILE=thorough).
@settings(max_examples=max(600, settings().max_examples), deadline=None)
@given(answer=answers())
@example(answer='<a href="https://evil&#46;com/">x</a>')
@example(answer="[x](https://good.example.com\\@evil.com/)")
@example(answer="https://good.example.com\\@evil.com/")
@example(answer="see evil.com today")
@example(answer="exam\u00adple.com")
@example(answer='<a href="\\\\evil.com/x">x</a>')
@example(answer='<a href="/\\evil.com/y">x</a>')
@example(answer="Www.Evil.com/x")
@example(answer='<a href="//good\\.example.com">x</a>')  # host "good" to a browser
@example(answer="[docs](https\\://&#101vil.com)")  # host "&": "&#101" has no ";"
def test_every_link_a_renderer_makes_is_judged(answer: str) -> None:
    gfm = [host for link in gfm_links(answer) if (host := host_of(link)) is not None]
    refused = [host for host in gfm if not under(host, "good.example.com")]
    hosts = [host for link in rendered_links(answer) if (host := host_of(link)) is not None]
    blocked = [host for host in hosts if under(host, "evil.com")]
    # An answer whose links are all good holds nothing to judge: search among the rest.
    assume(refused or blocked)
    event(f"a GFM link refused: {bool(refused)}, a rendered link blocked: {bool(blocked)}")
    if refused:
        assert audit(ALLOW, answer), f"allowlist missed {refused} in {answer!r}"
    if blocked:
        assert audit(BLOCK, answer), f"blocklist missed {blocked} in {answer!r}"


CELLS = st.sampled_from(
    [
        "https://docs.good.example.com",
        "https://good.example.com/a_(b)",
        "[guide](https://good.example.com/guide)",
        "`//config.json`",
        "good.example.com",
        "plain words",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.lists(CELLS, min_size=2, max_size=2), min_size=1, max_size=4),
    outer=st.booleans(),
)
def test_compact_tables_of_allowed_links_raise_no_alarm(rows: list[list[str]], outer: bool) -> None:
    edge = "|" if outer else ""
    lines = [f"{edge}Name|Link{edge}", f"{edge}---|---{edge}"]
    lines += [edge + "|".join(row) + edge for row in rows]
    answer = "\n".join(lines)
    assert all(under(host_of(link) or "good.example.com", "good.example.com")
               for link in rendered_links(answer))  # fmt: skip
    assert audit(ALLOW, answer) == []


def test_comments_in_code_blocks_are_not_links() -> None:
    answer = (
        "Put this in `app.js`:\n\n```js\n// load the settings\n"
        'const settings = require("//config.json") // see //config.json\n'
        "fetch(`https://good.example.com/api`)\n```\n"
    )
    assert rendered_links(answer) == []
    assert audit(ALLOW, answer) == []
    assert audit(DomainPolicy.block(["config.json"]), answer) == ["config.json", "config.json"]


# What an ordinary answer under an allowlist holds besides its allowed links: none of it
# is a link to GFM, and none of it may raise an alarm.
ORDINARY = st.sampled_from(
    [
        "Edit `config.py` and settings.py, then read README.md.",
        "See [Contributing](CONTRIBUTING.md) and [the readme](../README.md).",
        "[Guide](<docs/guide.md>) and [API](./api.html#x)",
        "evil.com is not a site we use; nor is example.org.",
        "Write to admin@evil.com or help@python.org.",
        "Version 3.13, v1.2.3, e.g. U.S.",
        "The main.go and index.js files.",
        "```python\nimport os.path\nopen('setup.py')\n```",
        "https://münchen.de/ and https://MÜNCHEN.de/rathaus",
        "<https://good.example.com/a>",
        "[docs](https://good.example.com/docs)",
        "www.good.example.com/x",
        '<a href="https://good.example.com/">x</a>',
        "`curl https://good.example.com/install.sh | sh`",
        "git clone git@good.example.com:org/repo.git",
        "1. **Install**: pip install --index-url https://good.example.com/simple pkg",
    ]
)
ORDINARY_ALLOW = DomainPolicy.allow(["good.example.com", "xn--mnchen-3ya.de"])


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(ORDINARY, min_size=1, max_size=5), glue=st.sampled_from([" ", "\n", "\n\n"]))
@example(pieces=["config.py README.md settings.py evil.com"], glue=" ")
def test_an_ordinary_answer_raises_no_alarm_on_an_allowlist(pieces: list[str], glue: str) -> None:
    answer = glue.join(pieces)
    hosts = [host for link in gfm_links(answer) if (host := host_of(link)) is not None]
    assert all(under(host, "good.example.com") or host == "xn--mnchen-3ya.de" for host in hosts)
    assert audit(ORDINARY_ALLOW, answer) == []
