"""``agentloop-tools adopt``: date a cassette recorded elsewhere, leaving it as it was."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from agentloop_tools.cassettes._provenance import recorded_at
from tests.cli.helpers import run

REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "system": [{"type": "text", "text": "Be brief."}],
    "tool_choice": {"type": "auto"},
    "messages": [{"role": "user", "content": "Python docs?"}],
}
ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "See https://docs.python.org/3/"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
# As another project's vcrpy wrote it: string bodies, ``system`` as a list, no provenance.
FOREIGN = f"""\
interactions:
- request:
    body: '{json.dumps(REQUEST, separators=(",", ":"))}'
    headers:
      content-type:
      - application/json
    method: POST
    uri: https://api.anthropic.com/v1/messages
  response:
    body:
      string: '{json.dumps(ANSWER, separators=(",", ":"))}'
    headers:
      content-type:
      - application/json
    status:
      code: 200
      message: OK
version: 1
"""


@pytest.fixture
def foreign(tmp_path: Path) -> Path:
    path = tmp_path / "recorded_elsewhere.yaml"
    path.write_text(FOREIGN)
    return path


def test_adopt_writes_provenance_first_and_leaves_every_interaction_byte_for_byte(
    foreign: Path,
) -> None:
    result = run("adopt", foreign, "--recorded-at", "2026-11-30", "--note", "from chatlas")
    assert result.returncode == 0, result.stderr
    assert "1 interaction(s) are unchanged" in result.stdout
    text = foreign.read_text()
    assert text.startswith("provenance:\n  schema: 2\n  recorded_at: '2026-11-30T00:00:00Z'\n")
    assert text.endswith(FOREIGN)
    found = yaml.safe_load(text)["provenance"]
    assert found["source"] == "adopted"
    assert found["note"] == "from chatlas"
    assert found["providers"] == ["anthropic"]
    assert found["models"] == ["claude-sonnet-4-5"]
    assert "record_mode" not in found  # not known: read as unknown
    assert recorded_at(foreign) == dt.datetime(2026, 11, 30, tzinfo=dt.UTC)
    # The table shows it adopted.
    shown = run("evidence", foreign)
    assert "recorded: 2026-11-30T00:00:00Z" in shown.stdout
    assert "adopted" in shown.stdout


def test_a_cassette_with_provenance_is_refused_unless_forced(foreign: Path) -> None:
    assert run("adopt", foreign, "--recorded-at", "2026-11-30").returncode == 0
    before = foreign.read_bytes()
    again = run("adopt", foreign, "--recorded-at", "2026-10-01")
    assert again.returncode == 2
    assert "already has provenance (source: adopted); pass --force" in again.stderr
    assert foreign.read_bytes() == before
    forced = run("adopt", foreign, "--recorded-at", "2026-10-01", "--force")
    assert forced.returncode == 0, forced.stderr
    text = foreign.read_text()
    assert text.count("provenance:") == 1
    assert "recorded_at: '2026-10-01T00:00:00Z'" in text
    assert text.endswith(FOREIGN)


def test_crlf_line_endings_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "windows.yaml"
    path.write_bytes(FOREIGN.replace("\n", "\r\n").encode())
    assert run("adopt", path, "--recorded-at", "2026-11-30").returncode == 0
    data = path.read_bytes()
    assert data.endswith(FOREIGN.replace("\n", "\r\n").encode())
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert recorded_at(path) is not None


@pytest.mark.parametrize(
    ("name", "content", "arguments", "said"),
    [
        ("notes.yaml", "title: not a cassette\n", (), "not a vcrpy cassette"),
        ("cassette.json", '{"interactions": []}', (), "not a YAML cassette"),
        ("two.yaml", "---\n" + FOREIGN, (), "cannot be added at its top"),
        ("broken.yaml", "interactions: [\n", (), "not YAML that can be read"),
        ("bad-date.yaml", FOREIGN, ("--recorded-at", "30/11/2026"), "is not a date"),
        ("future.yaml", FOREIGN, ("--recorded-at", "2999-01-01"), "is in the future"),
        ("escape.yaml", FOREIGN, ("--note", "hi\x1b]0;pwned\x07"), "control character"),
        (
            "key.yaml",
            FOREIGN,
            ("--note", "sk-ant-api03-" + "A1b2C3d4E5" * 9 + "AA"),
            "shaped like a credential",
        ),
    ],
)
def test_what_adopt_refuses_is_left_unchanged_with_a_coded_exit(
    tmp_path: Path, name: str, content: str, arguments: tuple[str, ...], said: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    given = (
        arguments if "--recorded-at" in arguments else ("--recorded-at", "2026-11-30", *arguments)
    )
    result = run("adopt", path, *given)
    assert result.returncode == 2
    assert said in result.stderr
    assert "Nothing was written" in result.stderr
    assert "\x1b" not in result.stderr + result.stdout
    assert path.read_text() == content
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left


def test_a_file_that_is_not_there_or_not_regular_is_a_coded_refusal(tmp_path: Path) -> None:
    assert run("adopt", tmp_path / "missing.yaml", "--recorded-at", "2026-11-30").returncode == 2
    assert run("adopt", tmp_path, "--recorded-at", "2026-11-30").returncode == 2


def test_a_write_made_while_adopting_is_kept_not_replaced(
    foreign: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentloop_tools.cassettes import _adopt

    verify = _adopt._verify
    rerecorded = FOREIGN.replace("Python docs?", "Python 3.13 docs?")

    def meanwhile(*args: object) -> None:
        # A re-recording writes the cassette between adopt's read and its replace.
        foreign.write_text(rerecorded)
        verify(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_adopt, "_verify", meanwhile)
    result = run("adopt", foreign, "--recorded-at", "2026-11-30")
    assert result.returncode == 2
    assert "changed while it was being adopted" in result.stderr
    assert foreign.read_text() == rerecorded  # the other write is not lost
    assert [p.name for p in foreign.parent.iterdir()] == [foreign.name]  # no temporary left
