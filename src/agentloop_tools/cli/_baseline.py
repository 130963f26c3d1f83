"""``agentloop-tools audit --write-baseline`` / ``--baseline``: known violations kept aside.

A baseline is a JSON file of today's violations, each as the file (relative to the
baseline's own folder, ``/``-separated), the interaction, where, the URL and the rule:
sorted, so two runs on the same cassettes write the same bytes and a diff shows what
changed. An audit against it reports only violations it does not hold (new), and lists
the entries no longer found (stale), as the baselines of established linters do.

Entries are compared as a multiset: a URL a baseline holds twice (an answer that links
it twice) and found three times is one new violation.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentloop_tools._errors import BaselineError

FORMAT = "agentloop-tools-baseline"
VERSION = 1
KEYS = ("file", "interaction", "where", "url", "rule")
# A baseline is read whole: bounded like a cassette.
MAX_BYTES = 64 * 1024 * 1024

type Key = tuple[str, int | None, str, str, str | None]


def relative(path: str, baseline: Path) -> str:
    """``path`` relative to the baseline's folder, ``/``-separated (stable across OSes)."""
    folder = os.path.dirname(os.path.abspath(baseline))
    try:
        shown = os.path.relpath(os.path.abspath(path), folder)
    except ValueError:  # another drive on Windows: no relative path exists
        shown = os.path.abspath(path)
    return shown.replace(os.sep, "/")


def key_of(violation: dict[str, Any], path: str, baseline: Path) -> Key:
    return (
        relative(path, baseline),
        violation["interaction"],
        violation["where"],
        violation["url"],
        violation["rule"],
    )


def _sort_key(key: Key) -> tuple[str, int, str, str, str]:
    file, interaction, where, url, rule = key
    return (file, -1 if interaction is None else interaction, where, url, rule or "")


def render(keys: Iterable[Key], policy: Any) -> str:
    """The baseline file's text: sorted, two-space indented, one trailing newline."""
    entries = [dict(zip(KEYS, key, strict=True)) for key in sorted(keys, key=_sort_key)]
    document = {
        "format": FORMAT,
        "version": VERSION,
        "policy": {"mode": policy.mode, "domains": list(policy.domains)},
        "violations": entries,
    }
    return json.dumps(document, indent=2) + "\n"


def write(path: Path, text: str) -> None:
    """Write ``text`` to a new file beside ``path``, then rename it over ``path``.

    A run stopped half-way never leaves half a baseline. The new file gets a random
    name and is created exclusively (``mkstemp``: ``O_CREAT | O_EXCL``), so a link
    planted at a name we would pick is never followed; the rename replaces ``path``
    itself, so a baseline that is a symbolic link becomes a regular file and what it
    pointed to is left untouched.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, partial = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".partial", dir=path.parent
        )
        try:
            with os.fdopen(descriptor, "wb") as out:
                # mkstemp makes the file 0600; a committed baseline is an ordinary file.
                if os.chmod in os.supports_fd:
                    os.chmod(out.fileno(), 0o666 & ~_umask())
                out.write(text.encode("utf-8"))
            os.replace(partial, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(partial)
            raise
    except OSError as error:
        raise BaselineError(
            f"--write-baseline {path}: cannot be written ({error.strerror})"
        ) from None


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def load(path: Path) -> Counter[Key]:
    """The baseline's entries; anything but a baseline this version wrote is an error."""
    from agentloop_tools._errors import InputError
    from agentloop_tools.cassettes._load import read_bytes

    where = f"--baseline {path}"
    try:
        # A regular file only, within the cap: a FIFO would block, /dev/zero never end.
        data = json.loads(read_bytes(path, limit=MAX_BYTES))
    except InputError as error:
        if not os.path.lexists(path):
            raise BaselineError(
                f"{where}: no such file. Write one first: agentloop-tools audit PATH... "
                f"--write-baseline {path}"
            ) from None
        raise BaselineError(f"{where}: {error}") from None
    except (ValueError, RecursionError) as error:
        reason = " ".join(str(error).split())[:200]
        raise BaselineError(f"{where}: not JSON ({reason})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BaselineError(f'{where}: not an agentloop-tools baseline (no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise BaselineError(
            f"{where}: baseline version {data.get('version')!r}; this agentloop-tools "
            f"reads version {VERSION}. Write it again with --write-baseline"
        )
    entries = data.get("violations")
    if not isinstance(entries, list):
        raise BaselineError(f'{where}: "violations" is not a list')
    keys: Counter[Key] = Counter()
    for number, entry in enumerate(entries):
        if not _valid(entry):
            raise BaselineError(
                f"{where}: entry {number} is not {{file, interaction, where, url, rule}} "
                "with string values (interaction: a number or null; rule: a string or null)"
            )
        keys[tuple(entry[name] for name in KEYS)] += 1
    return keys


def _valid(entry: Any) -> bool:
    if not isinstance(entry, dict) or set(entry) != set(KEYS):
        return False
    interaction = entry["interaction"]
    return (
        all(isinstance(entry[name], str) for name in ("file", "where", "url"))
        and (interaction is None or type(interaction) is int)
        and (entry["rule"] is None or isinstance(entry["rule"], str))
    )


@dataclass
class Comparison:
    """What the audit found against the baseline."""

    known: int = 0
    stale: list[Key] = field(default_factory=list)


def compare(
    found: list[Key], baseline: Counter[Key], audited: set[str], folder: Path
) -> tuple[list[bool], Comparison]:
    """Which of ``found`` are new (True), in order; and the known count and stale entries.

    An entry is stale when its file was read whole in this run and the violation no
    longer occurs, or when its file no longer exists. An entry of a file this run did not
    read (a pre-commit hook passes only the changed files) or could not read whole is
    neither: nothing is known about it.
    """
    left = Counter(baseline)
    new: list[bool] = []
    comparison = Comparison()
    for key in found:
        if left[key] > 0:
            left[key] -= 1
            comparison.known += 1
            new.append(False)
        else:
            new.append(True)
    comparison.stale = sorted(
        (key for key in left.elements() if key[0] in audited or not (folder / key[0]).exists()),
        key=_sort_key,
    )
    return new, comparison


def describe(key: Key) -> str:
    """One entry in one line: every field is the baseline file's text, made visible."""
    from agentloop_tools._visible import visible
    from agentloop_tools.web._policy._verdict import verdict

    file, interaction, where, url, rule = key
    place = "" if interaction is None else f" (interaction {interaction})"
    return visible(f"{file}{place}: {where} {url} [{verdict(rule)}]")


@dataclass
class Outcome:
    """What ``--baseline`` / ``--write-baseline`` did, for the summary and the exit code."""

    path: Path
    written: int | None = None  # entries written (--write-baseline)
    comparison: Comparison | None = None  # --baseline


def apply(
    audits: list[Any], policy: Any, *, write_to: str | None, read_from: str | None
) -> Outcome | None:
    """Write the baseline, or drop the known violations from ``audits`` (in place)."""
    from agentloop_tools._secrets import Cleaner, secret_values

    if write_to is None and read_from is None:
        return None
    path = Path(write_to or read_from or "")
    # A URL can carry a key: the baseline holds the text the reports print.
    clean = Cleaner(secret_values(os.environ)).text
    if write_to is not None:
        keys = [
            _cleaned(key_of(v, audit.path, path), clean)
            for audit in audits
            for v in audit.violations
        ]
        write(path, render(keys, policy))
        return Outcome(path, written=len(keys))
    baseline = load(path)
    audited = {relative(audit.path, path) for audit in audits if not audit.problems}
    everything = [
        (audit, v, _cleaned(key_of(v, audit.path, path), clean))
        for audit in audits
        for v in audit.violations
    ]
    new, comparison = compare(
        [key for _, _, key in everything], baseline, audited, path.absolute().parent
    )
    keep = {id(v) for (_, v, _), is_new in zip(everything, new, strict=True) if is_new}
    for audit in audits:
        audit.violations = [v for v in audit.violations if id(v) in keep]
    return Outcome(path, comparison=comparison)


def _cleaned(key: Key, clean: Any) -> Key:
    file, interaction, where, url, rule = key
    return (file, interaction, where, clean(url), rule)
