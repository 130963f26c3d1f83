"""Every ``agentloop-tools`` command shown in the README, the docs and ``--help`` runs as
written, and again with its options moved before its paths (options in any order)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from agentloop.transcript import to_jsonl

from agentloop_tools.cli._arguments import EPILOG
from agentloop_tools.testing import anthropic_message, anthropic_text
from tests.cli.helpers import ANTHROPIC_DEMO, DEMO, REPO, run
from tests.transcripts import converse

SOURCES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# Paths in the examples, and the stand-ins they run against here.
STAND_INS = {
    "cassettes/test_agent/test_cites.yaml": str(ANTHROPIC_DEMO),
    "tests/cassettes/test_agent/test_cites.yaml": str(ANTHROPIC_DEMO),
    "tests/cassettes": str(DEMO),
    "cassettes/": str(DEMO),
}


def examples() -> list[tuple[str, str]]:
    found = []
    for source in SOURCES:
        in_code = console = False
        for line in source.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                in_code, console = not in_code, line.strip() == "```console"
            elif in_code and console and line.startswith("$ agentloop-tools "):
                found.append((source.name, line[2:].split("  #")[0].strip()))
            elif in_code and not console and line.startswith("agentloop-tools "):
                found.append((source.name, line.split("  #")[0].strip()))
    found += [("--help", line.split("  #")[0].strip()) for line in EPILOG.splitlines()
              if line.strip().startswith("agentloop-tools ")]  # fmt: skip
    return found


def test_the_examples_are_found() -> None:
    commands = {command.split()[1] for _, command in examples()}
    assert commands == {"audit", "evidence", "scan", "explain", "adopt", "diff"}


# Options that take no value.
FLAGS = {"--respect-gitignore", "--strict-baseline"}


def reordered(arguments: list[str]) -> list[str]:
    """The same command with every option (and its value) before the paths."""
    command, rest = arguments[0], arguments[1:]
    options, paths = [], []
    while rest:
        token = rest.pop(0)
        if token in FLAGS:
            options.append(token)
        elif token.startswith("-"):
            options += [token, rest.pop(0)]
        else:
            paths.append(token)
    return [command, *options, *paths]


@pytest.mark.parametrize(("source", "example"), examples())
@pytest.mark.parametrize("order", ["as written", "options first"])
def test_each_example_runs(source: str, example: str, order: str, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.agentloop-tools]\nallow = ["python.org", "realpython.com"]\n'
    )
    (tmp_path / "policy.toml").write_text('block = ["wikipedia.org"]\n')
    transcript = converse(
        "anthropic",
        [anthropic_message([anthropic_text("Hi.", cite=["https://docs.python.org/3/"])])],
    )
    (tmp_path / "run.jsonl").write_text(to_jsonl(transcript.messages))
    (tmp_path / "day.jsonl").write_text(transcript.model_dump_json() + "\n")  # a log
    arguments = shlex.split(example)[1:]
    arguments = [STAND_INS.get(argument, argument) for argument in arguments]
    if arguments[0] == "diff":  # the older side (old.yaml, base/...) is the demo, copied
        values = {arguments[i + 1] for i, a in enumerate(arguments[:-1]) if a.startswith("--")}
        for argument in arguments[1:]:
            if argument.startswith("-") or argument in values or Path(argument).is_absolute():
                continue
            where = tmp_path / argument
            if where.exists():
                continue
            where.parent.mkdir(parents=True, exist_ok=True)
            if argument.endswith(".yaml"):
                where.write_bytes(ANTHROPIC_DEMO.read_bytes())
            else:
                shutil.copytree(DEMO, where)
    if arguments[0] == "adopt":  # it writes the cassette it is given: a copy, never the demo's
        copy = tmp_path / "adopted.yaml"
        copy.write_bytes(ANTHROPIC_DEMO.read_bytes())
        arguments[1] = str(copy)
    if order == "options first":
        arguments = reordered(arguments)
    if "--baseline" in arguments:  # the file an earlier --write-baseline step wrote
        at = arguments.index("--baseline")
        paths = [a for a in arguments[1:] if not a.startswith("-") and a in STAND_INS.values()]
        run("audit", *paths, "--write-baseline", arguments[at + 1], cwd=tmp_path)
    result = run(*arguments, cwd=tmp_path)
    assert result.returncode in (0, 1), f"{source}: {example}\n{result.stderr}"
    assert "usage:" not in result.stderr
    if "-o" in arguments:
        assert (tmp_path / arguments[arguments.index("-o") + 1]).read_text()
    else:  # a clean github run too: its summary notice
        assert result.stdout


@pytest.mark.parametrize(
    "arguments",
    [
        ["audit", "--block", "wikipedia.org", str(DEMO)],
        ["audit", str(DEMO), "--block", "wikipedia.org"],
        ["audit", "--block", "wikipedia.org,medium.com", str(DEMO)],
        ["audit", "--block", "medium.com", str(ANTHROPIC_DEMO), "--block", "wikipedia.org",
         str(DEMO / "openai-web-search.yaml")],
    ],
    ids=["flag-first", "path-first", "commas", "repeated-and-interleaved"],
)  # fmt: skip
def test_options_in_any_order_repeated_or_comma_separated(arguments: list[str]) -> None:
    result = run(*arguments, "--format", "json")
    assert result.returncode == 1, result.stderr
    assert re.search(r'"mode": "block"', result.stdout)


def test_a_domain_left_where_a_path_goes_gets_a_hint() -> None:
    result = run("audit", str(DEMO), "--allow", "python.org", "docs.djangoproject.com")
    assert result.returncode == 1  # the demo's violations are found; the hint is beside them
    assert (
        "docs.djangoproject.com: no such file or directory. If "
        "'docs.djangoproject.com' is a domain: --allow and --block take one value each; write "
        "--allow a.com,docs.djangoproject.com or repeat the flag"
    ) in result.stdout


def test_the_demo_shows_one_page_one_line() -> None:
    import subprocess
    import sys

    demo = subprocess.run(
        [sys.executable, str(REPO / "examples" / "demo.py")],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    medium = "https://medium.com/@pydev/python-3-13-repl-tour-5f1e"
    # The page OpenAI cites with ?utm_source=openai is one source, one violation line.
    openai = demo.split("=== openai", 1)[1]
    consulted = openai.split("sources consulted:\n", 1)[1].split("citations:", 1)[0]
    assert consulted.splitlines() == [
        "  - https://docs.python.org/3/whatsnew/3.13.html  (What's New In Python 3.13)",
        f"  - {medium}  (A tour of the Python 3.13 REPL)",
    ]
    assert "4 violation(s) on 1 page(s)" in demo
    lines = demo.splitlines()
    at = lines.index(
        f"  - message 1 source/citation/text: {medium} (blocked by 'medium.com', 4 occurrences)"
    )
    assert lines[at + 1] == f"    written as: {medium}, {medium}?utm_source=openai, medium.com"
