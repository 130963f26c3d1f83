"""The SearchBackend base class, the protocol it keeps for typing, and web.backends' surface."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentloop_tools.web import SearchHit, search
from agentloop_tools.web import backends as backends_module
from agentloop_tools.web.backends import (
    BraveBackend,
    ExaBackend,
    SearchBackend,
    SearchBackendLike,
    SearchOptions,
    SearxngBackend,
    TavilyBackend,
)

SECRET = "intranet-secret-0123456789"
HIT = {"rows": [{"title": "Docs", "link": "https://docs.python.org/3/", "text": "s"}]}


def _answer(status: int, body: object) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(status, json=body)))


class Minimal(SearchBackend):
    """Only what a subclass must write."""

    name = "minimal"

    def build_request(self, query: str, count: int, policy: object) -> httpx.Request:
        return httpx.Request("GET", "https://search.corp.example/api", params={"q": query})

    def parse(self, payload: Any) -> list[SearchHit]:
        return [SearchHit(row["title"], row["link"], row["text"]) for row in payload["rows"]]


def test_a_subclass_takes_every_optional_member_from_the_base_class() -> None:
    backend = Minimal()
    assert backend.requests_per_second is None
    assert backend.secrets == ()
    assert backend.max_query_chars is None
    assert backend.setup_hint == ""
    assert backend.exact_as_of is False
    assert backend.classify(429, {}) is None
    request = backend.build_search_request("python", 3, None, SearchOptions())
    assert request.url.params["q"] == "python"
    result = search(backend, "python docs", http_client=_answer(200, HIT), sleep=lambda s: None)
    assert result.ok, result.output
    assert [hit.url for hit in result.hits] == ["https://docs.python.org/3/"]


def test_a_subclass_that_writes_build_search_request_gets_build_request_from_it() -> None:
    class Narrowing(SearchBackend):
        name = "narrowing"

        def build_search_request(
            self, query: str, count: int, policy: object, options: SearchOptions
        ) -> httpx.Request:
            return httpx.Request("GET", "https://search.corp.example/v2", params={"q": query})

        def parse(self, payload: Any) -> list[SearchHit]:
            return []

    request = Narrowing().build_request("python", 3, None)
    assert str(request.url) == "https://search.corp.example/v2?q=python"


def test_a_subclass_that_builds_no_request_is_a_coded_search_failure() -> None:
    class NoRequest(SearchBackend):
        name = "norequest"

        def parse(self, payload: Any) -> list[SearchHit]:
            return []

    result = search(NoRequest(), "python docs", http_client=_answer(200, {}))
    assert not result.ok
    assert result.error_code == "search-failed"
    assert "could not build the request (NotImplementedError)" in result.output


@pytest.mark.parametrize("backend", [BraveBackend, TavilyBackend, ExaBackend, SearxngBackend])
def test_the_built_in_backends_subclass_the_base_class(backend: type[object]) -> None:
    assert SearchBackend in backend.__mro__
    # The adapters live on the base class, written once.
    assert "build_request" not in vars(backend) or backend is SearxngBackend
    assert "secrets" not in vars(backend)


def test_a_backend_that_only_satisfies_the_protocol_keeps_every_optional_member() -> None:
    class Plain:
        """Not a subclass: name, build_request and parse, and every optional member."""

        name = "plain"
        secrets = (SECRET,)
        setup_hint = "check INTRANET_TOKEN"
        max_query_chars = 20

        def build_request(self, query: str, count: int, policy: object) -> httpx.Request:
            raise AssertionError("build_search_request is used when present")

        def build_search_request(
            self, query: str, count: int, policy: object, options: SearchOptions
        ) -> httpx.Request:
            return httpx.Request("GET", "https://search.corp.example/api", params={"q": query})

        def parse(self, payload: Any) -> list[SearchHit]:
            return []

        def classify(self, status: int, payload: Any) -> str | None:
            return "quota-exceeded" if status == 418 else None

    assert isinstance(Plain(), SearchBackendLike)
    assert not isinstance(Plain(), SearchBackend)
    refused = search(
        Plain(), "python docs", http_client=_answer(418, {"error": f"token {SECRET} spent"})
    )
    assert refused.error_code == "quota-exceeded"
    assert SECRET not in refused.output
    assert "token *** spent" in refused.output
    rejected = search(Plain(), "python docs", http_client=_answer(401, {}))
    assert rejected.error_code == "not-configured"
    assert "check INTRANET_TOKEN" in rejected.output
    long = search(Plain(), "a query longer than twenty characters", http_client=_answer(200, {}))
    assert long.error_code == "query-rejected"
    assert "plain accepts at most 20" in long.output


def test_the_engine_and_the_tool_read_backend_members_without_getattr_defaults() -> None:
    root = Path(backends_module.__file__).parent / "_search"
    for module in ("_engine.py", "_tool.py"):
        tree = ast.parse((root / module).read_text(encoding="utf-8"))
        defaulted = [
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr")
            and len(node.args) == 3
            and "backend" in ast.unparse(node.args[0])
        ]
        assert defaulted == [], f"{module} lines {defaulted}"


def test_web_backends_all_is_exactly_its_public_names_and_no_standard_library_name() -> None:
    public = sorted(
        name for name in vars(backends_module) if name.isidentifier() and not name.startswith("_")
    )
    assert public == sorted(backends_module.__all__)
    for name in public:
        where = getattr(getattr(backends_module, name), "__module__", "agentloop_tools")
        assert where.startswith("agentloop_tools"), (name, where)
        assert name not in sys.stdlib_module_names, name
    assert not hasattr(backends_module, "_REGISTRY")
