"""What a credential looks like, so nothing key-shaped is written to disk or printed.

Shared by the cassette layer (scrub before writing, refuse what slipped through) and
the assertion helpers (redact failure messages). Pure: no I/O, no environment reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# agentloop's credential variables (agentloop.config.Settings.from_env).
CREDENTIAL_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "MODAL_PROXY_TOKEN_ID",
    "MODAL_PROXY_TOKEN_SECRET",
)
# Headers that carry credentials or identify the account, in requests or responses.
CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
        "modal-key",
        "modal-secret",
    }
)
# Query parameters that carry credentials.
CREDENTIAL_PARAMETERS = frozenset({"key", "api_key", "apikey", "access_token", "token", "secret"})

_KEY_SHAPES = re.compile(
    r"\bsk-ant-[A-Za-z0-9_\-]{16,}"  # Anthropic
    r"|\bsk-or-v1-[A-Za-z0-9]{16,}"  # OpenRouter
    r"|\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"  # OpenAI
    r"|\b(?:ak|as|wk)-[A-Za-z0-9]{20,}"  # Modal tokens
    r"|AKIA[0-9A-Z]{16}"  # AWS access key id
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"  # GitHub tokens
    r"|\bxox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/=\-]{20,}"  # any bearer token
)
PLACEHOLDER_PREFIX = "agentloop-tools-placeholder-"


def placeholder(variable: str) -> str:
    """The stand-in for a credential variable: clearly fake, and the same on every run."""
    return f"{PLACEHOLDER_PREFIX}{variable}"


def find_key_shapes(text: str) -> list[str]:
    """Substrings of ``text`` that look like credentials (placeholders excluded)."""
    return [
        match.group()
        for match in _KEY_SHAPES.finditer(text)
        if PLACEHOLDER_PREFIX not in match.group()
    ]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with known secret values and key-shaped strings replaced."""
    for secret in secrets:
        if secret and len(secret) >= 8:
            text = text.replace(secret, "[redacted]")
    return _KEY_SHAPES.sub("[redacted]", text)


def secret_values(environment: Mapping[str, str]) -> dict[str, str]:
    """Credential variable -> its value, for the variables set to a real-looking value."""
    return {
        name: value
        for name in CREDENTIAL_VARIABLES
        if (value := environment.get(name, ""))
        and len(value) >= 8
        and not value.startswith(PLACEHOLDER_PREFIX)
    }
