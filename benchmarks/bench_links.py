"""Speed of links() and of the rendered answer in the HTML report, on big answers.

Run by hand (numbers go in the issue's note, not in unit tests):

    .venv/bin/python benchmarks/bench_links.py

links() reads an answer as the allowlist audit does, so it should run at the audit's
speed; the cases are ~1 MB of prose with a markdown link every ~90 characters, the
same with HTML links, and a hostile answer of unclosed ``<a`` tags and brackets
around links (the link-text lookback is bounded: it must stay linear).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from functools import partial

from agentloop import Transcript
from agentloop.transcript import TextPart

from agentloop_tools.web import DomainPolicy, links

SIZE = 1_000_000


def _answer(piece: Callable[[random.Random, int], str]) -> Transcript:
    rng = random.Random(7)
    parts: list[str] = []
    length = 0
    number = 0
    while length < SIZE:
        chunk = piece(rng, number)
        parts.append(chunk)
        length += len(chunk)
        number += 1
    transcript = Transcript()
    transcript.add_user_message("q")
    transcript.add_assistant_message((TextPart(text="".join(parts)),))
    return transcript


def _markdown(rng: random.Random, number: int) -> str:
    host = f"h{rng.randrange(50)}.example"
    return f"Some words of prose around it, [page {number}](https://{host}/p/{number}). "


def _html(rng: random.Random, number: int) -> str:
    return (
        f'Words and more words <a href="https://h{rng.randrange(50)}.example/{number}">page</a>. '
    )


def _hostile(rng: random.Random, number: int) -> str:
    return "<a " * 20 + "[" * 20 + f"](https://h.example/{number}) "


def _time(label: str, run: Callable[[], object]) -> None:
    best = min(_once(run) for _ in range(3))
    print(f"{label:<44} {best * 1000:8.1f} ms  {SIZE / best / 1e6:6.1f} MB/s")


def _once(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    policy = DomainPolicy.allow(["python.org"])
    for name, piece in (("markdown", _markdown), ("html", _html), ("hostile", _hostile)):
        transcript = _answer(piece)
        print(f"{name}: {len(links(transcript))} links")
        _time(f"links(), 1 MB {name}", partial(links, transcript))
        _time(f"allowlist audit, 1 MB {name} (for comparison)", partial(policy.audit, transcript))


if __name__ == "__main__":
    main()
