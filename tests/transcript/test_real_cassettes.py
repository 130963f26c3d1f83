"""Readers on real provider output: cassettes other projects recorded against the real APIs.

The folder lives outside the repository (../shared/real-cassettes next to the checkout,
or $AGENTLOOP_TOOLS_REAL_CASSETTES; see its PROVENANCE.md); these tests skip cleanly
when it is absent. Expected evidence comes from PROVENANCE.md's
oracle, computed independently from the raw response bodies. Interaction by interaction,
the JSON responses are compared; the whole-cassette test reads streamed (SSE) ones too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from agentloop import Transcript
from agentloop.transcript import TextPart

from agentloop_tools.cassettes import read_cassette
from agentloop_tools.testing import AgentloopEvidence
from agentloop_tools.web import DomainPolicy, Violation, citations, sources
from agentloop_tools.web._domains._url import locate
from tests.real_cassettes import needs_real_cassettes
from tests.recorded import FOLDER, interactions, provider_of, read_alone

pytestmark = [pytest.mark.core, needs_real_cassettes]


def oracles() -> dict[str, dict[str, Any]]:
    text = (FOLDER / "PROVENANCE.md").read_text(encoding="utf-8")
    found = {}
    for section in text.split("\n### `")[1:]:
        name = section.split("`", 1)[0]
        block = re.search(r"```json\n(.*?)\n```", section, re.DOTALL)
        if block:
            found[name] = json.loads(block.group(1))
    return found


ORACLES = oracles() if (FOLDER / "PROVENANCE.md").is_file() else {}


def json_body(interaction: dict[str, Any]) -> dict[str, Any] | None:
    body = interaction["response"]["body"]["string"]
    if isinstance(body, bytes):
        body = body.decode()
    if interaction["response"]["status"]["code"] != 200 or not body.strip().startswith("{"):
        return None
    return dict(json.loads(body))


CASES = [
    (name, index)
    for name in sorted(ORACLES)
    for index, interaction in enumerate(interactions(name))
    if provider_of(interaction["request"]["uri"]) and json_body(interaction) is not None
]
# The cases whose answer consulted a page, by the oracle (not by the code under test).
WITH_SOURCES = [
    (name, index) for name, index in CASES if ORACLES[name]["per_interaction"][index]["sources"]
]
# A host no real answer mentions: a blocklist of it must find nothing.
ABSENT = "agentloop-tools-absent.invalid"


def test_most_real_json_responses_are_covered() -> None:
    assert len(ORACLES) == 33
    assert len(CASES) >= 25, "JSON responses read through agentloop"
    # Not vacuous: most cases have pages to audit, from both providers.
    assert len(WITH_SOURCES) >= 20
    by_provider = [provider_of(interactions(n)[i]["request"]["uri"]) for n, i in WITH_SOURCES]
    assert by_provider.count("anthropic") >= 10
    assert by_provider.count("openai") >= 6


@pytest.fixture(scope="module")
def answer(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int], Transcript]:
    """The transcript the public reader makes of one recorded interaction, alone."""
    return read_alone(tmp_path_factory.mktemp("one-interaction"))


@pytest.mark.agentloop_06
@pytest.mark.parametrize(("name", "index"), CASES)
def test_sources_and_citations_match_the_oracle(
    name: str, index: int, answer: Callable[[str, int], Transcript]
) -> None:
    transcript = answer(name, index)
    expected = ORACLES[name]["per_interaction"][index]
    # The published contract: one entry per distinct URL, first appearance first.
    assert [s.url for s in sources(transcript, since=-1)] == expected["sources"]
    folded = [s.url for s in sources(transcript, since=-1, per_page=True)]
    assert folded == one_per_page(expected["sources"])
    assert [c.url for c in citations(transcript, since=-1)] == expected["citations"]


@pytest.mark.agentloop_06
@pytest.mark.parametrize(("name", "index"), CASES)
def test_auditing_real_output_never_raises_and_allowing_every_source_is_clean(
    name: str, index: int, answer: Callable[[str, int], Transcript]
) -> None:
    transcript = answer(name, index)
    consulted = [source.url for source in sources(transcript, since=-1)]
    cited = [citation.url for citation in citations(transcript, since=-1)]
    hosts = sorted({_host(url) for url in consulted})
    assert ABSENT not in answer_text(transcript).lower()
    # A blocklist of a host the answer never names finds nothing at all.
    assert DomainPolicy.block([ABSENT]).audit(transcript, since=-1) == []
    # An allowlist that admits no real host flags every page and citation, and only
    # links that are really in the answer's text.
    found = text_findings(transcript)
    nothing = DomainPolicy.allow([ABSENT]).audit(transcript, since=-1)
    assert {v.url for v in nothing if v.where != "text"} == {*consulted, *cited}
    assert {v.where for v in nothing} <= {"source", "citation", "text"}
    assert [v for v in nothing if v.where == "text"] == found
    # Allowing every host consulted leaves no page or citation, and of the text only
    # links to hosts off that list.
    kept = DomainPolicy.allow(hosts or [ABSENT]).audit(transcript, since=-1)
    assert [v for v in kept if v.where != "text"] == []
    assert all(v in found and not _on(_host(v.url), hosts) for v in kept), kept
    if consulted:
        block = DomainPolicy.block(hosts)
        flagged = {v.url for v in block.audit(transcript, since=-1) if v.where != "text"}
        assert flagged == set(consulted)


@pytest.mark.agentloop_06
def test_the_real_answers_hold_links_to_audit(answer: Callable[[str, int], Transcript]) -> None:
    """The text checks above are not vacuous: the answers carry links in their text."""
    found = {case: text_findings(answer(*case)) for case in CASES}
    assert sum(map(len, found.values())) >= 15
    assert sum(1 for findings in found.values() if findings) >= 5


def text_findings(transcript: Transcript) -> list[Violation]:
    """What an allowlist of no real host finds in the answer's text, checked to be there."""
    text = answer_text(transcript)
    last = len(transcript.messages) - 1
    found = [
        v for v in DomainPolicy.allow([ABSENT]).audit(transcript, since=-1) if v.where == "text"
    ]
    for violation in found:
        assert (violation.message_index, violation.rule) == (last, None), violation
        assert violation.span is not None, violation
        start, end = violation.span
        assert text[start:end] == violation.url, violation
    return found


def answer_text(transcript: Transcript) -> str:
    """The answer's text parts, joined as ``Violation.span`` counts them."""
    parts = transcript.messages[-1].content
    return "".join(part.text for part in parts if isinstance(part, TextPart))


def one_per_page(urls: list[str]) -> list[str]:
    """The oracle's URLs, one per page: the first URL of each, without utm_ parameters
    if one appeared so; a fragment or a tracking parameter does not make another page."""
    pages: dict[tuple[str, str, str], list[str]] = {}
    for url in urls:
        parts = urlsplit(url)
        host = (parts.hostname or "").removeprefix("www.")
        query = "&".join(p for p in parts.query.split("&") if p and not p.startswith("utm_"))
        pages.setdefault((host, parts.path or "/", query), []).append(url)
    return [next((u for u in seen if "utm_" not in u), seen[0]) for seen in pages.values()]


def _host(url: str) -> str:
    location = locate(url)
    assert location is not None, url
    return location.host


def _on(host: str, hosts: list[str]) -> bool:
    return any(host == rule or host.endswith("." + rule) for rule in hosts)


@pytest.mark.agentloop_06
@pytest.mark.parametrize("name", sorted(ORACLES))
def test_every_real_cassette_reads_whole_including_streams(name: str) -> None:
    """The cassette reader (JSON and SSE, both providers) agrees with the oracle."""
    reading = read_cassette(FOLDER / name)
    assert reading.problems == []
    evidence = AgentloopEvidence()
    for transcript in reading.transcripts:
        evidence.add(transcript)
    assert [s.url for s in evidence.sources()] == list(dict.fromkeys(ORACLES[name]["all_sources"]))
    assert [c.url for c in evidence.citations()] == ORACLES[name]["all_citations"]


@pytest.mark.agentloop_06  # the cassette reader builds agentloop's clients
def test_only_a_search_filtered_by_code_is_said_to_hide_its_citations() -> None:
    # 10 real cassettes carry a "caller" field, 9 of them {"type": "direct"}: a plain
    # search. Only a caller of code execution (or a code-execution block) shows dynamic
    # filtering, which returns no citations.
    from agentloop_tools.testing._assertions import _unobservable_citations
    from agentloop_tools.testing._conversations import read_conversations

    noted = []
    for path in sorted(FOLDER.glob("*.yaml")):
        reading = read_cassette(path)
        for transcript in reading.transcripts:
            if "dynamic filtering" in _unobservable_citations(read_conversations(transcript, 0)):
                noted.append(path.name)
    assert sorted(set(noted)) == [
        "pydantic-ai__test_anthropic_supported_model_uses_20260209_web_tools.yaml"
    ]
