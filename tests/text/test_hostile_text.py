"""Hostile shapes of answer text: results stay right and the work stays linear.

Speed is measured in benchmarks/bench_policy.py. Here each shape is also read at about
50,000 characters and at four times that, and the CPU time of the larger reading is
bound by the smaller one's: four times the text costs about four times the work when
the reading is linear and sixteen times when it is quadratic. A ratio measured in the
same run holds on a slow or loaded machine, where a fixed number of seconds does not.
An answer crafted to stall the audit is a way to switch it off.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from agentloop import Transcript
from agentloop.transcript import TextPart

from agentloop_tools.web import DomainPolicy

pytestmark = pytest.mark.core

N = 60_000
HOSTILE = {
    "unbalanced parentheses": ("https://a.example/" + ")" * N, 0, 0),
    "unclosed brackets": ("https://a.example/" + "[" * N, 0, 0),
    "links cut by brackets": ("a://x.example]" * (N // 14), N // 14, 0),
    "cut links before a far CJK stop": ("a://x.example]" * (N // 14) + "。", N // 14, 0),
    "one host of many labels": ("a." * (N // 2) + "b", 0, 0),
    "www over and over": ("www." * (N // 4), 1, 0),
    "mentions in a path": ("https://a.example/" + "b.com/" * (N // 6), 0, N // 6),
    "escaped mentions": ("https://a.example/?q=" + "%2Fb.com" * (N // 8), 0, N // 8),
    "colons": ("a:" * (N // 2), 0, 0),
    "a host longer than DNS allows": ("https://" + "a" * N + ".b.com/", 1, 1),
    # Markup read as renderers read it (issue 7): decoding, tables and code stay linear.
    "references": ("&#46;" * (N // 5), 0, 0),
    "encoded hosts": ("b&#46;com " * (N // 10), N // 10, N // 10),
    "escapes": ("\\." * (N // 2), 0, 0),
    "backticks": ("` " * (N // 2), 0, 0),
    "backtick runs of every length": (" ".join("`" * k for k in range(1, 340)), 0, 0),
    "fences": ("```\n" * (N // 4), 0, 0),
    "table rows": ("|a|b.com|\n|-|-|\n" * (N // 16), N // 16, N // 16),
    "e-mail local parts": ("b.com@" * (N // 6), 0, N // 6 - 1),
    # One link whose redirect target is blocked: the mentions inside it are that link.
    "nested redirects": ("https://a.example/?u=" + "https://b.com/" * (N // 14), 1, 1),
    "code spans with slashes": ("`//b.com` " * (N // 10), 0, N // 10),
    # Glued markdown links are separate links (issue 16), each read once.
    "glued links": ("[a](https://a.example/)[b](//b.com/)" * (N // 36), N // 36, N // 36),
    "parentheses opened and never closed": ("(https://a.example/" * (N // 19), 0, 0),
    # Commands an allowlist reads the targets of (issue 16): each word read once.
    "command words": ("ssh " * (N // 4), 0, 0),
    "commands with quotes": ("curl '" * (N // 6), 0, 0),
    "commands in a pipeline": ("| http " * (N // 7), 0, 0),
    "scp-like targets": ("a@b.com:x " * (N // 10), N // 10, N // 10),
    "ssh-config lines": ("\nHostName b.com" * (N // 15), N // 15, N // 15),
    # Text read as decoders read it (issue 16): literals, RTF, rST, AsciiDoc.
    "escaped string literals": ('"b\\x2ecom" ' * (N // 12), N // 12, N // 12),
    "unclosed string literals": ('"\\x2e' * (N // 5), 0, 0),
    "unclosed triple quotes": ('"""\\x2e' * (N // 7), 0, 0),
    "escaped quotes": ('\\"' * (N // 2), 0, 0),
    "apostrophes and escapes": ("it's \\x2e " * (N // 10), 0, 0),
    "escaped line breaks": ('"b\\\n .com" ' * (N // 11), N // 11, N // 11),
    "RTF escapes": ("{\\rtf1 " + "b\\'2ecom " * (N // 10) + "}", N // 10, N // 10),
    "RTF groups": ("{\\rtf1 " + "{\\b x}" * (N // 6), 0, 0),
    "rST targets": (".. _a: https://b.\n   com/\n" * (N // 26), N // 26, N // 26),
    "rST embedded URIs": ("`a <https://b. com/>`_ " * (N // 22), N // 22, N // 22),
    "AsciiDoc references": (":h: b.com\n" + "{h} " * (N // 4), N // 4 + 1, N // 4 + 1),
}


@pytest.mark.parametrize(("text", "allow_count", "block_count"), HOSTILE.values(), ids=HOSTILE)
def test_hostile_text_is_read_linearly_and_correctly(
    text: str, allow_count: int, block_count: int
) -> None:
    transcript = Transcript()
    transcript.add_user_message("q")
    transcript.add_assistant_message([TextPart(text=text)])
    # bare_hosts=True: the linkifier's reading of bare hosts is the most work.
    allow = DomainPolicy.allow(["a.example"], bare_hosts=True).audit(transcript)
    block = DomainPolicy.block(["b.com"]).audit(transcript)
    assert len(allow) == allow_count
    assert len(block) == block_count


LARGE = 200_000
# Linear reading: 4x. Quadratic: 16x. Headroom for noise between the two readings.
MOST_GROWTH = 8.0
# Below this a reading is harmless whatever its growth, and too short to time on a loaded
# machine (a 0.1 s reading measured 0.1 to 0.4 s with four other test runs beside it).
NOISE_FLOOR = 3.0
# A reading still running after this much CPU has stalled: the test fails, not hangs.
STALL_SECONDS = 60.0


class Stalled(Exception):
    pass


@contextmanager
def cpu_watchdog(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` of CPU time, so a stall fails instead of hanging."""
    if sys.platform == "win32":
        yield  # no CPU-time timer: the bound is checked after the fact only
        return

    def stalled(signum: int, frame: object) -> None:
        raise Stalled(f"still running after {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, stalled)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _answer(text: str) -> Transcript:
    transcript = Transcript()
    transcript.add_user_message("q")
    transcript.add_assistant_message([TextPart(text=text)])
    return transcript


def _cpu_seconds(policy: DomainPolicy, transcript: Transcript) -> float:
    started = time.process_time()
    with cpu_watchdog(STALL_SECONDS):
        policy.audit(transcript)
    return time.process_time() - started


@pytest.mark.cpu_bound
@pytest.mark.parametrize("shape", HOSTILE)
def test_hostile_text_of_200k_characters_is_audited_in_bounded_time(shape: str) -> None:
    # The same shape, repeated k and 4k times: the larger text is exactly four of the smaller.
    text = HOSTILE[shape][0]
    copies = -(-LARGE // 4 // len(text))
    small, large = _answer(text * copies), _answer(text * copies * 4)
    for policy in (
        DomainPolicy.allow(["a.example"]),
        DomainPolicy.allow(["a.example"], bare_hosts=True),
        DomainPolicy.block(["b.com"]),
    ):
        quarter = _cpu_seconds(policy, small)
        whole = _cpu_seconds(policy, large)
        bound = max(MOST_GROWTH * quarter, NOISE_FLOOR)
        assert whole < bound, (
            f"{shape}: {policy.mode} audit took {whole:.2f} s of CPU on {4 * len(text) * copies:,} "
            f"characters and {quarter:.2f} s on a quarter of them; "
            f"more than {MOST_GROWTH:g}x is not linear"
        )
