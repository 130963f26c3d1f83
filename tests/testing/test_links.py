"""links(), assert_cited and assert_links_grounded on answers that cite by linking.

Every transcript comes from a real agentloop agent (OpenRouter's Chat Completions,
scripted) calling our real web_search and web_fetch, or from a hosted-search turn.
"""

from __future__ import annotations

import dataclasses

import pytest

from agentloop_tools._docs import docs_url
from agentloop_tools.testing import (
    AgentloopEvidence,
    EvidenceAssertionError,
    anthropic_message,
    anthropic_search,
    anthropic_text,
    assert_cited,
    assert_links_grounded,
    assert_not_cited,
)
from agentloop_tools.web import DomainPolicy, Link, links
from tests.testing.client_agent import research
from tests.transcripts import converse

WHATSNEW = "https://docs.python.org/3/whatsnew/3.13.html"


def answer_links(answer: str, **options: object) -> list[Link]:
    return links(research(answer, **options))  # type: ignore[arg-type]


def test_a_link_is_consulted_whatever_its_spelling_of_the_page() -> None:
    answer = (
        f"New REPL ([notes]({WHATSNEW}#repl)); see "
        "[the tutorial](HTTP://WWW.docs.python.org/3/tutorial/?utm_source=chat) and "
        "[this](https://docs.python.org/3/made-up.html)."
    )
    found = answer_links(answer)
    assert [(link.url, link.text, link.consulted) for link in found] == [
        (f"{WHATSNEW}#repl", "notes", True),
        ("HTTP://WWW.docs.python.org/3/tutorial/?utm_source=chat", "the tutorial", True),
        ("https://docs.python.org/3/made-up.html", "this", False),
    ]
    assert all(link.message_index == 5 for link in found)
    assert [answer[link.start : link.end] for link in found] == [link.url for link in found]


def test_every_form_a_reader_follows_and_nothing_else() -> None:
    answer = (
        "See <https://a.example/auto>, https://b.example/bare, www.c.example/page, "
        '<a href="https://d.example/?x=1&amp;y=2">the <b>D</b> site</a> and '
        "[e](<https://e.example/angle>).\n"
        "Not links: README.md, evil.example, `curl f.example`, [up](../CONTRIBUTING.md), "
        "mail admin@g.example."
    )
    found = answer_links(answer, fetch=())
    assert [(link.url, link.text) for link in found] == [
        ("https://a.example/auto", None),
        ("https://b.example/bare", None),
        ("www.c.example/page", None),
        ("https://d.example/?x=1&y=2", "the D site"),
        ("https://e.example/angle", "e"),
    ]
    assert not any(link.consulted for link in found)


def test_the_redirect_a_fetch_followed_leads_to_the_page_read() -> None:
    found = answer_links("The [old tutorial](https://docs.python.org/3/old-tutorial.html).")
    assert [link.consulted for link in found] == [True]


def test_withheld_hits_and_refused_fetches_are_not_consulted() -> None:
    policy = DomainPolicy.allow(["python.org"])
    answer = (
        "[blog](https://medium.com/@someone/repl) and [evil](https://evil.example/page) "
        f"and [docs]({WHATSNEW})"
    )
    found = answer_links(answer, fetch=["https://evil.example/page"], policy=policy)
    assert [(link.url, link.consulted) for link in found] == [
        ("https://medium.com/@someone/repl", False),
        ("https://evil.example/page", False),
        (WHATSNEW, True),
    ]


def test_hosted_sources_count_and_since_reads_from_a_message_on() -> None:
    transcript = converse("anthropic", [anthropic_message([
        anthropic_search("python", ["https://docs.python.org/3/library/"]),
        anthropic_text("See https://docs.python.org/3/library/ and https://x.example/."),
    ])])  # fmt: skip
    found = links(transcript)
    assert [(link.url, link.consulted) for link in found] == [
        ("https://docs.python.org/3/library/", True),
        ("https://x.example/", False),
    ]
    assert links(transcript, since=-1) == found
    assert links(transcript, since=len(transcript.messages)) == []
    with pytest.raises(TypeError, match="since must be a message index"):
        links(transcript, since="1")  # type: ignore[arg-type]


def test_link_is_a_frozen_dataclass() -> None:
    link = answer_links(f"[docs]({WHATSNEW})")[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        link.url = "https://evil.example/"  # type: ignore[misc]


def test_assert_cited_counts_links_to_pages_the_tools_returned() -> None:
    transcript = research(
        f"The REPL is new ([notes]({WHATSNEW}), [tutorial](https://docs.python.org/3/tutorial/))."
    )
    assert_cited(transcript, "docs.python.org", WHATSNEW, "docs.python.org/3/tutorial")
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_cited(transcript, "realpython.com")
    lines = str(raised.value).splitlines()
    assert lines[0] == "assert_cited: 1 of 1 target(s) was not cited: 'realpython.com'."
    assert lines[2] == (
        "Looked for: citations the provider attached, and links in the answers to pages the "
        "tools returned (web_search hits, web_fetch pages, hosted sources)."
    )
    assert "Provider citations: none." in lines
    assert "Links to pages the tools returned (2):" in lines
    assert "'realpython.com' was searched but never cited; consulted:" in lines


def test_an_unconsulted_link_is_no_citation_but_assert_not_cited_sees_it() -> None:
    transcript = research("See [the docs](https://docs.python.org/3/made-up.html).")
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_cited(transcript, "docs.python.org/3/made-up.html")
    text = str(raised.value)
    assert (
        "'docs.python.org/3/made-up.html' was linked, but no tool of the conversation "
        "returned that page, so the link is not a citation:\n"
        "  - https://docs.python.org/3/made-up.html"
    ) in text
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_not_cited(transcript, "python.org")
    lines = str(raised.value).splitlines()
    assert lines[0] == "assert_not_cited: 1 of 1 target(s) was cited: 'python.org'."
    assert "Offending links in the answers (1):" in lines
    assert (
        "  - https://docs.python.org/3/made-up.html [the docs]  (message 5, not consulted)" in lines
    )
    assert_not_cited(transcript, "realpython.com")


def test_assert_not_cited_counts_a_consulted_link() -> None:
    transcript = research(f"[notes]({WHATSNEW})")
    with pytest.raises(EvidenceAssertionError, match=r"\(message 5, consulted\)"):
        assert_not_cited(transcript, WHATSNEW)


def test_grounded_links_pass_and_made_up_ones_are_listed_with_their_span() -> None:
    answer = (
        f"See [notes]({WHATSNEW}), [guide](https://docs.example.com/guide), "
        "https://given.example/page and [fake](https://docs.python.org/3/made-up.html)."
    )
    transcript = research(answer, prompt="Compare with https://given.example/page please.")
    assert_links_grounded(transcript, allow=["docs.example.com", "docs.python.org/3/made-up.html"])
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_links_grounded(transcript, allow=["docs.example.com"])
    start = answer.index("https://docs.python.org/3/made-up")
    lines = str(raised.value).splitlines()
    assert lines[0] == (
        "assert_links_grounded: 1 of 4 link was not consulted (no tool of the conversation "
        "returned the page, no user message gave it, no allow= target matches):"
    )
    assert lines[1] == (
        f"  - message 5, characters {start}-{start + 38}: "
        "https://docs.python.org/3/made-up.html [fake]"
    )
    assert lines[2].startswith("      ...")
    assert "made-up.html" in lines[2]
    assert "Pages the tools returned (4):" in lines
    assert lines[-1] == f"See {docs_url('assert_links_grounded')}."


def test_grounding_across_conversations_names_each_from_one() -> None:
    evidence = AgentloopEvidence()
    evidence.add(research(f"[notes]({WHATSNEW})"))
    evidence.add(research("[fake](https://made.example/up)"))
    with pytest.raises(EvidenceAssertionError, match=r"  - conversation 2, message 5, "):
        assert_links_grounded(evidence)
    assert_links_grounded(evidence, allow=["made.example"])
    assert_links_grounded(evidence, since=-1, allow=["https://made.example/up"])


def test_a_page_one_conversation_read_does_not_ground_another() -> None:
    evidence = AgentloopEvidence()
    evidence.add(research("Nothing to link."))
    evidence.add(research(f"[notes]({WHATSNEW})", pages={}))
    assert_links_grounded(evidence)  # the second's own search returned the page
    lonely = converse("anthropic", [anthropic_message([anthropic_text(f"See {WHATSNEW}.")])])
    evidence.add(lonely)
    with pytest.raises(EvidenceAssertionError, match="conversation 3, message 1"):
        assert_links_grounded(evidence)


@pytest.mark.parametrize("allow", ["docs.example.com", 3])
def test_allow_must_be_a_list_of_targets(allow: object) -> None:
    transcript = research("No links.")
    with pytest.raises(TypeError, match=r"allow= takes a list of targets"):
        assert_links_grounded(transcript, allow=allow)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"assert_links_grounded\(\) target"):
        assert_links_grounded(transcript, allow=["https://"])


def test_hostile_answers_come_back_bounded_and_right() -> None:
    junk = "<a " * 2000 + "[" * 2000 + "](https://h.example/x) " + "]" * 2000 + "\x1b[31m"
    found = links(converse("anthropic", [anthropic_message([anthropic_text(junk * 3)])]))
    assert [link.url for link in found] == ["https://h.example/x"] * 3
    assert all(link.text == "" for link in found)  # "[](url)": an empty link text
