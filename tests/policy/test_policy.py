"""DomainPolicy's surface: construction, equality, audit order, seams, since, Violation."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agentloop import Citation, Source, Transcript
from agentloop.transcript import HostedToolPart, TextPart

from agentloop_tools.web import DomainPolicy, Violation

pytestmark = pytest.mark.core


def test_modes_domains_and_repr() -> None:
    policy = DomainPolicy.allow(["python.org", "Example.com/docs"])
    assert policy.mode == "allow"
    assert policy.domains == ("python.org", "Example.com/docs")
    assert repr(policy) == "DomainPolicy.allow(['python.org', 'Example.com/docs'])"
    many = DomainPolicy.block([f"d{i}.example" for i in range(7)])
    assert repr(many).endswith("... (7 in all)])")
    assert DomainPolicy.block(["a.example"]) == DomainPolicy.block(["a.example"])
    assert DomainPolicy.block(["a.example"]) != DomainPolicy.allow(["a.example"])
    assert len({DomainPolicy.block(["a.example"]), DomainPolicy.block(["a.example"])}) == 1


def test_bare_hosts_is_part_of_an_allowlist_s_identity() -> None:
    bare = DomainPolicy.allow(["python.org"], bare_hosts=True)
    assert bare.bare_hosts is True
    assert DomainPolicy.allow(["python.org"]).bare_hosts is False
    assert repr(bare) == "DomainPolicy.allow(['python.org'], bare_hosts=True)"
    assert bare != DomainPolicy.allow(["python.org"])
    assert len({bare, DomainPolicy.allow(["python.org"], bare_hosts=True)}) == 1
    assert pickle.loads(pickle.dumps(bare)) == bare
    with pytest.raises(TypeError, match="bare_hosts must be True or False"):
        DomainPolicy.allow(["python.org"], bare_hosts="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("build", [DomainPolicy.allow, DomainPolicy.block])
def test_an_empty_list_is_an_error_not_a_silent_no_op(build: object) -> None:
    assert callable(build)
    with pytest.raises(ValueError, match="needs at least one domain"):
        build([])


def test_the_constructor_is_private() -> None:
    with pytest.raises(TypeError, match=r"DomainPolicy.allow\(\[...\]\)"):
        DomainPolicy("allow", ())


def test_invalid_entries_are_refused_by_the_policy_too() -> None:
    with pytest.raises(
        ValueError, match=r"DomainPolicy\.block entry 'https://x\.org' has a scheme"
    ):
        DomainPolicy.block(["https://x.org"])


def test_match_reports_the_most_specific_rule_as_written() -> None:
    policy = DomainPolicy.block(["example.com", "Docs.Example.com", "example.com/private"])
    assert policy.match("https://a.docs.example.com/") == "Docs.Example.com"
    assert policy.match("https://example.com/private/x") == "example.com"
    assert policy.match("https://other.org/") is None


def test_non_strings_are_not_covered_and_do_not_raise() -> None:
    allow, block = DomainPolicy.allow(["a.example"]), DomainPolicy.block(["a.example"])
    for value in (None, 3, b"https://a.example/"):
        assert allow.permits(value) is False  # type: ignore[arg-type]
        assert block.permits(value) is True  # type: ignore[arg-type]
        assert allow.match(value) is None  # type: ignore[arg-type]


def assistant(*parts: TextPart | HostedToolPart) -> Transcript:
    transcript = Transcript()
    transcript.add_user_message("Please avoid blocked.example and use https://blocked.example/")
    transcript.add_assistant_message(list(parts))
    return transcript


def test_audit_reports_every_occurrence_in_transcript_order() -> None:
    transcript = assistant(
        HostedToolPart(
            kind="web_search",
            sources=(Source(url="https://blocked.example/1"), Source(url="https://ok.example/")),
        ),
        TextPart(text="First ", citations=(Citation(url="https://blocked.example/1"),)),
        TextPart(text="see blocked.example and https://blocked.example/2."),
    )
    violations = DomainPolicy.block(["blocked.example"]).audit(transcript)
    assert violations == [
        Violation("https://blocked.example/1", "source", 1, "blocked.example"),
        Violation("https://blocked.example/1", "citation", 1, "blocked.example"),
        Violation("blocked.example", "text", 1, "blocked.example", span=(10, 25)),
        Violation("https://blocked.example/2", "text", 1, "blocked.example", span=(30, 55)),
    ]
    # The user's own prompt is not the agent's doing.
    assert all(violation.message_index == 1 for violation in violations)


def test_violations_read_well() -> None:
    assert str(Violation("https://x.example/", "citation", 3, "x.example")) == (
        "message 3 citation: https://x.example/ (blocked by 'x.example')"
    )
    assert str(Violation("https://y.example/", "source", 1, None)) == (
        "message 1 source: https://y.example/ (not on the allowlist)"
    )
    with pytest.raises(AttributeError):
        Violation("u", "text", 0, None).url = "other"  # type: ignore[misc]


def test_text_is_read_as_stored_and_as_displayed_across_part_seams() -> None:
    # join_text shows "evil" + "example.com" as "evil example.com".
    transcript = assistant(TextPart(text="Ask evil"), TextPart(text="example.com today"))
    [violation] = DomainPolicy.block(["example.com"]).audit(transcript)
    assert violation.url == "example.com"
    text = "Ask evilexample.com today"
    assert violation.span is not None
    assert text[violation.span[0] : violation.span[1]] == "example.com"
    # A URL split by a citation seam is still read whole.
    split = assistant(TextPart(text="See https://exa"), TextPart(text="mple.com/x"))
    urls = [v.url for v in DomainPolicy.block(["example.com"]).audit(split)]
    assert urls == ["https://example.com/x"]


def test_since_limits_the_audit_and_counts_from_the_end_when_negative() -> None:
    transcript = assistant(TextPart(text="https://blocked.example/a"))
    transcript.add_user_message("again")
    transcript.add_assistant_message([TextPart(text="https://blocked.example/b")])
    policy = DomainPolicy.block(["blocked.example"])
    assert [v.message_index for v in policy.audit(transcript)] == [1, 3]
    assert [v.message_index for v in policy.audit(transcript, since=2)] == [3]
    assert [v.message_index for v in policy.audit(transcript, since=-1)] == [3]
    assert policy.audit(transcript, since=99) == []
    with pytest.raises(TypeError, match="since must be a message index"):
        policy.audit(transcript, since=1.5)  # type: ignore[arg-type]


def test_the_core_imports_no_test_tooling_and_reads_no_environment() -> None:
    code = (
        "import sys, agentloop_tools, agentloop_tools.web; "
        "bad = {'pytest', 'vcr', 'yaml', 'hypothesis'} & set(sys.modules); "
        "print(sorted(bad))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
    package = Path(__file__).parents[2] / "src" / "agentloop_tools"
    core = [
        *package.joinpath("web").rglob("*.py"),
        package / "__init__.py",
        package / "_secrets.py",
    ]
    # One exception, named: the blocklist engine's switch (AGENTLOOP_TOOLS_BLOCKLIST_ENGINE)
    # picks how rules' text is found, never a verdict (tests/text/test_literal_engines.py
    # holds both engines to the same findings), and refuses an unknown value loudly.
    engine_switch = 'os.environ.get(ENGINE_VARIABLE, "")'
    for path in core:
        text = path.read_text(encoding="utf-8")
        if path.name == "_literal_search.py":
            assert text.count("os.environ") == text.count(engine_switch) == 1, path
            text = text.replace(engine_switch, "")
        assert "os.environ" not in text, path
        assert "getenv" not in text, path


def test_a_single_string_is_refused_with_valid_python_as_the_fix() -> None:
    with pytest.raises(TypeError, match=re.escape("write DomainPolicy.allow(['python.org'])")):
        DomainPolicy.allow("python.org")
