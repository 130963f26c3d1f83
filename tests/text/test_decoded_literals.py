"""String literals are judged as their decoders read them (a differential test, issue 16).

The oracles are the decoders themselves: ``json.loads``, Python's own parser
(``ast.literal_eval``) and PyYAML for double-quoted scalars. A URL is written with some
of its characters escaped in each one's syntax, in a literal inside an answer; the
decoder says what the program gets, the WHATWG parser where that goes. A blocklist must
flag every decoded link to a blocked host, an allowlist every decoded link it does not
admit, and an allowlist must raise no alarm on literals that decode to what it admits.
"""

from __future__ import annotations

import ast
import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy
from tests.text.test_rendered_links import audit, host_of, under

pytestmark = pytest.mark.core

ALLOW = DomainPolicy.allow(["good.example.com", "xn--mnchen-3ya.de"])
BLOCK = DomainPolicy.block(["evil.com"])


def admitted(host: str) -> bool:
    return under(host, "good.example.com") or host == "xn--mnchen-3ya.de"


URLS = st.sampled_from(
    [
        "https://evil.com/x",
        "https://sub.evil.com/collect",
        "https://good.example.com/docs",
        "https://docs.good.example.com/a?b=1",
        "https://münchen.de/rathaus",
        "//evil.com/x.js",
        "https://good.example.com.evil.com/",
    ]
)
# How each character may be written: as itself, or as an escape of that syntax.
JSON_WAYS = ["keep"] * 5 + ["u", "U-upper", "slash"]
PYTHON_WAYS = ["keep"] * 5 + ["x", "u", "U", "octal"]
YAML_WAYS = ["keep"] * 5 + ["x", "u", "U", "break"]


@st.composite
def escaped(draw: st.DrawFn, url: str, ways: list[str]) -> str:
    out = []
    for char in url:
        way = draw(st.sampled_from(ways))
        code = ord(char)
        if way == "u" or (way != "keep" and code > 0x7F and way not in ("slash", "break")):
            out.append(f"\\u{code:04x}")
        elif way == "U-upper":
            out.append(f"\\u{code:04X}")
        elif way == "slash" and char == "/":
            out.append("\\/")
        elif way == "x" and code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif way == "U":
            out.append(f"\\U{code:08x}")
        elif way == "octal" and code <= 0o377:
            out.append(f"\\{code:03o}")
        elif way == "break":
            out.append(char + "\\\n    ")
        elif code > 0x7F and ways is JSON_WAYS:
            out.append(f"\\u{code:04x}")  # what json.dumps writes by default
        else:
            out.append(char)
    return "".join(out)


def fenced(source: str, language: str, fence: bool, url: str) -> str:
    """``source`` in a code block, or as it is. In code, "//" starts no link (a comment or
    a path: see the limits in docs/domain-policies.md), so scheme-relative URLs stay out."""
    if fence and not url.startswith("//"):
        return f"```{language}\n{source}\n```"
    return source


def check(answer: str, decoded: str) -> None:
    host = host_of(decoded)
    if host is None:
        return
    if under(host, "evil.com"):
        assert audit(BLOCK, answer), f"blocklist missed {decoded!r} in {answer!r}"
    if not admitted(host):
        assert audit(ALLOW, answer), f"allowlist missed {decoded!r} in {answer!r}"
    else:
        assert audit(ALLOW, answer) == [], f"allowlist alarm on {decoded!r} in {answer!r}"


SETTINGS = settings(max_examples=max(300, settings().max_examples), deadline=None)


@SETTINGS
@given(data=st.data(), url=URLS)
def test_json_strings_are_judged_as_json_parsers_decode_them(data: st.DataObject, url: str) -> None:
    literal = data.draw(escaped(url, JSON_WAYS))
    document = '{"url": "' + literal + '", "n": 1}'
    decoded = json.loads(document)["url"]
    check(fenced(document, "json", data.draw(st.booleans()), url), decoded)


@SETTINGS
@given(data=st.data(), url=URLS, quote=st.sampled_from(['"', "'"]))
def test_python_and_js_strings_are_judged_as_python_decodes_them(
    data: st.DataObject, url: str, quote: str
) -> None:
    literal = data.draw(escaped(url, PYTHON_WAYS))
    source = f"fetch({quote}{literal}{quote})"
    decoded = ast.literal_eval(source.removeprefix("fetch(").removesuffix(")"))
    check("Run: " + fenced(source, "python", data.draw(st.booleans()), url), decoded)


@SETTINGS
@given(data=st.data(), url=URLS)
def test_yaml_double_quoted_scalars_are_judged_as_yaml_decodes_them(
    data: st.DataObject, url: str
) -> None:
    literal = data.draw(escaped(url, YAML_WAYS))
    document = f'site:\n  url: "{literal}"\n'
    decoded = yaml.safe_load(document)["site"]["url"]
    check(fenced(document, "yaml", data.draw(st.booleans()), url), decoded)


# Ordinary answers with backslashes, quotes and code: nothing here goes anywhere an
# allowlist does not admit, and nothing names evil.com.
ORDINARY = st.sampled_from(
    [
        "Open C:\\x2etools\\bin and run setup.exe.",
        'Set the path to "C:\\\\Users\\\\me\\\\x2econfig".',
        '```python\npattern = re.compile(r"https://good\\.example\\.com/\\d+")\n```',
        '```js\nconst re = new RegExp("^https://good\\\\.example\\\\.com/");\n```',
        '```json\n{"home": "https:\\/\\/good.example.com\\/", "city": "M\\u00fcnchen"}\n```',
        '{"u": "https://m\\u00fcnchen.de/rathaus"}',
        "It's done; don't worry, it's 'fine'.",
        'print("Done.\\n")',
        "{\\rtf1\\ansi Hello \\'e9t\\'e9 {\\b bold}\\par}",
        ":toc: left\n:docs: https://good.example.com/docs\n\nSee {docs}/intro.",
        "`Guide <https://good.example.com/guide>`_",
        "LaTeX: \\x \\u \\alpha and \\\\ newline.",
    ]
)


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(ORDINARY, min_size=1, max_size=4), glue=st.sampled_from([" ", "\n\n"]))
def test_ordinary_answers_with_escapes_raise_no_alarm(pieces: list[str], glue: str) -> None:
    answer = glue.join(pieces)
    assert audit(ALLOW, answer) == []
    assert audit(BLOCK, answer) == []
