"""The day a provider's publish date names, in UTC: what ``as_of`` compares.

A timestamp that says where it was taken (an offset, or an RFC 9557 time-zone tag
such as ``2024-06-30T22:00:00-05:00[America/New_York]``) is read as its UTC
instant, so a page published late on June 30th in New York (July 1st in UTC) is
after ``as_of="2024-06-30"``. A plain date, or a time with neither offset nor zone
(Brave's usual ``page_age``), names its own day. What cannot be read surely (a
zone no database here knows, a critical tag we cannot act on, an offset that
contradicts a critical zone) is no date: ``undated`` decides.
"""

from __future__ import annotations

import email.utils
import functools
import re
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from typing import NamedTuple

_ISO_DATE = re.compile(r"\s*(\d{4})-(\d{2})-(\d{2})")
# RFC 3339 (with ISO 8601's lenient separators and offsets), then RFC 9557's suffix.
_STAMP = re.compile(
    r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"
    r"(?:[Tt ](?P<H>\d{2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,]\d+)?)?"
    r"(?P<offset>[Zz]|[+-]\d{2}(?::?\d{2}(?::?\d{2}(?:[.,]\d+)?)?)?|\s*(?:UTC|GMT|UT))?)?"
    r"(?P<suffix>(?:\[[^\[\]]*\])*)"
)
_OFFSET = re.compile(r"([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?")
_TAG = re.compile(r"\[(!?)([^\[\]]*)\]")
# RFC 9557, section 4.1.
_ZONE_NAME = re.compile(r"[A-Za-z._][A-Za-z0-9._+\-]*(?:/[A-Za-z._][A-Za-z0-9._+\-]*)*")
_ZONE_OFFSET = re.compile(r"[+-]\d{2}(?::?\d{2})?")
_KEY = re.compile(r"[a-z_][a-z0-9_\-]*")
_VALUES = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
# Keys we act on. The calendar (u-ca) says how to show the date, never which instant
# it is, so a critical one is honoured by reading the instant as written.
_KNOWN_KEYS = frozenset({"u-ca"})
# After a time, an offset or a zone word we could not read (AM/PM is no zone).
_ZONED = re.compile(
    r"\[|\d:\d{2}(?::\d{2})?(?:[.,]\d+)?\s*(?:[AaPp]\.?[Mm]\.?\s*)?"
    r"(?:[+\-\u2212]\d|(?![AaPp]\.?[Mm]\b)[A-Za-z])"
)
_MONTH_DAY_YEAR = re.compile(r"\s*([A-Za-z]{3,9})\.? (\d{1,2}), (\d{4})\s*$")
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        1,
    )
    for name in names
}


class _Zone(NamedTuple):
    """The time zone an RFC 9557 suffix names (None: none)."""

    zone: tzinfo | None


def published_on(value: object) -> date | None:
    """The UTC date a provider's published field names, or None when it names none we can read.

    Reads ISO dates and datetimes (``2024-10-07``, ``2024-10-07T12:00:00.000Z``; an
    offset or an RFC 9557 zone tag is read as its UTC instant), RFC 2822 dates
    (``Mon, 07 Oct 2024 12:00:00 GMT``) and ``October 7, 2024``. Relative text
    (``2 days ago``) is no date.
    """
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if _ISO_DATE.match(text):
        stamp = _STAMP.fullmatch(text)
        return _loose_iso(text) if stamp is None else _stamp_day(stamp)
    words = _MONTH_DAY_YEAR.match(text)
    if words is not None:
        month = _MONTHS.get(words[1].lower())
        if month is None:
            return None
        try:
            return date(int(words[3]), month, int(words[2]))
        except ValueError:
            return None
    try:
        parsed = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return parsed.astimezone(UTC).date() if parsed.tzinfo is not None else parsed.date()


def _stamp_day(stamp: re.Match[str]) -> date | None:
    try:
        day = date(int(stamp["y"]), int(stamp["m"]), int(stamp["d"]))
    except ValueError:
        return None
    suffix = _suffix(stamp["suffix"])
    if suffix is None:
        return None
    if stamp["H"] is None:
        return day  # a date names its own day, whatever zone it is tagged with
    local = _local(day, int(stamp["H"]), int(stamp["M"]), int(stamp["S"] or 0))
    if local is None:
        return None
    written = stamp["offset"]
    if written is None:
        if suffix.zone is None:
            return day  # neither offset nor zone: the day as written
        return local.replace(tzinfo=suffix.zone).astimezone(UTC).date()
    offset = _offset(written.strip())
    if offset is None:
        return None
    # The offset names the instant; a zone that disagrees (even a critical one) is
    # resolved in its favour, as RFC 9557 (3.4) lets a program do. Rejecting would
    # make the hit undated, which undated="keep" would show.
    return (local - offset).date()


def _local(day: date, hour: int, minute: int, second: int) -> datetime | None:
    if hour == 24 and minute == 0 and second == 0:  # ISO 8601's end of the day
        return datetime.combine(day, time()) + timedelta(days=1)
    try:
        # A leap second (:60) is still that minute's day.
        return datetime.combine(day, time(hour, minute, min(second, 59)))
    except ValueError:
        return None


def _offset(text: str) -> timedelta | None:
    if text in ("Z", "z", "UTC", "GMT", "UT"):
        return timedelta(0)
    parts = _OFFSET.fullmatch(text)
    if parts is None:
        return None
    hours, minutes, seconds = (int(parts[i] or 0) for i in (2, 3, 4))
    if hours > 23 or minutes > 59 or seconds > 59:
        return None
    size = timedelta(hours=hours, minutes=minutes, seconds=seconds)
    return -size if parts[1] == "-" else size


def _suffix(text: str) -> _Zone | None:
    """RFC 9557's suffix read (a zone first, then key=value tags), or None if it must
    make the timestamp unreadable: malformed, an unknown zone, an unknown critical key."""
    found = _Zone(None)
    keys: dict[str, bool] = {}
    for index, (bang, body) in enumerate(_TAG.findall(text)):
        critical = bang == "!"
        if "=" not in body:
            zone = _zone(body) if index == 0 else None
            if zone is None:
                return None
            found = _Zone(zone)  # critical or not: a zone we resolve is acted on
            continue
        key, _, values = body.partition("=")
        if not _KEY.fullmatch(key) or not _VALUES.fullmatch(values):
            return None
        if key in keys and (critical or keys[key]):
            return None  # a critical key given twice cannot be acted on surely
        keys[key] = critical or keys.get(key, False)
        if critical and key not in _KNOWN_KEYS:
            return None  # elective tags we do not know are ignored; critical ones not
    return found


def _zone(name: str) -> tzinfo | None:
    if _ZONE_OFFSET.fullmatch(name):
        offset = _offset(name)
        return timezone(offset) if offset is not None else None
    if not _ZONE_NAME.fullmatch(name) or any(p in (".", "..") for p in name.split("/")):
        return None
    return _named_zone(name) or _named_zone(_zone_names().get(name.lower(), ""))


def _named_zone(name: str) -> tzinfo | None:
    if not name:
        return None
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name)
    except (KeyError, ValueError, OSError, UnicodeError):
        # Unknown here (no such zone, or no database: see the tzdata note in the docs).
        return None


@functools.cache
def _zone_names() -> dict[str, str]:
    # IANA names are unique regardless of case; the database files are not.
    from zoneinfo import available_timezones

    return {name.lower(): name for name in available_timezones()}


def _loose_iso(text: str) -> date | None:
    """An ISO-looking text RFC 3339 does not cover: as ``fromisoformat`` reads it,
    else its date when nothing after the date says where it was taken."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        match = _ISO_DATE.match(text)
        assert match is not None
        if _ZONED.search(text, match.end()):
            return None  # an offset or a zone we cannot read: no sure UTC day
        try:
            return date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return None
    return when.astimezone(UTC).date() if when.tzinfo is not None else when.date()
