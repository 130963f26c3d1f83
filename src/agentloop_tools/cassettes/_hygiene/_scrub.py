"""Keep credentials out of cassettes: scrub requests and responses before they are written.

Fail-closed by allowlist: a recorded request or response keeps only the headers a
replay needs or that are known to be harmless (``KEPT_REQUEST_HEADERS``,
``KEPT_RESPONSE_HEADERS``); every other header is dropped. Query parameters not on
``KEPT_PARAMETERS`` keep their name with the value ``[scrubbed]``, URL userinfo is
removed, and every value the environment holds under a credential's name (and its
percent, hex and base64 encodings) becomes a placeholder wherever it appears.
Whatever key-shaped text is left after this is refused by ``_guard``.

Scrubbing runs on the live request too before vcrpy matches it against the cassette,
so a request recorded with a real key matches its replay, which carries the
placeholder instead: both read the same once scrubbed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from agentloop_tools._secrets import placeholder, variants

SCRUBBED = "[scrubbed]"

# What provider SDKs send that a replay (or a reviewer) needs, and nothing that
# identifies the account. Prefixes end with "-".
KEPT_REQUEST_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "anthropic-beta",
        "anthropic-version",
        "connection",
        "content-length",
        "content-type",
        "host",
        "openai-beta",
        "user-agent",
        "x-stainless-",  # the SDKs' platform and retry headers
        "http-referer",  # OpenRouter app attribution
        "x-title",
    }
)
# The SDKs read content-type (JSON or SSE), request ids for their errors, and the
# retry headers; rate-limit headers are kept for reviewers and backoff logic.
KEPT_RESPONSE_HEADERS = frozenset(
    {
        "access-control-",
        "age",
        "alt-svc",
        "anthropic-ratelimit-",
        "cache-control",
        "cf-cache-status",
        "cf-ray",
        "connection",
        "content-encoding",
        "content-language",
        "content-length",
        "content-security-policy",
        "content-type",
        "date",
        "etag",
        "expires",
        "last-modified",
        "openai-processing-ms",
        "openai-version",
        "ratelimit-",
        "request-id",
        "retry-after",
        "retry-after-ms",
        "server",
        "strict-transport-security",
        "transfer-encoding",
        "vary",
        "via",
        "x-content-type-options",
        "x-envoy-upstream-service-time",
        "x-ratelimit-",
        "x-request-id",
        "x-robots-tag",
        "x-should-retry",
    }
)
# Query parameters of provider and search APIs that carry no credential.
KEPT_PARAMETERS = frozenset(
    {
        "alt",
        "api-version",
        "beta",
        "categories",
        "count",
        "country",
        "engines",
        "extra_snippets",
        "format",
        "freshness",
        "gl",
        "hl",
        "include",
        "lang",
        "language",
        "limit",
        "max_results",
        "num",
        "offset",
        "order",
        "page",
        "pageno",
        "q",
        "query",
        "result_filter",
        "safesearch",
        "search_lang",
        "sort",
        "spellcheck",
        "start",
        "stream",
        "summary",
        "text_decorations",
        "time_range",
        "type",
        "ui_lang",
        "units",
    }
)


def kept(name: str, allowed: frozenset[str]) -> bool:
    """Whether a header or parameter name is allowed (entries ending in "-" are prefixes)."""
    lowered = name.lower()
    return lowered in allowed or any(
        lowered.startswith(entry) for entry in allowed if entry.endswith("-")
    )


class Scrubber:
    """Replaces credential values with placeholders and keeps only allowlisted headers.

    Args:
        secrets: variable -> its real value (see
            ``agentloop_tools._secrets.secret_values``). Each value, and each of its
            encodings, is replaced by ``placeholder(variable)`` wherever it appears:
            URL, headers, body.
    """

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self._replacements = sorted(
            (
                (variant, placeholder(name))
                for name, value in secrets.items()
                if value
                for variant in variants(value)
            ),
            key=lambda pair: -len(pair[0]),
        )

    def text(self, value: str) -> str:
        for secret, stand_in in self._replacements:
            if secret in value:
                value = value.replace(secret, stand_in)
        return value

    def data(self, value: bytes | str | None) -> bytes | str | None:
        """A body with every known secret replaced.

        A JSON body is changed in its decoded strings and written again, so a secret
        written with ``\\u`` escapes is found and no escape is cut in half; any other
        body is changed as text (or bytes).
        """
        if not self._replacements or value is None:
            return value
        json_body = self._json(value)
        if json_body is not None:
            return json_body
        if isinstance(value, bytes):
            for secret, stand_in in self._replacements:
                secret_bytes = secret.encode()
                if secret_bytes in value:
                    value = value.replace(secret_bytes, stand_in.encode())
            return value
        return self.text(value)

    def _json(self, body: bytes | str) -> bytes | str | None:
        """The JSON body with secrets replaced, the body itself if it holds none, or None."""
        try:
            text = body.decode("utf-8") if isinstance(body, bytes) else body
        except UnicodeDecodeError:
            return None
        if text.lstrip()[:1] not in ("{", "["):
            return None
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            return None
        before = json.dumps(parsed, ensure_ascii=False)
        if self.text(before) == before:
            return body
        cleaned = json.dumps(_map_strings(parsed, self.text), ensure_ascii=False)
        return cleaned.encode() if isinstance(body, bytes) else cleaned

    def request(self, request: Any) -> Any:
        """A vcrpy ``before_record_request`` hook.

        Changes the request it is given: vcrpy passes a copy of the live request.
        """
        headers = request.headers
        for name in [name for name in headers if not kept(name, KEPT_REQUEST_HEADERS)]:
            del headers[name]
        if self._replacements:
            for name in list(headers):
                headers[name] = self.text(str(headers[name]))
        request.uri = self.uri(request.uri)
        request.body = self.data(request.body)
        return request

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """A vcrpy ``before_record_response`` hook; changes the copy vcrpy passes."""
        headers = response.get("headers") or {}
        for name in list(headers):
            if not kept(name, KEPT_RESPONSE_HEADERS):
                del headers[name]
            else:
                values = headers[name]
                headers[name] = (
                    [self.text(str(v)) for v in values]
                    if isinstance(values, list)
                    else self.text(str(values))
                )
        body = response.get("body")
        if isinstance(body, dict) and "string" in body:
            body["string"] = self.data(body["string"])
        return response

    def uri(self, uri: str) -> str:
        """The URL without userinfo, with unlisted query values scrubbed."""
        uri = self.text(uri) if self._replacements else uri
        parts = urlsplit(uri)
        if "@" in parts.netloc:
            parts = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])
        if parts.query:
            pairs = parse_qsl(parts.query, keep_blank_values=True)
            if any(not kept(key, KEPT_PARAMETERS) for key, _ in pairs) or ";" in parts.query:
                cleaned = [
                    (key, value if kept(key, KEPT_PARAMETERS) and ";" not in value else SCRUBBED)
                    for key, value in pairs
                ]
                parts = parts._replace(query=urlencode(cleaned))
        if ";" in parts.path:  # matrix parameters (";key=...") are not kept either
            parts = parts._replace(path=parts.path.split(";", 1)[0])
        return urlunsplit(parts)


def _map_strings(value: Any, change: Any) -> Any:
    """``value`` (parsed JSON) with ``change`` applied to every string in it, in place."""
    if isinstance(value, str):
        return change(value)
    stack: list[Any] = [value] if isinstance(value, dict | list) else []
    while stack:
        item = stack.pop()
        pairs: Any = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in list(pairs):
            if isinstance(child, str):
                item[key] = change(child)
            elif isinstance(child, dict | list):
                stack.append(child)
    return value
