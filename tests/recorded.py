"""The real cassettes other projects recorded against the real APIs, for the tests that
read them (``tests/transcript/test_real_cassettes.py``,
``tests/transcript/test_trajectory_real.py``).

The folder lives outside the repository (../shared/real-cassettes next to the checkout,
or $AGENTLOOP_TOOLS_REAL_CASSETTES; see its PROVENANCE.md): the tests skip when it is
absent, and nothing here copies it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from agentloop import Transcript

from agentloop_tools.cassettes import Reader
from tests.real_cassettes import REAL_CASSETTES

FOLDER = REAL_CASSETTES


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


def read_alone(folder: Path) -> Callable[[str, int], Transcript]:
    """A reader of one recorded interaction alone: the transcript the public reader makes
    of it, its last message the recorded response (JSON or a rebuilt stream).

    The interaction is written, as recorded, to a cassette of its own in ``folder``, so
    its request's history and its response are read exactly as ``agentloop-tools`` reads
    any cassette.
    """
    reader = Reader()

    @functools.cache
    def read(name: str, index: int) -> Transcript:
        path = folder / f"{index}-{name}"
        document = {"version": 1, "interactions": [interactions(name)[index]]}
        path.write_text(yaml.safe_dump(document), encoding="utf-8")
        reading = reader.cassette(path)
        assert reading.problems == []
        [transcript] = reading.transcripts
        assert transcript.messages[-1].role == "assistant"
        assert reading.interactions[0][-1] == 0, "the last message is the recorded response"
        return transcript

    return read
