"""Speed of the domain policy: lookups, audits and construction against huge lists.

Run by hand (numbers go in the issue's closing note, not in unit tests):

    .venv/bin/python benchmarks/bench_policy.py [--cpu]

``--cpu`` times with the process's CPU time instead of the wall clock: on a machine
shared with other work, wall-clock times measure the other work too.

Targets (issue #2): ``permits``/``match`` <= 5 us per URL at 100,000 rules; auditing
~1 MB of answer text with 100,000 block rules <= 2x the time with 10 rules and
>= 20 MB/s; building a policy from 100,000 domains < 1 s. Issue #11: >= 20 MB/s on
1 MB of link-dense text (a link or host-like word every ~90 characters) against
100,000 block rules. A blocklist's first audit also builds its rule finder (an
Aho-Corasick automaton of the rules): reported on its own line.

Issue 30's rows (``ROWS``, run by ``bench_rows.py``, which can run them against two
source trees) time each audit in CPU time against ``re.findall(r"https?://\\S*")`` over
the same text in the same process, so a loaded machine slows both alike.
"""

from __future__ import annotations

import random
import re
import sys
import time
from collections.abc import Callable
from functools import cache, partial
from typing import Any

from agentloop import Transcript
from agentloop.transcript import TextPart

from agentloop_tools.web import DomainPolicy

WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "be",
    "by",
    "this",
    "are",
    "from",
    "or",
    "an",
    "which",
    "population",
    "city",
    "report",
    "data",
    "according",
    "latest",
    "census",
    "estimate",
    "official",
    "growth",
    "2024",
    "2025",
    "percent",
    "million",
    "metropolitan",
    "area",
    "density",
    "Tokyo",
    "Osaka",
    "Japan",
]


def domains(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    tlds = ["com", "org", "net", "io", "co.uk", "de", "jp"]
    names: set[str] = set()
    while len(names) < count:
        label = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(5, 12)))
        names.add(f"{label}.{rng.choice(tlds)}")
    return sorted(names)


def answer_text(size: int, hosts: list[str], seed: int) -> str:
    """Prose with a link, a markdown link or a bare mention every few sentences."""
    rng = random.Random(seed)
    chunks: list[str] = []
    total = 0
    while total < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize()
        roll = rng.random()
        host = rng.choice(hosts)
        if roll < 0.15:
            sentence += f" (see https://www.{host}/wiki/Page_(x)?utm_source=openai)"
        elif roll < 0.25:
            sentence += f" [{host}](https://{host}/articles/{rng.randint(1, 999)})"
        elif roll < 0.35:
            sentence += f" according to {host}"
        chunks.append(sentence + ". ")
        total += len(chunks[-1])
    return "".join(chunks)


FILES = ["setup.py", "config.yaml", "README.md", "index.html", "data.json", "main.rs", "app.js"]
CJK = ["东京的人口。", "大阪、京都。", "参见以下资料：", "人口密度（2024年）。", "出典は以下。"]


def dense_text(size: int, hosts: list[str], seed: int) -> str:
    """Answer text with a link or host-like word every ~100 characters (issue #11).

    Markdown links, ``www.`` hosts, bare hosts, file names, version numbers, e-mail
    addresses and CJK sentences with full-width punctuation, mixed with short prose.
    """
    rng = random.Random(seed)
    chunks: list[str] = []
    total = 0
    while total < size:
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
        host = rng.choice(hosts)
        roll = rng.random()
        if roll < 0.2:
            piece = f"[{host}](https://{host}/articles/{rng.randint(1, 999)}?utm_source=openai)"
        elif roll < 0.35:
            piece = f"www.{host}/news"
        elif roll < 0.5:
            piece = f"according to {host},"
        elif roll < 0.6:
            piece = f"edit {rng.choice(FILES)} first"
        elif roll < 0.7:
            piece = f"version {rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
        elif roll < 0.78:
            piece = f"write to press@{host}"
        elif roll < 0.9:
            piece = rng.choice(CJK) + f"https://{host}/ja/{rng.randint(1, 99)}。"
        else:
            piece = f"(see https://www.{host}/wiki/Page_(x))"
        chunks.append(f"{words} {piece}. ")
        total += len(chunks[-1])
    return "".join(chunks)


def _permits_all(policy: DomainPolicy, urls: list[str]) -> list[bool]:
    return [policy.permits(url) for url in urls]


CLOCK = time.process_time if "--cpu" in sys.argv[1:] else time.perf_counter


def best_of(repeats: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        started = CLOCK()
        action()
        times.append(CLOCK() - started)
    return min(times)


def main() -> None:
    big = domains(100_000, seed=1)
    small = big[:10]
    mentioned = domains(2_000, seed=2)  # mostly not on any list: the common case

    build = best_of(3, lambda: DomainPolicy.block(big))
    print(f"build a policy from 100,000 domains: {build * 1000:.0f} ms")

    urls = [f"https://docs.{host}/path/{i}?q=1" for i, host in enumerate(mentioned * 5)]
    for mode in ("allow", "block"):
        for rules in (small, big):
            policy = DomainPolicy.allow(rules) if mode == "allow" else DomainPolicy.block(rules)
            elapsed = best_of(5, partial(_permits_all, policy, urls))
            per_url = elapsed / len(urls) * 1e6
            print(f"permits, {mode}, {len(rules):>7,} rules: {per_url:.2f} us/URL")

    text = answer_text(1_000_000, mentioned + big[:50], seed=3)
    transcript = Transcript()
    transcript.add_user_message("question")
    transcript.add_assistant_message([TextPart(text=text)])
    megabytes = len(text.encode()) / 1e6
    results = {}
    for mode in ("allow", "block"):
        for rules in (small, big):
            policy = DomainPolicy.allow(rules) if mode == "allow" else DomainPolicy.block(rules)
            elapsed = best_of(7, partial(policy.audit, transcript))
            found = len(policy.audit(transcript))
            results[(mode, len(rules))] = elapsed
            print(
                f"audit {megabytes:.2f} MB, {mode}, {len(rules):>7,} rules: "
                f"{elapsed * 1000:.0f} ms ({megabytes / elapsed:.1f} MB/s), {found} violations"
            )
    for mode in ("allow", "block"):
        ratio = results[(mode, 100_000)] / results[(mode, 10)]
        print(f"audit {mode}: 100,000 rules / 10 rules = {ratio:.2f}x")

    fresh = DomainPolicy.block(big)
    small_transcript = Transcript()
    small_transcript.add_assistant_message([TextPart(text="see https://example.org/")])
    first = best_of(1, partial(fresh.audit, small_transcript))
    print(
        f"first audit of a blocklist of 100,000 domains (builds its rule finder): "
        f"{first * 1000:.0f} ms"
    )

    # Link-dense text (issue #11): target >= 20 MB/s with 100,000 rules.
    dense = dense_text(1_000_000, mentioned + big[:50], seed=4)
    dense_transcript = Transcript()
    dense_transcript.add_user_message("question")
    dense_transcript.add_assistant_message([TextPart(text=dense)])
    megabytes = len(dense.encode()) / 1e6
    for mode in ("allow", "block"):
        policy = DomainPolicy.allow(big) if mode == "allow" else DomainPolicy.block(big)
        elapsed = best_of(7, partial(policy.audit, dense_transcript))
        found = len(policy.audit(dense_transcript))
        print(
            f"audit {megabytes:.2f} MB link-dense, {mode}, 100,000 rules: "
            f"{elapsed * 1000:.0f} ms ({megabytes / elapsed:.1f} MB/s), {found} violations"
        )
    # The same text when every link is to a blocked host: the rule-out then reads every
    # token, so this is the blocklist's slowest case (documented, not a target).
    breached = dense_text(1_000_000, big[:2000], seed=4)
    breached_transcript = Transcript()
    breached_transcript.add_user_message("question")
    breached_transcript.add_assistant_message([TextPart(text=breached)])
    megabytes = len(breached.encode()) / 1e6
    policy = DomainPolicy.block(big)
    elapsed = best_of(7, partial(policy.audit, breached_transcript))
    found = len(policy.audit(breached_transcript))
    print(
        f"audit {megabytes:.2f} MB link-dense, every link blocked, 100,000 rules: "
        f"{elapsed * 1000:.0f} ms ({megabytes / elapsed:.1f} MB/s), {found} violations"
    )

    # Hostile shapes: each must stay linear (200,000 characters in well under a second).
    size = 200_000
    hostile = {
        "unbalanced parentheses": "https://a.example/" + ")" * size,
        "links cut by brackets, far CJK stop": "a://x.example]" * (size // 14) + "。",
        "one host of many labels": "a." * (size // 2) + "b",
        "mentions in a path": "https://a.example/" + "b.com/" * (size // 6),
        "escaped mentions": "https://a.example/?q=" + "%2Fb.com" * (size // 8),
        "www over and over": "www." * (size // 4),
    }
    block = DomainPolicy.block(["b.com", *big[:1000]])
    for name, hostile_text in hostile.items():
        hostile_transcript = Transcript()
        hostile_transcript.add_assistant_message([TextPart(text=hostile_text)])
        elapsed = best_of(1, partial(block.audit, hostile_transcript))
        print(f"hostile text, {name}: {elapsed * 1000:.0f} ms for {len(hostile_text):,} chars")


# --- issue 30's rows: each a ratio to a reference timed in the same process ----------
REFERENCE = re.compile(r"https?://\S*")
type Row = dict[str, Any]


def cpu_best(repeats: int, action: Callable[[], object]) -> float:
    """The least CPU time of ``repeats`` runs (the process's, not the wall clock's)."""
    times = []
    for _ in range(repeats):
        started = time.process_time()
        action()
        times.append(time.process_time() - started)
    return min(times)


@cache
def _big() -> list[str]:
    return domains(100_000, seed=1)


def _as_transcript(text: str) -> Transcript:
    transcript = Transcript()
    transcript.add_user_message("question")
    transcript.add_assistant_message([TextPart(text=text)])
    return transcript


def audit_row(policy: DomainPolicy, text: str, repeats: int = 7) -> Row:
    """One audit of ``text``, after a first one (which builds the rule finder)."""
    transcript = _as_transcript(text)
    started = time.process_time()
    found = len(policy.audit(transcript))
    first = time.process_time() - started
    elapsed = cpu_best(repeats, partial(policy.audit, transcript))
    reference = cpu_best(max(repeats, 25), partial(REFERENCE.findall, text))  # a few ms: noisy
    megabytes = len(text.encode()) / 1e6
    return {
        "ms": elapsed * 1000,
        "mb_per_s": megabytes / elapsed,
        "reference_ms": reference * 1000,
        "ratio": elapsed / reference,
        "note": f"{found} violations; first audit {first * 1000:.0f} ms",
    }


def _dense() -> str:
    return dense_text(1_000_000, domains(2_000, seed=2) + _big()[:50], seed=4)


def _prose() -> str:
    return answer_text(1_000_000, domains(2_000, seed=2) + _big()[:50], seed=3)


def row_link_dense_allow() -> Row:
    return audit_row(DomainPolicy.allow(_big()), _dense())


def row_prose_allow() -> Row:
    return audit_row(DomainPolicy.allow(_big()), _prose())


def row_link_dense_block() -> Row:
    return audit_row(DomainPolicy.block(_big()), _dense())


def row_every_link_blocked() -> Row:
    return audit_row(DomainPolicy.block(_big()), dense_text(1_000_000, _big()[:2000], seed=4))


def row_prose_block() -> Row:
    return audit_row(DomainPolicy.block(_big()), _prose())


def row_mentions_in_a_path() -> Row:
    """The slowest hostile shape: one URL whose path mentions b.com 33,000 times."""
    text = "https://a.example/" + "b.com/" * 33_333
    return audit_row(DomainPolicy.block(["b.com", *_big()[:1000]]), text, repeats=3)


ROWS: dict[str, Callable[[], Row]] = {
    "link-dense MB, allowlist, 100,000 rules": row_link_dense_allow,
    "prose MB, allowlist, 100,000 rules": row_prose_allow,
    "link-dense MB, blocklist, 100,000 rules": row_link_dense_block,
    "link-dense MB, every link blocked": row_every_link_blocked,
    "hostile: mentions in a path, 200 KB, blocklist": row_mentions_in_a_path,
    "prose MB, blocklist, 100,000 rules": row_prose_block,
}


if __name__ == "__main__":
    main()


def row_engine_payback() -> Row:
    """What PAYBACK_CHARS_PER_LITERAL stands for: compile cost over scan time saved."""
    try:
        from agentloop_tools.web._text._literal_search import LiteralSearch, hyperscan_module
    except ImportError:
        return {"note": "this tree has one blocklist engine"}
    if hyperscan_module() is None:
        return {"note": "hyperscan is not installed"}
    literals = _big()[:10_000]
    text = _dense().lower()
    started = time.process_time()
    fast = LiteralSearch(literals, engine="hyperscan")
    fast.starts("x")
    compile_seconds = time.process_time() - started
    slow = LiteralSearch(literals, engine="aho-corasick")
    slow.starts("x")
    hyperscan_seconds = cpu_best(5, partial(fast.starts, text))
    fallback_seconds = cpu_best(5, partial(slow.starts, text))
    try:  # the fallback the blocklist reads with, where the tree has it
        from agentloop_tools.web._text._prefilter import _HIDING
        from agentloop_tools.web._text._split_search import SplitSearch
    except ImportError:
        pass
    else:
        split = SplitSearch(literals, _HIDING)
        fallback_seconds = cpu_best(5, partial(split.starts, text.encode()))
    saved_per_char = (fallback_seconds - hyperscan_seconds) / len(text)
    per_literal = compile_seconds / len(literals)
    return {
        "ms": hyperscan_seconds * 1000,
        "reference_ms": fallback_seconds * 1000,
        "ratio": hyperscan_seconds / fallback_seconds,
        "note": (
            f"Hyperscan vs Aho-Corasick on 1 MB, 10,000 literals; compile "
            f"{per_literal * 1e6:.0f} us/literal, saves {saved_per_char * 1e9:.1f} ns/char: "
            f"pays back after {per_literal / max(saved_per_char, 1e-12):,.0f} chars/literal"
        ),
    }


ROWS["engines: Hyperscan vs Aho-Corasick scan (payback)"] = row_engine_payback
