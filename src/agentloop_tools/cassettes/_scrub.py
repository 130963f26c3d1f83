"""Keep credentials out of cassettes: scrub requests and responses before they are written.

Scrubbing runs on the live request too before vcrpy matches it against the cassette,
so a request recorded with a real key matches its replay, which carries the
placeholder instead: both read the same once scrubbed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from agentloop_tools._secrets import (
    CREDENTIAL_HEADERS,
    CREDENTIAL_PARAMETERS,
    placeholder,
)

SCRUBBED = "[scrubbed]"


class Scrubber:
    """Replaces credential values with placeholders and drops credential headers.

    Args:
        secrets: credential variable -> its real value (see
            ``agentloop_tools._secrets.secret_values``). Each value is replaced by
            ``placeholder(variable)`` wherever it appears: URL, headers, body.
    """

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self._replacements = sorted(
            ((value, placeholder(name)) for name, value in secrets.items() if value),
            key=lambda pair: -len(pair[0]),
        )

    def text(self, value: str) -> str:
        for secret, stand_in in self._replacements:
            if secret in value:
                value = value.replace(secret, stand_in)
        return value

    def data(self, value: bytes | str | None) -> bytes | str | None:
        if not self._replacements or value is None:
            return value
        if isinstance(value, bytes):
            for secret, stand_in in self._replacements:
                secret_bytes = secret.encode()
                if secret_bytes in value:
                    value = value.replace(secret_bytes, stand_in.encode())
            return value
        return self.text(value)

    def request(self, request: Any) -> Any:
        """A vcrpy ``before_record_request`` hook.

        Changes the request it is given: vcrpy passes a copy of the live request.
        """
        headers = request.headers
        for name in [name for name in headers if name.lower() in CREDENTIAL_HEADERS]:
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
            if name.lower() in CREDENTIAL_HEADERS:
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
        uri = self.text(uri) if self._replacements else uri
        if "?" not in uri:
            return uri
        parts = urlsplit(uri)
        if not parts.query:
            return uri
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if not any(key.lower() in CREDENTIAL_PARAMETERS for key, _ in pairs):
            return uri
        cleaned = [
            (key, SCRUBBED if key.lower() in CREDENTIAL_PARAMETERS else value)
            for key, value in pairs
        ]
        return urlunsplit(parts._replace(query=urlencode(cleaned)))
