"""Cassettes of provider traffic: scrubbing, the readable file format, request matching.

One place for everything about cassette files, so the pytest plugin and the
command line read, scrub and match them the same way. Imports vcrpy's YAML
dependency; the core (``agentloop_tools.web``) never imports this package.
"""

from agentloop_tools._errors import CassetteSecretError, InputError, StreamError
from agentloop_tools.cassettes._hygiene._scrub import Scrubber
from agentloop_tools.cassettes._matching import BodyMatcher, closest, summary
from agentloop_tools.cassettes._reading._reader import (
    CassetteReading,
    Problem,
    Reader,
    read_cassette,
    read_transcript_file,
)
from agentloop_tools.cassettes._reading._sse import rebuild

__all__ = [
    "BodyMatcher",
    "CassetteReading",
    "CassetteSecretError",
    "InputError",
    "Problem",
    "Reader",
    "Scrubber",
    "StreamError",
    "closest",
    "read_cassette",
    "read_transcript_file",
    "rebuild",
    "summary",
]
