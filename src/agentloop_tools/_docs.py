"""Where messages send a reader: pages of the published documentation.

A wheel user has no ``docs/`` folder, so messages link to the documentation URL the
package metadata declares (``[project.urls] Documentation``), with the page and the
section of the topic. Every topic's heading is checked against the docs by a test.
"""

from __future__ import annotations

import functools

DISTRIBUTION = "based-models-agentloop-tools"
# Used only when the metadata cannot be read (a source tree that was never installed).
FALLBACK_ROOT = "https://github.com/based-models/agentloop-tools/tree/main/docs"

# topic: (page, section anchor as the documentation host renders headings)
TOPICS: dict[str, tuple[str, str]] = {
    "testing": ("testing.md", ""),
    "recording": ("testing.md", "recording-and-re-recording"),
    "recording-without-provider": ("testing.md", "recording-without-a-live-provider"),
    "recording-in-ci": ("testing.md", "recording-in-ci"),
    "adopting": ("testing.md", "adopting-a-cassette-recorded-elsewhere"),
    "replay-environment": ("testing.md", "a-tool-result-that-differs-in-replay"),
    "search-backend": ("testing.md", "the-search-backend-in-replay-and-from-scripts"),
    "marker": ("testing.md", "marker"),
    "web-faults": ("testing.md", "web-faults"),
    "budgets": ("testing.md", "budgets"),
    "options": ("testing.md", "options-and-ini-keys"),
    "configuration": ("testing.md", "where-the-project-policy-is-read"),
    "connect": ("testing.md", "connecting-an-agent"),
    "assertions": ("testing.md", "assertion-helpers-agentloop_toolstesting"),
    "assert_cited": ("testing.md", "assert_cited"),
    "assert_not_cited": ("testing.md", "assert_not_cited"),
    "assert_searched": ("testing.md", "assert_searched"),
    "assert_no_violations": ("testing.md", "assert_no_violations"),
    "assert_links_grounded": ("testing.md", "assert_links_grounded"),
    "trajectories": ("testing.md", "trajectories"),
    "secrets": ("secrets.md", "while-recording"),
    "sarif": ("cli.md", "sarif-for-code-scanning"),
}


@functools.cache
def docs_root() -> str:
    """The documentation URL from the installed package's metadata."""
    from importlib import metadata

    try:
        urls = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return FALLBACK_ROOT
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "documentation" and url.strip():
            return str(url).strip().rstrip("/")
    return FALLBACK_ROOT


def docs_url(topic: str) -> str:
    """The URL of a topic's page and section (``TOPICS``)."""
    page, anchor = TOPICS[topic]
    return f"{docs_root()}/{page}" + (f"#{anchor}" if anchor else "")
