"""The messages of what a user hands us, and where ``since`` starts reading them.

Every reader takes a ``Transcript``, a ``ConversationResult`` or a list of messages,
and a ``since`` index that counts from the end when negative: read here, once.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentloop import Transcript
from agentloop.transcript import Message


def messages_of(transcript: Transcript | Sequence[Message]) -> Sequence[Message]:
    """The messages of a transcript, a conversation result or a list of messages."""
    if isinstance(transcript, Transcript):
        return transcript.messages
    inner = getattr(transcript, "transcript", None)
    if isinstance(inner, Transcript):
        return inner.messages
    if (
        isinstance(transcript, Sequence)
        and not isinstance(transcript, str | bytes)
        and all(isinstance(message, Message) for message in transcript)
    ):
        return transcript
    raise TypeError(
        "expected an agentloop Transcript, a ConversationResult or a list of "
        f"agentloop Message objects, got {type(transcript).__name__}."
    )


def start_index(since: int, length: int) -> int:
    """The index of the first message to read of ``length``: ``since``, or counted from
    the end when negative (never before the first). Not an int is a ``TypeError``."""
    if isinstance(since, bool) or not isinstance(since, int):
        raise TypeError(f"since must be a message index (int), got {since!r}.")
    return max(length + since, 0) if since < 0 else since
