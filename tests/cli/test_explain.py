"""``agentloop-tools explain``: the policy's reasons, printed, with the gate's exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.helpers import run


def test_explain_a_url_with_an_allowlist() -> None:
    result = run("explain", "--allow", "python.org", "https://docs.python.org/3/")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "DomainPolicy.allow(['python.org']) permits URL 'https://docs.python.org/3/'. "
        "Readings: WHATWG: docs.python.org, rule 'python.org', permitted.",
        "(policy from --allow)",
    ]


def test_a_refused_url_exits_1_and_says_why() -> None:
    result = run("explain", "https://python.org.evil.example/", "--allow", "python.org")
    assert result.returncode == 1
    assert "refuses URL 'https://python.org.evil.example/' (not on the allowlist)" in result.stdout
    assert "WHATWG: python.org.evil.example, no rule, refused" in result.stdout


def test_a_blocklist_and_a_text_from_stdin() -> None:
    text = "Read [this](https://en.wikipedia.org/wiki/X) and python.org"
    result = subprocess.run(
        [sys.executable, "-m", "agentloop_tools", "explain", "--block", "wikipedia.org", "-",
         "--format", "json"],
        input=text, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    [explanation] = json.loads(result.stdout)["explanations"]
    assert explanation["kind"] == "text"
    assert [(i["subject"], i["permitted"], i["verdict"]) for i in explanation["items"]] == [
        ("https://en.wikipedia.org/wiki/X", False, "blocked by 'wikipedia.org'"),
        ("python.org", True, "permitted"),
    ]
    first = explanation["items"][0]["readings"][0]
    assert (first["name"], first["host"], first["rule"]) == (
        "WHATWG",
        "en.wikipedia.org",
        "wikipedia.org",
    )


def test_the_project_policy_is_used(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.agentloop-tools]\nblock = ["medium.com"]\n')
    result = run("explain", "https://medium.com/@x/post", cwd=tmp_path)
    assert result.returncode == 1
    assert "blocked by 'medium.com'" in result.stdout
    assert result.stdout.splitlines()[-1] == (
        f"(policy from {tmp_path / 'pyproject.toml'} [tool.agentloop-tools])"
    )


def test_no_policy_is_a_usage_error(tmp_path: Path) -> None:
    result = run("explain", "https://x.example/", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("agentloop-tools explain: no policy: pass --allow")


def test_control_characters_never_reach_the_terminal() -> None:
    result = run("explain", "--block", "evil.example", "https://evil.example/\x1b]0;pwned\x07")
    assert result.returncode == 1
    assert "\x1b" not in result.stdout
    assert "\\x1b]0;pwned\\x07" in result.stdout


def test_readers_that_disagree_never_print_a_rule_beside_a_host_it_does_not_match() -> None:
    # WHATWG reads evil.net, RFC 3986 reads wikipedia.org: only the second meets the rule.
    url = "https://evil.net\\@wikipedia.org/x"
    result = run("explain", "--block", "wikipedia.org", url)
    assert result.returncode == 1, result.stderr
    assert "evil.net, rule 'wikipedia.org'" not in result.stdout
    assert "WHATWG: evil.net, no rule matches this host, refused" in result.stdout
    assert (
        "another reading of the same request is blocked: wikipedia.org matches rule 'wikipedia.org'"
    ) in result.stdout
    assert "RFC 3986: wikipedia.org, rule 'wikipedia.org', refused" in result.stdout
    [explanation] = json.loads(
        run("explain", "--block", "wikipedia.org", url, "--format", "json").stdout
    )["explanations"]
    first, second = explanation["readings"]
    assert (first["host"], first["host_rule"], second["host"], second["host_rule"]) == (
        "evil.net",
        None,
        "wikipedia.org",
        "wikipedia.org",
    )


def test_an_allowlist_host_its_rule_matches_is_not_shown_as_unmatched() -> None:
    # The allowlist refuses because the readers disagree, not for want of a rule.
    result = run("explain", "--allow", "wikipedia.org", "https://wikipedia.org\\@evil.net/x")
    assert result.returncode == 1, result.stderr
    assert "WHATWG: wikipedia.org, no rule" not in result.stdout
    assert "WHATWG: wikipedia.org, rule 'wikipedia.org' matches this host, refused" in (
        result.stdout
    )
    assert "an allowlist admits neither" in result.stdout
