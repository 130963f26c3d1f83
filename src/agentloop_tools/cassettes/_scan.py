"""``agentloop-tools scan``: credentials in any file, with the detector the refusal uses.

Each file is read as text (UTF-8, or UTF-16/32 with a byte order mark, else Latin-1,
which maps every byte to one character so ASCII key shapes still read) and checked
line by line, both as written and with its escapes undone (``\\t``, ``\\n``,
``\\uXXXX``...). Files that parse as YAML or JSON (cassettes, HAR, transcripts) are
also walked as data: the decoded strings, ``!!binary`` and compressed bodies, JSON
inside strings, keys split across fields, and credential headers carrying a value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentloop_tools._errors import InputError, Undecodable
from agentloop_tools._secrets import (
    CREDENTIAL_HEADERS,
    PLACEHOLDER_PREFIX,
    REDACTED,
    Detector,
)
from agentloop_tools.cassettes._hygiene._leaks import decode_bytes, find_leaks
from agentloop_tools.cassettes._load import decode_text, lines, load_json, load_yaml, read_bytes

STRUCTURED_SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".har": "json"}
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([nrtbf0\"'/\\ ]))")
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "0": "\0"}
_HARMLESS_VALUES = ("", "[scrubbed]", REDACTED, "[filtered]", "REDACTED", "DUMMY")


@dataclass(frozen=True, slots=True)
class Hit:
    """One credential found: the line (for text findings) or where in the parsed document."""

    line: int | None
    where: str
    kind: str
    masked: str

    def __str__(self) -> str:
        place = f"line {self.line}" if self.line is not None else self.where
        return f"{place}: {self.kind}" + (f" ({self.masked})" if self.masked else "")


@dataclass(slots=True)
class FileScan:
    """What scanning one file found.

    Attributes:
        findings: text findings carry a line number; findings from the parsed document
            carry a path into it instead.
        problems: why part of the file could not be checked.
        encoding: how the file was read (``utf-8``, ``utf-16``, ``latin-1``, ``binary``).
        parsed: whether the file was also walked as a YAML/JSON document.
    """

    path: str
    findings: list[Hit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    encoding: str = "utf-8"
    parsed: bool = False


def scan_file(path: str | Path, detector: Detector) -> FileScan:
    """Every credential in one file. Never raises: what cannot be read is a problem."""
    result = FileScan(str(path))
    try:
        data = read_bytes(path)
    except InputError as error:
        result.problems.append(str(error))
        return result
    try:
        _scan(data, Path(path), detector, result)
    except Exception as error:  # a scanner bug must not pass a file silently
        result.problems.append(f"could not be scanned whole ({type(error).__name__}: {error})")
    return result


def _scan(data: bytes, path: Path, detector: Detector, result: FileScan) -> None:
    text, result.encoding = _text(data)
    seen: set[str] = set()
    for number, line in enumerate(lines(text), start=1):
        for variant in _readings(line):
            for finding in detector.find(variant):
                if finding.value not in seen:
                    seen.add(finding.value)
                    result.findings.append(Hit(number, "", finding.kind, finding.masked))
    kind = STRUCTURED_SUFFIXES.get(path.suffix.lower())
    document: Any = None
    if path.suffix.lower() == ".jsonl":
        kind = "jsonl"
    try:
        if kind == "yaml":
            document = load_yaml(text)
        elif kind == "json":
            document = load_json(text)
        elif kind == "jsonl":
            document = [load_json(line) for line in lines(text) if line.strip()]
        elif text.lstrip()[:1] in ("{", "["):
            document = _maybe_json(text)
    except InputError as error:
        result.problems.append(f"checked as text only: {error}")
        return
    except Exception as error:
        reason = " ".join(str(error).split())[:160]
        result.problems.append(
            f"checked as text only: not valid {(kind or 'json').upper()} ({reason})"
        )
        return
    if document is None:
        return
    result.parsed = True
    try:
        leaks = find_leaks(document, detector)
    except Undecodable as error:
        result.problems.append(str(error))
        leaks = []
    for leak in leaks:
        if leak.masked not in {hit.masked for hit in result.findings}:
            result.findings.append(Hit(None, leak.where, leak.kind, leak.masked))
    for where, name in _credential_headers(document):
        result.findings.append(Hit(None, where, f"credential header {name!r} with a value", ""))


def _text(data: bytes) -> tuple[str, str]:
    try:
        text = decode_text(data)
    except UnicodeDecodeError:
        pass
    else:
        if data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
            return text, "utf-16/32"
        return text, "utf-8"
    if b"\0" in data[:4096]:
        try:
            return decode_bytes(data), "binary"
        except Undecodable:
            return data.decode("latin-1"), "binary"
    return data.decode("latin-1"), "latin-1"


def _readings(line: str) -> list[str]:
    """The line as written, and with string escapes undone when it has any."""
    if "\\" not in line:
        return [line]
    return [line, _ESCAPE.sub(_unescape, line)]


def _unescape(match: re.Match[str]) -> str:
    code, byte, simple = match.groups()
    if code:
        return chr(int(code, 16))
    if byte:
        return chr(int(byte, 16))
    return _SIMPLE.get(simple, simple)


def _maybe_json(text: str) -> Any:
    try:
        return load_json(text)
    except (ValueError, InputError):
        return None


def _credential_headers(document: Any) -> list[tuple[str, str]]:
    """Credential headers carrying a value: vcrpy mappings, and HAR's name/value pairs."""
    found = []
    stack: list[tuple[Any, str]] = [(document, "")]
    seen: dict[int, Any] = {}
    while stack:
        item, where = stack.pop()
        if isinstance(item, dict | list):
            if id(item) in seen:
                continue
            seen[id(item)] = item
        if isinstance(item, dict):
            name = item.get("name")
            if (
                isinstance(name, str)
                and name.lower() in CREDENTIAL_HEADERS
                and _carries(item.get("value"))
            ):
                found.append((where, name.lower()))
            for key, value in item.items():
                child = f"{where} {key}".strip()
                if isinstance(key, str) and key.lower() in CREDENTIAL_HEADERS and _carries(value):
                    found.append((child, key.lower()))
                stack.append((value, child))
        elif isinstance(item, list):
            stack.extend((value, f"{where}[{index}]") for index, value in enumerate(item))
    return sorted(set(found))


def _carries(value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    return any(
        isinstance(item, str)
        and item.strip() not in _HARMLESS_VALUES
        and PLACEHOLDER_PREFIX not in item
        for item in values
    )
