"""Date a cassette recorded elsewhere: write provenance v2 (``source: adopted``) at its top.

Another project's recording (or vcrpy's own) has no provenance, so its age cannot be
checked and nothing says where it came from. Adopting it adds the block, first in the
file, and leaves every byte after it as it was: the interactions are never rewritten,
and no key is needed. The new text is parsed back and compared with the old before
anything is written; a file that cannot take the block that way is refused.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from agentloop_tools._errors import AdoptRefused

MAX_NOTE = 500
_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d):(\d\d)Z)?")
_BOM = b"\xef\xbb\xbf"


def parse_date(value: str, now: dt.datetime | None = None) -> dt.datetime:
    """``--recorded-at``: ``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM:SSZ``, not in the future."""
    match = _DATE.fullmatch(value.strip())
    when = None
    if match is not None:
        year, month, day, hour, minute, second = (int(part or 0) for part in match.groups())
        try:
            when = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.UTC)
        except ValueError:
            when = None
    if when is None:
        raise AdoptRefused(
            f"--recorded-at {value!r} is not a date: write YYYY-MM-DD (or "
            "YYYY-MM-DDTHH:MM:SSZ in UTC), the day the cassette was recorded"
        )
    if when > (now or dt.datetime.now(dt.UTC)) + dt.timedelta(days=1):
        raise AdoptRefused(
            f"--recorded-at {value!r} is in the future: give the day it was recorded"
        )
    return when


def check_note(note: str) -> str:
    """``--note``: one line of plain text, no control characters, no key-shaped text."""
    from agentloop_tools._secrets import Detector

    if len(note) > MAX_NOTE:
        raise AdoptRefused(f"--note is {len(note)} characters; keep it to {MAX_NOTE}")
    if any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 or 0x202A <= ord(c) <= 0x2069 for c in note):
        raise AdoptRefused("--note holds a control character; write one line of plain text")
    if Detector().find(note):
        raise AdoptRefused("--note holds text shaped like a credential; leave it out")
    return note


def adopt(
    path: str | Path, recorded_at: dt.datetime, note: str | None, *, force: bool = False
) -> int:
    """Write the provenance of an adopted cassette into ``path``; its interaction count.

    Raises:
        AdoptRefused: not a YAML vcrpy cassette, already dated (unless ``force``), or the
            block cannot be added without changing the rest of the file.
        InputError: the file cannot be read.
    """
    from agentloop_tools.cassettes._load import load_yaml, read_bytes

    if not str(path).lower().endswith((".yaml", ".yml")):
        raise AdoptRefused(
            "not a YAML cassette (.yaml, .yml): provenance is written into YAML cassettes"
        )
    data = read_bytes(path)
    bom = _BOM if data.startswith(_BOM) else b""
    try:
        text = data[len(bom) :].decode("utf-8")
    except UnicodeDecodeError:
        raise AdoptRefused("not UTF-8 text; cassettes are UTF-8") from None
    try:
        old = load_yaml(text)
    except Exception as error:  # any parse error: refused, named
        reason = " ".join(str(error).split())[:200]
        raise AdoptRefused(f"not YAML that can be read ({reason})") from None
    if not isinstance(old, dict) or not isinstance(old.get("interactions"), list):
        raise AdoptRefused("not a vcrpy cassette: expected a mapping with an 'interactions' list")
    rest = _without_provenance(text, old, force)
    block = _block(old, recorded_at, note)
    if "\r\n" in rest:
        block = block.replace("\n", "\r\n")
    new = block + rest
    _verify(new, old, block)
    _write(Path(path), bom + new.encode("utf-8"), data)
    return len(old["interactions"])


def _without_provenance(text: str, old: dict[str, Any], force: bool) -> str:
    from agentloop_tools.cassettes._provenance import KEY

    if KEY not in old:
        return text
    found = old[KEY]
    if not force:
        source = found.get("source", "live") if isinstance(found, dict) else "unknown"
        raise AdoptRefused(
            f"it already has provenance (source: {source}); pass --force to replace it "
            "with an adopted one"
        )
    match = re.match(r"(?:[ \t]*(?:#.*)?\r?\n)*provenance:[^\n]*\n(?:(?:[ \t#].*)?\r?\n)*", text)
    if match is None:
        raise AdoptRefused(
            "its provenance block is not at the top of the file, so it cannot be replaced "
            "without rewriting the file; remove the block by hand and adopt it again"
        )
    return text[match.end() :]


def _block(old: dict[str, Any], recorded_at: dt.datetime, note: str | None) -> str:
    import yaml

    from agentloop_tools.cassettes._format import _Dumper
    from agentloop_tools.cassettes._provenance import KEY, SCHEMA, facts, version

    known = facts(old["interactions"], None)
    provenance: dict[str, Any] = {
        "schema": SCHEMA,
        "recorded_at": recorded_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": "adopted",
        "adopted_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "adopted_with": version("based-models-agentloop-tools"),
    }
    if note:
        provenance["note"] = note
    provenance["providers"] = known["providers"]
    provenance["models"] = known["models"]
    text: str = yaml.dump(
        {KEY: provenance}, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100
    )
    return text


def _verify(new: str, old: dict[str, Any], block: str) -> None:
    from agentloop_tools.cassettes._load import load_yaml
    from agentloop_tools.cassettes._provenance import KEY

    try:
        parsed = load_yaml(new)
    except Exception:
        parsed = None
    expected = {key: value for key, value in old.items() if key != KEY}
    if (
        not isinstance(parsed, dict)
        or {key: value for key, value in parsed.items() if key != KEY} != expected
        or parsed.get(KEY) != load_yaml(block)[KEY]
    ):
        raise AdoptRefused(
            "the provenance block cannot be added at its top without changing how the rest "
            "reads (a YAML document marker, or a top level not in block style); nothing "
            "was written"
        )


def _write(path: Path, data: bytes, read: bytes) -> None:
    """Replace the file at once: a crash leaves the old file or the new, never half.

    A file changed since it was ``read`` (a re-recording writing it meanwhile) is left
    as the other writer made it: replacing it would lose that write.
    """
    from agentloop_tools.cassettes._load import read_bytes

    target = path.resolve()
    mode = target.stat().st_mode & 0o7777
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.chmod(temporary, mode)
        if read_bytes(target) != read:
            raise AdoptRefused(
                "the file changed while it was being adopted (another process wrote it); "
                "its new content is kept: adopt it again"
            )
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
