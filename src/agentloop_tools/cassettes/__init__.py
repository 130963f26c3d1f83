"""Cassettes of provider traffic: scrubbing, the readable file format, request matching.

One place for everything about cassette files, so the pytest plugin and the
command line read, scrub and match them the same way. Imports vcrpy's YAML
dependency; the core (``agentloop_tools.web``) never imports this package.
"""

from agentloop_tools._errors import CassetteSecretError, InputError, StreamError
from agentloop_tools.cassettes import _format as serializer
from agentloop_tools.cassettes._hygiene._guard import GuardedPersister, guard_recording, refusal_of
from agentloop_tools.cassettes._hygiene._leaks import Leak, cassette_leaks, find_leaks
from agentloop_tools.cassettes._hygiene._scrub import Scrubber
from agentloop_tools.cassettes._matching import (
    DEFAULT_VOLATILE_FIELDS,
    BodyMatcher,
    closest,
    describe_difference,
    summary,
)
from agentloop_tools.cassettes._reading._reader import (
    Problem,
    Reader,
    Reading,
    read_cassette,
    read_transcript_file,
)
from agentloop_tools.cassettes._reading._sse import rebuild

__all__ = [
    "DEFAULT_VOLATILE_FIELDS",
    "BodyMatcher",
    "CassetteSecretError",
    "GuardedPersister",
    "InputError",
    "Leak",
    "Problem",
    "Reader",
    "Reading",
    "Scrubber",
    "StreamError",
    "cassette_leaks",
    "closest",
    "describe_difference",
    "find_leaks",
    "guard_recording",
    "read_cassette",
    "read_transcript_file",
    "rebuild",
    "refusal_of",
    "serializer",
    "summary",
]
