"""Readers on real provider output: cassettes other projects recorded against the real APIs.

The folder lives outside the repository (../shared/real-cassettes next to the checkout,
or $AGENTLOOP_TOOLS_REAL_CASSETTES; see its PROVENANCE.md); these tests skip cleanly
when it is absent. Expected evidence comes from PROVENANCE.md's
oracle, computed independently from the raw response bodies. Streamed (SSE) bodies are
not read here: agentloop does not stream, so they cannot become transcripts yet.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from agentloop_tools.testing import AgentloopEvidence
from agentloop_tools.web import DomainPolicy, citations, sources
from agentloop_tools.web._url import locate
from tests.providers import read_responses

FOLDER = Path(
    os.environ.get("AGENTLOOP_TOOLS_REAL_CASSETTES")
    or Path(__file__).parents[3] / "shared" / "real-cassettes"
)
pytestmark = pytest.mark.skipif(
    not (FOLDER / "PROVENANCE.md").is_file(), reason=f"real cassettes not found at {FOLDER}"
)


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


def provider_of(uri: str) -> str | None:
    if "/messages" in uri:
        return "anthropic"
    if uri.rstrip("/").endswith("/responses"):
        return "openai"
    return None


@functools.cache
def interactions(name: str) -> list[dict[str, Any]]:
    data = yaml.safe_load((FOLDER / name).read_text(encoding="utf-8"))
    return list(data["interactions"])


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


def test_most_real_json_responses_are_covered() -> None:
    assert len(ORACLES) == 33
    assert len(CASES) >= 25, "JSON responses read through agentloop"


@pytest.mark.parametrize(("name", "index"), CASES)
def test_sources_and_citations_match_the_oracle(name: str, index: int) -> None:
    interaction = interactions(name)[index]
    provider = provider_of(interaction["request"]["uri"])
    assert provider is not None
    transcript = read_responses(provider, [json_body(interaction) or {}])
    expected = ORACLES[name]["per_interaction"][index]
    assert [source.url for source in sources(transcript, raw=True)] == expected["sources"]
    assert [source.url for source in sources(transcript)] == one_per_page(expected["sources"])
    assert [citation.url for citation in citations(transcript)] == expected["citations"]


@pytest.mark.parametrize(("name", "index"), CASES)
def test_auditing_real_output_never_raises_and_allowing_every_source_is_clean(
    name: str, index: int
) -> None:
    interaction = interactions(name)[index]
    provider = provider_of(interaction["request"]["uri"]) or "openai"
    transcript = read_responses(provider, [json_body(interaction) or {}])
    consulted = [source.url for source in sources(transcript, raw=True)]
    hosts = sorted({_host(url) for url in consulted})
    if not hosts:
        return
    allow = DomainPolicy.allow(hosts)
    assert [v for v in allow.audit(transcript) if v.where != "text"] == []
    block = DomainPolicy.block(hosts)
    flagged = {v.url for v in block.audit(transcript) if v.where != "text"}
    assert flagged == set(consulted)


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


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_every_real_cassette_reads_whole_including_streams(name: str) -> None:
    """The cassette reader (JSON and SSE, both providers) agrees with the oracle."""
    from agentloop_tools.cassettes import read_cassette

    reading = read_cassette(FOLDER / name)
    assert reading.problems == []
    evidence = AgentloopEvidence()
    for transcript in reading.transcripts:
        evidence.add(transcript)
    assert [s.url for s in evidence.sources()] == one_per_page(ORACLES[name]["all_sources"])
    assert [c.url for c in evidence.citations()] == ORACLES[name]["all_citations"]
