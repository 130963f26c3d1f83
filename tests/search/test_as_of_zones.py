"""``as_of`` compares UTC days: offsets and RFC 9557 zone tags are read (issue 26, item 6).

``2024-06-30T22:00:00-05:00[America/New_York]`` is 03:00 UTC on July 1st: after
``as_of="2024-06-30"``. A plain date, or a time with neither offset nor zone, names
its own day as before; a zone that cannot be resolved makes the hit undated.
"""

from __future__ import annotations

import warnings
from datetime import date
from typing import Any

import pytest

from agentloop_tools.testing import ScriptedSearch, exa_results, searxng_results
from agentloop_tools.web import PointInTimeWarning, sources
from agentloop_tools.web._search._dates import published_on
from agentloop_tools.web.backends import SearchBackend, exa, searxng
from tests.search.helpers import EXA_KEY, call, results, run_agent, scripted_tool

JUNE_30, JULY_1 = date(2024, 6, 30), date(2024, 7, 1)


@pytest.mark.parametrize(
    ("published", "day"),
    [
        # The case: the ISO reading failed on the [zone] suffix.
        ("2024-06-30T22:00:00-05:00[America/New_York]", JULY_1),
        ("2024-06-30T22:00:00-05:00[!America/New_York]", JULY_1),
        ("2024-06-30T22:00:00-04:00[America/New_York][u-ca=hebrew]", JULY_1),
        ("2024-06-30T22:00:00-04:00[!America/New_York][!u-ca=gregory]", JULY_1),
        ("2024-06-30t22:00:00-04:00[america/new_york]", JULY_1),  # names ignore case
        ("2024-06-30T22:00:00-04:00[u-ca=japanese]", JULY_1),  # no zone, just a tag
        ("2024-06-30T22:00:00-04:00[x-vendor=abc][_private=1]", JULY_1),  # elective: ignored
        # A zone without an offset: the local time in that zone.
        ("2024-06-30T22:00:00[America/New_York]", JULY_1),
        ("2024-06-30T19:00:00[America/New_York]", JUNE_30),
        ("2024-07-01T08:00:00[Asia/Tokyo]", JUNE_30),
        ("2024-06-30T22:00:00[-05:00]", JULY_1),
        ("2024-06-30T23:30:00[Etc/UTC]", JUNE_30),
        # The offset wins when both are given (a disagreeing zone is resolved by it).
        ("2024-06-30T22:00:00+00:00[America/New_York]", JUNE_30),
        ("2024-06-30T22:00:00Z[America/New_York]", JUNE_30),
        ("2024-07-01T01:00:00+09:00[!America/New_York]", JUNE_30),
        # Offsets in the forms providers write.
        ("2024-06-30T22:00:00-05:00", JULY_1),
        ("2024-06-30T22:00:00.123456789-05:00", JULY_1),
        ("2024-06-30 22:00:00-0500", JULY_1),
        ("2024-06-30T22:00-05", JULY_1),
        ("2024-07-01T01:00:00+09:00", JUNE_30),
        ("2024-06-30T23:59:60Z", JUNE_30),
        ("2024-06-30 23:00:00 UTC", JUNE_30),
        # Today's reading: a plain date, or a time with neither offset nor zone.
        ("2024-06-30", JUNE_30),
        ("2024-06-30T23:30:00", JUNE_30),  # Brave's usual page_age
        ("2024-06-30T23:30:00.000", JUNE_30),
        ("2024-06-30 10:00 PM", JUNE_30),
        ("2024-06-30[America/New_York]", JUNE_30),
    ],
)
def test_a_timestamp_is_read_as_its_utc_day(published: str, day: date) -> None:
    assert published_on(published) == day


@pytest.mark.parametrize(
    "published",
    [
        "2024-06-30T22:00:00-05:00[Mars/Olympus_Mons]",  # no such zone
        "2024-06-30T22:00:00[Mars/Olympus_Mons]",
        "2024-06-30T22:00:00-05:00[../../etc/passwd]",
        "2024-06-30T22:00:00-05:00[/etc/localtime]",
        "2024-06-30T22:00:00-05:00[America/New_York][!x-vendor=abc]",  # critical, unknown
        "2024-06-30T22:00:00-05:00[u-ca=hebrew][America/New_York]",  # the zone comes first
        "2024-06-30T22:00:00-05:00[America/New_York][America/Chicago]",
        "2024-06-30T22:00:00-05:00[!u-ca=hebrew][u-ca=gregory]",  # a critical key twice
        "2024-06-30T22:00:00-05:00[America/New_York",  # unclosed
        "2024-06-30T22:00:00-05:00[]",
        "2024-06-30T22:00:00-05:00[U-CA=hebrew]",  # keys are lower case
        "2024-06-30T22:00:00 EST",  # a zone word we do not read
        "2024-06-30T22:00:00-25:00",
    ],
)
def test_a_zone_or_tag_that_cannot_be_read_surely_is_no_date(published: str) -> None:
    assert published_on(published) is None


def _search(backend: str, published: str, **options: Any) -> tuple[str, int]:
    hit = ("https://docs.python.org/3/", "Docs", "s", published)
    chosen: SearchBackend
    if backend == "exa":
        script = ScriptedSearch("exa", [exa_results([hit])])
        chosen = exa(EXA_KEY)
    else:
        script = ScriptedSearch("searxng", [searxng_results([hit])])
        chosen = searxng("http://127.0.0.1:8080")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PointInTimeWarning)
        tool = scripted_tool(script, chosen, as_of="2024-06-30", **options)
    transcript = run_agent(tool, [call("python")])
    [result] = results(transcript)
    return result.content, len(sources(transcript))


@pytest.mark.parametrize("backend", ["exa", "searxng"])
def test_a_zoned_hit_published_after_as_of_in_utc_is_dropped(backend: str) -> None:
    content, shown = _search(backend, "2024-06-30T22:00:00-05:00[America/New_York]")
    assert shown == 0
    assert "1 result published after 2024-06-30 dropped" in content


def test_an_unknown_zone_is_undated_and_follows_undated() -> None:
    published = "2024-06-30T10:00:00-05:00[Mars/Olympus_Mons]"
    content, shown = _search("exa", published)
    assert shown == 0
    assert "1 result without a publish date dropped" in content
    _, kept = _search("exa", published, undated="keep")
    assert kept == 1
