"""``agentloop-tools evidence`` shows where and when a cassette came from."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import ANTHROPIC_DEMO, run
from tests.plugin.scenarios import LEAKY_TEST


def test_a_recorded_cassette_shows_its_provenance(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("LLM_PROVIDER", raising=False)
    pytester.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    pytester.runpytest("--record-mode=once").assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_agent" / "test_agent.yaml"
    recorded = yaml.safe_load(cassette.read_text())["provenance"]

    table = run("evidence", cassette)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0] == str(cassette)
    assert lines[1] == f"  recorded: {recorded['recorded_at']} (0 day(s) ago)"
    assert lines[2].startswith(f"  with: agentloop-tools {recorded['agentloop_tools']}, ")
    assert f"agentloop {recorded['agentloop']}" in lines[2]
    assert re.fullmatch(r"  providers anthropic; (models .+; )?record mode once", lines[3])
    # LEAKY_TEST answers from a script: the evidence says so, never looks live.
    assert lines[4] == (
        "  source: scripted (from http_client= of the test; the script claims model "
        "claude-sonnet-4-5): no live provider answered"
    )

    document = json.loads(run("evidence", cassette, "--format", "json").stdout)
    [file] = document["files"]
    assert file["provenance"] == recorded
    assert file["age_days"] == 0


def test_an_old_recording_shows_its_age(tmp_path: Path) -> None:
    cassette = tmp_path / "old.yaml"
    block = (
        "provenance:\n  recorded_at: '2020-01-01T00:00:00Z'\n  record_mode: once\n"
        "  agentloop: 0.6.1\n  providers: [anthropic]\n"
    )
    cassette.write_text(block + ANTHROPIC_DEMO.read_text())
    result = run("evidence", cassette)
    assert result.returncode == 0, result.stderr
    line = result.stdout.splitlines()[1]
    assert re.fullmatch(r"  recorded: 2020-01-01T00:00:00Z \((\d+) day\(s\) ago\)", line)
    assert int(line.split("(")[1].split()[0]) > 365 * 5


def test_a_cassette_without_provenance_is_of_unknown_age() -> None:
    result = run("evidence", ANTHROPIC_DEMO)
    assert result.returncode == 0
    assert result.stdout.splitlines()[1] == (
        "  recorded: unknown (no provenance in the cassette: age unknown; re-record it with "
        "the agentloop-tools plugin to date it)"
    )
    [file] = json.loads(run("evidence", ANTHROPIC_DEMO, "--format", "json").stdout)["files"]
    assert (file["provenance"], file["age_days"]) == (None, None)


def test_recorded_provenance_cannot_reach_the_terminal_raw(
    tmp_path: Path,
) -> None:
    cassette = tmp_path / "hostile.yaml"
    block = (
        "provenance:\n  recorded_at: '2026-01-01T00:00:00Z'\n"
        '  record_mode: "once\\e]0;pwned\\a"\n  models: ["m\\e[2J"]\n'
    )
    cassette.write_text(block + ANTHROPIC_DEMO.read_text())
    result = run("evidence", cassette)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    assert "\\x1b]0;pwned\\x07" in result.stdout
