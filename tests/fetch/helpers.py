"""Drive web_fetch the way an application does: a real agentloop Agent, a scripted model."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from agentloop import ToolSpec, Transcript
from agentloop.provider import ModelResponse, StopReason, Usage
from agentloop.transcript import TextPart, ToolCallPart, ToolResultPart

from tests import agents
from tests.transcripts import results as results

PUBLIC = "93.184.215.14"  # a public address the test resolvers answer with


def public_resolver(host: str) -> list[str]:
    """Every name is one public address: no DNS in tests."""
    return [PUBLIC]


def turn(*calls: dict[str, Any]) -> ModelResponse:
    """One model turn calling web_fetch (or another tool) with these arguments."""
    parts = [
        ToolCallPart(
            id=f"call_{index}",
            tool_name=call.pop("tool", "web_fetch"),
            arguments={"start": None, **call},
        )
        for index, call in enumerate(calls)
    ]
    return ModelResponse(
        content=tuple(parts),
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(),
        model="fake-1",
        provider="fake",
    )


def answer(text: str = "Done.") -> ModelResponse:
    return ModelResponse(
        content=(TextPart(text=text),),
        stop_reason=StopReason.END_TURN,
        usage=Usage(),
        model="fake-1",
        provider="fake",
    )


def converse(tool: ToolSpec, *turns: ModelResponse) -> Transcript:
    """Run a real Agent over scripted turns (each followed by the next) and a final answer."""
    return agents.converse([tool], [*turns, answer()], prompt="Read the page.")


def fetch_once(tool: ToolSpec, url: str, start: int | None = None) -> ToolResultPart:
    """The one result of the model asking ``tool`` for ``url``."""
    [result] = results(converse(tool, turn({"url": url, "start": start, "tool": tool.name})))
    return result


class Recorder:
    """An httpx MockTransport handler that records every request and answers from a table."""

    def __init__(self, respond: Callable[[httpx.Request], httpx.Response] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self._respond = respond or (lambda request: html_page("<p>" + "Text. " * 40 + "</p>"))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self._respond(request)

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self))

    @property
    def urls(self) -> list[str]:
        return [str(request.url) for request in self.requests]


def html_page(body: str, title: str = "A page", status: int = 200) -> httpx.Response:
    return httpx.Response(
        status,
        headers={"content-type": "text/html; charset=utf-8"},
        text=f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>",
    )


class _Handler(http.server.BaseHTTPRequestHandler):
    hits: list[str]
    serve: Callable[[http.server.BaseHTTPRequestHandler], None]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        type(self).serve(self)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def local_server(
    serve: Callable[[http.server.BaseHTTPRequestHandler], None],
) -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1: yields its base URL and the paths it received."""
    hits: list[str] = []
    handler = type("Handler", (_Handler,), {"hits": hits, "serve": staticmethod(serve)})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()
