"""The pinned connection still speaks TLS to the name: SNI and verification use the host."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import pytest

from agentloop_tools.web import web_fetch
from tests.fetch.helpers import fetch_once


def _certificate(directory: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    key, cert = directory / "key.pem", directory / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=site.example"),
            *("-addext", "subjectAltName=DNS:site.example"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_tls_goes_to_the_checked_address_but_verifies_the_name(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    names: list[str | None] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    def remember(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        names.append(name)

    context.sni_callback = remember
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        connection, _ = listener.accept()
        try:
            with context.wrap_socket(connection, server_side=True):
                pass  # the client refuses our self-signed certificate
        except (ssl.SSLError, OSError):
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    tool = web_fetch(allow_private_networks=True, resolver=lambda host: ["127.0.0.1"], timeout=5)
    result = fetch_once(tool, f"https://site.example:{port}/")
    thread.join(5)
    listener.close()
    assert names == ["site.example"]  # SNI names the host, not 127.0.0.1
    assert result.content.startswith("Error: [fetch-error] https://site.example:"), result.content
    assert "CERTIFICATE_VERIFY_FAILED" in result.content  # verification stayed on
