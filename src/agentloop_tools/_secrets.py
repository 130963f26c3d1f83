"""What a credential looks like, so nothing key-shaped is written to disk or printed.

One detector, shared by the cassette layer (scrub before writing, refuse what slipped
through), the ``scan`` command, the evidence reports and the assertion helpers (redact
failure messages). It works on *decoded* text: callers hand it the strings a file
holds (YAML and JSON escapes already undone), never the escaped form.

Three checks, in the order the refusal applies them:

1. **Known values.** Every value the environment holds under a secret-looking name,
   and its encodings (percent, hex, base64 at any alignment), is a secret wherever it
   appears, whatever its shape.
2. **Key shapes.** Prefixed vendor formats (``sk-ant-``, ``AIza``, ``ghp_``, JWTs, ...)
   and a few labelled forms (``Bearer ...``, ``Basic ...``, URL userinfo).
3. **Labelled values.** A field or header named like a credential (``api_key``,
   ``client_secret``, ``x-auth-token``) holding a random-looking string.

Pure: no I/O; the environment is passed in.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

from agentloop_tools._providers import PROVIDER_SECRET_VARIABLES, SEARCH_KEY_VARIABLES

# agentloop's credential variables and the search backends' keys (_providers' tables).
CREDENTIAL_VARIABLES = (*PROVIDER_SECRET_VARIABLES, *SEARCH_KEY_VARIABLES)
# Headers that carry credentials or identify the account, in requests or responses.
# Recording keeps only an allowlist of headers (cassettes._hygiene._scrub), so this list is
# what ``scan`` reports by name; any other header is judged by its value.
CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-subscription-token",
        "x-auth-token",
        "x-access-token",
        "x-csrf-token",
        "x-amz-security-token",
        "x-debug-token",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
        "modal-key",
        "modal-secret",
    }
)
# Query parameters that carry credentials (reported by name; recording keeps an allowlist).
CREDENTIAL_PARAMETERS = frozenset(
    {
        "key",
        "api_key",
        "apikey",
        "api-key",
        "access_token",
        "token",
        "secret",
        "auth",
        "client_secret",
        "password",
        "sig",
        "signature",
        "x-amz-security-token",
        "x-amz-signature",
        "x-goog-signature",
    }
)
PLACEHOLDER_PREFIX = "agentloop-tools-placeholder-"
REDACTED = "[redacted]"

# A name that says "credential": API_KEY, x-auth-token, client_secret, DB_PASSWORD...
_SECRET_NAME = re.compile(
    r"(?:^|[^a-z])(?:api[_-]?key|apikey|key|token|secret|passw(?:or)?d|passphrase|"
    r"credentials?|auth|private[_-]?key|access[_-]?key|session|cookie)"
    r"(?:$|[^a-z])",
    re.IGNORECASE,
)
# ...but not these: where a secret lives, not the secret (SSH_AUTH_SOCK, KEY_FILE), and
# counters providers put in every response (max_tokens, input_tokens).
_NOT_A_SECRET_NAME = re.compile(
    r"(?:_SOCK|_FILE|_PATH|_DIR|_HOME|_URL_PATH)$|tokens?[_-]?(?:limit|count|remaining|reset|usage)"
    r"|(?:max|input|output|total|cached|reasoning|cache_creation|cache_read)[_-]?tokens",
    re.IGNORECASE,
)

# The characters keys are made of, for boundaries: a shape must not be the middle of
# a longer token (a base64 blob holds "AIza" somewhere by chance).
_E = r"(?![A-Za-z0-9_\-])"


def _b(prefix: str, length: int) -> str:
    """``prefix`` (``length`` characters) not preceded by a key character.

    The check comes after the literal so the regex engine can search for the literal.
    """
    return f"{prefix}(?<![A-Za-z0-9+/_\\-].{{{length}}})"


# (kind, pattern, literals one of which any match contains: a cheap test first).
_SHAPES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "Anthropic API key",
        r"sk-ant-(?:api|admin|oat)\d\d-[A-Za-z0-9_\-]{16,}|sk-ant-[A-Za-z0-9_\-]{24,}",
        ("sk-ant-",),
    ),
    ("OpenRouter API key", r"sk-or-v1-[A-Za-z0-9]{16,}", ("sk-or-v1-",)),
    (
        "OpenAI API key",
        _b("sk-", 3) + r"(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
        ("sk-",),
    ),
    ("Modal token", _b("(?:ak|as|wk)-", 3) + r"[A-Za-z0-9]{20,}" + _E, ("ak-", "as-", "wk-")),
    (
        "AWS access key id",
        _b("(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)", 4) + r"[0-9A-Z]{16}" + _E,
        ("AKIA", "ASIA", "ABIA", "ACCA", "AROA", "AIDA"),
    ),
    (
        "AWS secret access key",
        r"(?i:aws[_\-\s]?(?:secret[_\-\s]?(?:access[_\-\s]?)?key|secret))[\"']?\s*[:=]\s*[\"']?"
        r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
        ("aws", "AWS", "Aws"),
    ),
    (
        "GitHub token",
        r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    ("Slack token", r"xox[abposre]-[A-Za-z0-9\-]{10,}", ("xox",)),
    (
        "Slack webhook",
        r"hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+",
        ("hooks.slack.com",),
    ),
    ("Google API key", _b("AIza", 4) + r"[0-9A-Za-z_\-]{35}" + _E, ("AIza",)),
    ("Google OAuth token", _b(r"ya29\.", 5) + r"[0-9A-Za-z_\-]{20,}", ("ya29.",)),
    (
        "JSON Web Token",
        _b("eyJ", 3) + r"[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
        ("eyJ",),
    ),
    (
        "Stripe key",
        _b("(?:sk|rk)_(?:live|test)_", 8) + r"[0-9A-Za-z]{16,}",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
    ),
    ("Brave Search API key", _b("BSA", 3) + r"[A-Za-z0-9_\-]{20,64}" + _E, ("BSA",)),
    ("Tavily API key", _b("tvly-", 5) + r"(?:dev-|prod-)?[A-Za-z0-9_\-]{16,}", ("tvly-",)),
    ("Hugging Face token", _b("hf_", 3) + r"[A-Za-z0-9]{30,}" + _E, ("hf_",)),
    ("GitLab token", _b("glpat-", 6) + r"[A-Za-z0-9_\-]{20,}", ("glpat-",)),
    ("npm token", _b("npm_", 4) + r"[A-Za-z0-9]{36}" + _E, ("npm_",)),
    ("PyPI token", r"pypi-AgE[A-Za-z0-9_\-]{50,}", ("pypi-AgE",)),
    ("SendGrid key", _b(r"SG\.", 3) + r"[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", ("SG.",)),
    ("Twilio key", _b("SK", 2) + r"[0-9a-f]{32}" + _E, ("SK",)),
    ("Mailgun key", _b("key-", 4) + r"[0-9a-f]{32}" + _E, ("key-",)),
    (
        "private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        ("-----BEGIN ",),
    ),
    ("bearer token", r"(?i:bearer)\s+[A-Za-z0-9._~+/=\-]{16,}", ("bearer",)),
    (
        "basic credentials",
        r"(?i:basic)\s+[A-Za-z0-9+/]{8,}={0,2}(?![A-Za-z0-9+/=])",
        ("basic",),
    ),
    (
        "labelled credential",
        r"(?:key|Key|KEY|token|Token|TOKEN|secret|Secret|SECRET|passw|Passw|PASSW|auth|Auth|AUTH"
        r"|credential|Credential|CREDENTIAL)[A-Za-z0-9_\-]{0,40}"
        r"[\"']?\s{0,4}[:=]\s{0,4}[\"']?[A-Za-z0-9_\-+/.=~]{16,512}",
        ("key", "token", "secret", "passw", "auth", "credential"),
    ),
    (
        "URL credentials",
        r"://[^/\s:@\"'<>]{1,256}:[^/\s@\"'<>]{6,256}@",
        ("://",),
    ),
)
_COMPILED = tuple(
    (kind, re.compile(pattern), literals, any(lit.islower() for lit in literals) and kind in
     ("bearer token", "basic credentials", "labelled credential"))
    for kind, pattern, literals in _SHAPES
)  # fmt: skip
# Every shape's match contains one of these: one search rules all shapes out.
_ANY_LITERAL = re.compile(
    "|".join(re.escape(literal) for _, _, literals in _SHAPES for literal in literals),
    re.IGNORECASE,
).search
# Shapes with a generic prefix: only a random-looking tail counts (not "sk-learn-guide").
_NEEDS_RANDOM_TAIL = frozenset({"OpenAI API key", "Modal token", "bearer token"})
_NUMBER = re.compile(r"[-+]?[\d.,_]+(?:[eE][-+]?\d+)?|[\d\-:T.+Z]+").fullmatch
_SEPARATOR = re.compile(r"[\"']?\s*[:=]\s*[\"']?")
_NAME_CHAR = re.compile(r"[A-Za-z0-9_\-]").match
_DUMMY_PASSWORDS = frozenset(
    {"password", "passwd", "secret", "changeme", "example", "xxxxxxxx", "********"}
)


@dataclass(frozen=True, slots=True)
class Finding:
    """Something that looks like a credential: what kind, and where in the text."""

    kind: str
    start: int
    end: int
    value: str

    @property
    def masked(self) -> str:
        """The value as it may be shown: its first characters and its length."""
        return mask(self.value)


def mask(value: str) -> str:
    """A value as it may be shown: at most its first four characters, and its length."""
    shown = value[: min(4, len(value) // 4)]
    return f"{shown}...({len(value)} chars)"


def placeholder(variable: str) -> str:
    """The stand-in for a credential variable: clearly fake, and the same on every run."""
    return f"{PLACEHOLDER_PREFIX}{variable}"


def is_secret_name(name: str) -> bool:
    """Whether a variable, header, field or parameter name says it holds a credential."""
    return _secret_name(name) if len(name) <= _CACHED_NAME else _judge_name(name)


def _judge_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name)) and not _NOT_A_SECRET_NAME.search(name)


# The same few environment variable names are judged for every replayed test
# (secret_values); two searches each cost more than a look-up. Short names only, so
# the cache's memory stays small whatever a cassette holds.
_CACHED_NAME = 128
_secret_name = functools.lru_cache(maxsize=4096)(_judge_name)


def find_key_shapes(text: str) -> list[str]:
    """Substrings of ``text`` that look like credentials (placeholders excluded)."""
    return [finding.value for finding in shapes(text)]


def shapes(text: str) -> list[Finding]:
    """Every key-shaped substring of ``text``, with its kind and position."""
    found: list[Finding] = []
    if not _ANY_LITERAL(text):
        return found  # most strings: one scan, no shape can match
    # A placeholder is blanked out (same length), not skipped with what surrounds it:
    # a real key written right before one is still a key.
    text = text.replace(PLACEHOLDER_PREFIX, " " * len(PLACEHOLDER_PREFIX))
    lowered: str | None = None
    for kind, pattern, literals, caseless in _COMPILED:
        if caseless:
            lowered = text.lower() if lowered is None else lowered
            if not any(literal in lowered for literal in literals):
                continue
        elif not any(literal in text for literal in literals):
            continue
        for match in pattern.finditer(text):
            value = match.group()
            start = match.start()
            if kind == "labelled credential":  # the name starts before the keyword
                while start > 0 and match.start() - start < 40 and _NAME_CHAR(text[start - 1]):
                    start -= 1
                value = text[start : match.end()]
            if not _plausible(kind, value):
                continue
            if any(f.start <= start < f.end or start <= f.start < match.end() for f in found):
                continue  # one finding per place ("Bearer sk-..." is the key)
            if kind == "labelled credential":
                name, value = _SEPARATOR.split(value, maxsplit=1)
                found.append(Finding(f"a value labelled {name!r}", start, match.end(), value))
                continue
            found.append(Finding(kind, start, match.end(), value))
    return sorted(found, key=lambda f: f.start)


def _plausible(kind: str, value: str) -> bool:
    if kind in _NEEDS_RANDOM_TAIL:
        tail = value.split(None, 1)[-1] if kind == "bearer token" else value[3:]
        return looks_random(tail)
    if kind == "basic credentials":
        encoded = value.split(None, 1)[-1]
        try:
            decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
        except (binascii.Error, ValueError):
            return False
        return b":" in decoded and decoded.isascii()
    if kind == "labelled credential":
        name, value = _SEPARATOR.split(value, maxsplit=1)
        return is_secret_name(name) and looks_random(value)
    if kind == "URL credentials":
        password = value.rsplit(":", 1)[-1].rstrip("@")
        return password.lower() not in _DUMMY_PASSWORDS and not password.startswith(("<", "{", "$"))
    return True


def looks_random(value: str, minimum: int = 16) -> bool:
    """Whether ``value`` reads like a generated token rather than words.

    At least ``minimum`` characters, letters and digits mixed, and a character
    entropy a dictionary phrase of that length does not reach.
    """
    if len(value) < minimum or PLACEHOLDER_PREFIX in value:
        return False
    digits = sum(c.isdigit() for c in value)
    letters = sum(c.isalpha() for c in value)
    if digits < 2 or letters < 3 or _NUMBER(value):
        return False
    return entropy(value) >= 2.5


def entropy(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with known secret values (and their encodings) and key shapes replaced."""
    for secret in secrets:
        if secret and len(secret) >= 8:
            for variant in variants(secret):
                text = text.replace(variant, REDACTED)
    found = shapes(text)
    for finding in sorted(found, key=lambda f: f.start, reverse=True):
        text = text[: finding.start] + REDACTED + text[finding.end :]
    return text


def secret_values(environment: Mapping[str, str]) -> dict[str, str]:
    """Variable -> value, for every variable that holds a credential.

    agentloop's and the search backends' key variables count when set to eight
    characters or more; any other variable named like a credential (``*_TOKEN``,
    ``*_SECRET``, ``DB_PASSWORD``...) counts when its value is random-looking enough
    that replacing it everywhere cannot damage a cassette (12+ characters, not a path,
    not a plain word).
    """
    found = {}
    for name, value in environment.items():
        if not value or value.startswith(PLACEHOLDER_PREFIX):
            continue
        if name in CREDENTIAL_VARIABLES:
            if len(value) >= 8:
                found[name] = value
        elif is_secret_name(name) and _replaceable(value):
            found[name] = value
    return found


def _replaceable(value: str) -> bool:
    if len(value) < 12 or value.startswith(("/", "~", ".")) or value.isalpha():
        return False
    if re.fullmatch(r"[a-z][a-z\-_.]*", value) or value.lower() in ("true", "false"):
        return False
    return not re.fullmatch(r"[\d.\-:]+", value)  # numbers, versions, times


def variants(secret: str) -> list[str]:
    """``secret`` and the encodings a request or response could carry it in.

    Percent-encoding, hex, and base64 (standard and URL-safe, at each of the three
    alignments a value can take inside a longer base64 string, so ``user:<key>``
    encoded whole is caught too). Longest first, so replacing them in order is safe.
    """
    raw = secret.encode("utf-8")
    found = {secret, quote(secret, safe=""), quote_plus(secret), raw.hex(), raw.hex().upper()}
    for offset in range(3):
        bits_before, bits_total = 8 * offset, 8 * (offset + len(raw))
        first, last = -(-bits_before // 6), bits_total // 6
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            core = encode(b"\0" * offset + raw).decode("ascii")[first:last]
            if len(core) >= 8:
                found.add(core)
    return sorted(found, key=len, reverse=True)


def widest(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per place: of findings whose spans overlap, the longest (the first
    given of equal ones), in order of position.

    A key the environment holds is also a key shape, and two shapes can cover one key:
    listed twice, one secret reads as two.
    """
    kept: list[Finding] = []  # disjoint, ordered by start (so by end too)
    starts: list[int] = []
    ordered = sorted(enumerate(findings), key=lambda pair: (pair[1].start - pair[1].end, pair[0]))
    for _, finding in ordered:
        at = bisect.bisect_left(starts, finding.end)
        if at and kept[at - 1].end > finding.start:
            continue  # the kept one before it reaches into it
        kept.insert(at, finding)
        starts.insert(at, finding.start)
    return kept


class Detector:
    """Finds credentials in decoded text: known values (and encodings), then key shapes.

    Args:
        secrets: variable -> value of the credentials the environment holds (see
            ``secret_values``); each is looked for in every encoding ``variants`` lists.
    """

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        pairs = [
            (variant, name)
            for name, value in (secrets or {}).items()
            for variant in variants(value)
        ]
        self.known = sorted(pairs, key=lambda pair: -len(pair[0]))

    def find(self, text: str) -> list[Finding]:
        """Credentials in ``text``: each known value found, then each key shape."""
        found = []
        for variant, name in self.known:
            start = text.find(variant)
            if start >= 0:
                found.append(Finding(f"the value of {name}", start, start + len(variant), variant))
        return widest(found + shapes(text))

    def labelled(self, name: str, value: str) -> Finding | None:
        """A random-looking value under a credential's name (``"api_key": "..."``)."""
        if is_secret_name(name) and looks_random(value.strip(), minimum=16):
            return Finding(f"a value named {name!r}", 0, len(value), value)
        return None


class Cleaner:
    """Replaces credentials in text meant to be shown or saved (reports, CLI output).

    Known values (and their encodings) become their placeholder, as in cassettes;
    any other key shape becomes ``[redacted]``.
    """

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        self._known = sorted(
            (
                (variant, placeholder(name))
                for name, value in (secrets or {}).items()
                if value
                for variant in variants(value)
            ),
            key=lambda pair: -len(pair[0]),
        )

    def text(self, text: str) -> str:
        for variant, stand_in in self._known:
            if variant in text:
                text = text.replace(variant, stand_in)
        for finding in sorted(shapes(text), key=lambda f: f.start, reverse=True):
            text = text[: finding.start] + REDACTED + text[finding.end :]
        return text

    def data(self, value: Any) -> Any:
        """A copy of JSON-like ``value`` with every string (keys too) cleaned."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(key): self.data(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(item) for item in value]
        return value
