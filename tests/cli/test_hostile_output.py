"""Recorded strings cannot drive the reader's terminal; recorded streams split as SSE does.

A cassette or transcript is written by whoever recorded it. Every human-readable
output shows its control characters as visible escapes; JSON keeps them exact;
JUnit stays well-formed XML.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tomllib
from pathlib import Path
from typing import Any, Literal
from xml.etree import ElementTree

import pytest
from agentloop.transcript import Message, TextPart, ToolCallPart, ToolResultPart, to_jsonl

from agentloop_tools import cli
from agentloop_tools._errors import UsageProblem
from agentloop_tools._visible import visible, xml_text
from agentloop_tools.cassettes._reading._sse import events
from agentloop_tools.testing import EvidenceAssertionError, assert_no_violations
from agentloop_tools.web._transcript._fetch_format import header

HOSTILE = "https://evil.example/\x1b]0;pwned\x07\x1b[2J\x9b31m\u202egnp.exe"
SHOWN = "https://evil.example/\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202egnp.exe"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def in_process(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(arg) for arg in args])
    return code, out.getvalue(), err.getvalue()


def _say(role: Literal["user", "assistant"], *parts: Any) -> Message:
    return Message(role=role, content=parts)


def _messages() -> list[Message]:
    page = header(HOSTILE, [], "Title \x1b[31mred", []) + "\n\nText."
    return [
        _say("user", TextPart(text="Read \x1b[2J this")),
        _say("assistant", ToolCallPart(id="c1", tool_name="web_fetch", arguments={"url": HOSTILE})),
        _say("user", ToolResultPart(call_id="c1", tool_name="web_fetch", content=page)),
        _say("assistant", TextPart(text="Done.")),
    ]


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "run\x1b[2J.jsonl"
    path.write_text(to_jsonl(_messages()))
    return path


def _clean(text: str) -> None:
    for char in RAW:
        assert char not in text, repr(text)


def test_the_audit_table_shows_control_characters_as_escapes(transcript: Path) -> None:
    code, out, err = in_process("audit", transcript, "--allow", "python.org")
    assert code == 1, err
    _clean(out + err)
    assert SHOWN in out
    assert "run\\x1b[2J.jsonl" in out


def test_github_annotations_show_control_characters_as_escapes(transcript: Path) -> None:
    code, out, _ = in_process("audit", transcript, "--allow", "python.org", "--format", "github")
    assert code == 1
    _clean(out)
    assert out.startswith("::error file=")
    assert SHOWN in out


def test_json_keeps_the_recorded_text_exact(transcript: Path) -> None:
    code, out, _ = in_process("audit", transcript, "--allow", "python.org", "--format", "json")
    assert code == 1
    [file] = json.loads(out)["files"]
    assert file["path"] == str(transcript)
    assert HOSTILE in {violation["url"] for violation in file["violations"]}


def test_junit_is_well_formed_xml_whatever_the_recorded_bytes(transcript: Path) -> None:
    code, out, _ = in_process("audit", transcript, "--allow", "python.org", "--format", "junit")
    assert code == 1
    root = ElementTree.fromstring(out.split("\n", 1)[1])
    [case] = root.iter("testcase")
    assert case.get("name") == str(transcript).replace("\x1b", "\\x1b")
    [failure] = case.iter("failure")
    assert SHOWN in (failure.text or "")


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\ufffe", "\ud800"])
def test_xml_text_leaves_nothing_xml_forbids(char: str) -> None:
    element = ElementTree.Element("e", a=xml_text(f"x{char}y"))
    element.text = xml_text(f"x{char}y")
    ElementTree.fromstring(ElementTree.tostring(element, encoding="unicode"))


def test_evidence_shows_control_characters_as_escapes(transcript: Path) -> None:
    code, out, err = in_process("evidence", transcript)
    assert code == 0, err
    _clean(out)
    assert f"      - {SHOWN}" in out
    assert "turn at message 0: Read \\x1b[2J this" in out


def test_scan_shows_control_characters_in_names_as_escapes(tmp_path: Path) -> None:
    os.symlink(tmp_path / "gone", tmp_path / "link\x1b]0;pwned\x07")
    code, out, err = in_process("scan", tmp_path)
    assert code == 2
    _clean(out + err)
    assert "link\\x1b]0;pwned\\x07" in out


def test_the_violation_report_pytest_shows_escapes_control_characters() -> None:
    from agentloop_tools.web import DomainPolicy

    with pytest.raises(EvidenceAssertionError) as failed:
        assert_no_violations(_messages(), DomainPolicy.allow(["python.org"]))
    _clean(str(failed.value))
    assert SHOWN in str(failed.value)


def test_the_violation_report_in_a_real_pytest_run_escapes_control_characters(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_hostile=f"""
        from agentloop.transcript import Message, TextPart, Citation
        from agentloop_tools.testing import assert_no_violations
        from agentloop_tools.web import DomainPolicy

        def test_answer():
            text = TextPart(text="See the page.", citations=(Citation(url={HOSTILE!r}),))
            assert_no_violations([Message(role="assistant", content=(text,))],
                                 DomainPolicy.allow(["python.org"]))
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    _clean(output)
    assert SHOWN in output


def test_the_html_report_escapes_control_characters_and_the_json_keeps_them(
    tmp_path: Path,
) -> None:
    from agentloop import Transcript

    from agentloop_tools._report._records import test_record, write_html, write_json
    from agentloop_tools.web import DomainPolicy

    transcript = Transcript()
    for message in _messages():
        transcript.messages.append(message)
    record = test_record(
        "test_x.py::test_\x1b[2J",
        [transcript],
        DomainPolicy.allow(["python.org"]),
        "pyproject.toml",
        None,
        outcome="failed",
        failure=None,
    )
    write_html(str(tmp_path / "report.html"), [record])
    page = (tmp_path / "report.html").read_text()
    _clean(page)
    assert "test_\\x1b[2J" in page
    write_json(str(tmp_path / "report.json"), [record])
    assert HOSTILE in set(_strings(json.loads((tmp_path / "report.json").read_text())))


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def test_visible_keeps_layout_only_where_asked() -> None:
    assert visible("a\tb\nc\rd") == "a\\x09b\\x0ac\\x0dd"
    assert visible("a\tb\nc\rd", layout=True) == "a\tb\nc\\x0dd"
    assert visible("plain text, café ✓") == "plain text, café ✓"


# --- the SSE reader ------------------------------------------------------------------


# JSON allows these raw inside a string; str.splitlines() breaks lines at each.
@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_stream_splits_at_cr_and_lf_only(separator: str) -> None:
    text = f"one{separator}two"
    payload = json.dumps({"type": "delta", "text": text}, ensure_ascii=False)
    for newline in ("\n", "\r\n", "\r"):
        body = f"event: delta{newline}data: {payload}{newline}{newline}data: [DONE]{newline}"
        assert events(body) == [{"type": "delta", "text": text}]


# --- version ----------------------------------------------------------------------------


def test_version_prints_the_version() -> None:
    from agentloop_tools import __version__

    for flag in ("--version", "-V"):
        code, out, err = in_process(flag)
        assert (code, err) == (0, "")
        assert out.startswith(f"agentloop-tools {__version__} (based-models-agentloop ")


@pytest.mark.parametrize(
    ("installed", "refused"),
    [("0.6.0rc1", True), ("0.5.9", True), ("0.6.0.dev3", True), ("0.6.1", False), ("0.10", False)],
)
def test_the_agentloop_version_check_reads_versions_as_packaging_does(
    monkeypatch: pytest.MonkeyPatch, installed: str, refused: bool
) -> None:
    import importlib.metadata

    from agentloop_tools.cli._inputs import require_agentloop_06

    monkeypatch.setattr(importlib.metadata, "version", lambda name: installed)
    if refused:
        with pytest.raises(UsageProblem, match=f"installed: {installed}"):
            require_agentloop_06()
    else:
        require_agentloop_06()


def test_packaging_is_a_declared_dependency() -> None:
    project = tomllib.loads(Path(__file__).parents[2].joinpath("pyproject.toml").read_text())
    assert any(dep.startswith("packaging") for dep in project["project"]["dependencies"])


@pytest.mark.parametrize(
    ("redirect", "output"),
    [(">&-", ()), (">/dev/full", ()), ("", ("-o", "/dev/full"))],
    ids=["stdout closed", "stdout full", "-o on a full disk"],
)
def test_an_output_that_cannot_be_written_is_one_line_on_stderr_and_no_traceback(
    transcript: Path, redirect: str, output: tuple[str, ...]
) -> None:
    import shlex
    import subprocess
    import sys

    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    command = [sys.executable, "-m", "agentloop_tools", "audit", "--block", "evil.example"]
    command += [*output, str(transcript)]
    shell = f"{shlex.join(command)} {redirect}"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr  # a failed write used to leave a traceback below
    assert "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr
