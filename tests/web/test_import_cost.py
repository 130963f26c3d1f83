"""``import agentloop_tools.web`` loads no transport, cache, extraction or cassette library.

The command line and the plugin read transcripts with ``agentloop_tools.web`` and never
send a request: httpx, httpcore, cachetools, protego, the extractors, vcrpy and yaml
load when a tool is built or used. Each check runs in a fresh interpreter, since this
test session has long imported them all.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

HEAVY = (
    "httpx",
    "httpcore",
    "cachetools",
    "protego",
    "trafilatura",
    "pypdf",
    "selectolax",
    "vcr",
    "yaml",
    "tenacity",
)

# After the import is measured, the same interpreter builds both tools and calls their
# handlers (agentloop passes its deps first; these tools take none):
# a search answered by an in-memory transport, a page read from a loopback server.
CHILD = textwrap.dedent(
    """
    import json, sys, threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import agentloop_tools.web as web
    from agentloop_tools.web import backends

    heavy = json.loads(sys.argv[1])
    at_import = sorted(name for name in heavy if name in sys.modules)

    import httpx

    def answer(request):
        hits = [{"title": "Python", "url": "https://docs.python.org/3/", "description": "Docs"}]
        return httpx.Response(200, json={"web": {"results": hits}})

    search = web.web_search(
        backends.brave("k" * 16), http_client=httpx.Client(transport=httpx.MockTransport(answer))
    )
    searched = search.handler(None, query="python docs", count=None,
                              allowed_domains=None, blocked_domains=None)

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<html><title>Local</title><body><p>Hello from loopback.</p></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    fetch = web.web_fetch(allow_private_networks=True)
    fetched = fetch.handler(None, url=f"http://127.0.0.1:{server.server_port}/", start=None)
    server.shutdown()
    print(json.dumps({
        "at_import": at_import,
        "after_use": sorted(name for name in heavy if name in sys.modules),
        "searched": searched,
        "fetched": fetched,
    }))
    """
)

# The client-side tools are built on agentloop 0.6 tools (and older agentloop releases
# load their own transports): .ci/lowest deselects this module on agentloop 0.4 and 0.5.
pytestmark = [pytest.mark.core, pytest.mark.agentloop_06]


def run_child() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_importing_the_web_tools_loads_no_transport_cache_extraction_or_cassette_library() -> None:
    result = run_child()
    assert result["at_import"] == [], (
        f"import agentloop_tools.web loaded {result['at_import']}: import them where a tool "
        "is built or used (a function-level import, or a module the face does not import)"
    )


def test_the_tools_still_work_once_built_and_load_their_libraries_then() -> None:
    result = run_child()
    assert "https://docs.python.org/3/" in str(result["searched"])
    assert "Hello from loopback." in str(result["fetched"])
    assert {"httpx", "httpcore", "cachetools", "tenacity"} <= set(result["after_use"])


def test_the_bare_import_in_a_fresh_interpreter_names_none_of_them() -> None:
    # The plain form of the check, as the issue states it.
    done = subprocess.run(
        [sys.executable, "-c", "import agentloop_tools.web, sys; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = set(ast.literal_eval(done.stdout))
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
