"""Hypothesis: whatever a backend returns, the model never reads a URL the policy refuses."""

from __future__ import annotations

import json
import re

import httpx
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy, SearchHit, web_search
from agentloop_tools.web._search._tool import filter_and_render
from agentloop_tools.web._transcript._search_results import read_rendered
from agentloop_tools.web.backends import brave

POLICIES = [
    DomainPolicy.allow(["python.org", "example.com/docs"]),
    DomainPolicy.block(["evil.example", "example.com/private"]),
]
HOSTS = ["python.org", "docs.python.org", "evil.example", "a.evil.example", "example.com",
         "python.org.evil.example", "xn--pythn-mua.org", "EVIL.example", "127.0.0.1"]  # fmt: skip
PATHS = ["", "/", "/docs/x", "/private/y", "/%2e%2e/private", "?q=https://evil.example/"]
urls = st.builds(
    lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
    st.sampled_from(["http", "https", "HTTPS", "ftp", "javascript"]),
    st.sampled_from(HOSTS),
    st.sampled_from(["", ":443", ":8080"]),
    st.sampled_from(PATHS),
)
texts = st.one_of(
    st.text(max_size=60),
    st.builds(lambda a, u, b: f"{a} {u} {b}", st.text(max_size=10), urls, st.text(max_size=10)),
    st.builds(lambda u: f'<a href="{u}">x</a> &lt;b&gt;', urls),
)
hits = st.builds(SearchHit, title=texts, url=st.one_of(urls, st.text(max_size=30)), snippet=texts,
                 published=st.one_of(st.none(), texts))  # fmt: skip
URL_IN_TEXT = re.compile(
    r"(?i)\b(?:https?|ftp|javascript)://[^\s\[\]()<>\"]+|www\.[^\s\[\]()<>\"]+"
)


@settings(max_examples=200, deadline=None)
@given(st.lists(hits, max_size=20), st.sampled_from(POLICIES), st.integers(1, 20))
@example([SearchHit("t", "https://python.org.evil.example/", "s")], POLICIES[0], 5)
@example([SearchHit("see https://evil.example/x", "https://python.org/", "")], POLICIES[0], 5)
@example([SearchHit("", "http://python.org", "", published="HTTP://PYTHON.ORG:")], POLICIES[0], 1)
def test_the_rendered_text_never_shows_a_refused_url(
    found: list[SearchHit], policy: DomainPolicy, count: int
) -> None:
    text = filter_and_render(found, count, policy)
    for url, _ in read_rendered(text):
        assert policy.permits(url)
    for url in URL_IN_TEXT.findall(text):
        # Trailing punctuation ends the sentence, not the URL, for linkifiers as for readers.
        linked = url.rstrip(".,:;!?'*_~")
        assert policy.permits(linked), (linked, text)
    assert len(list(read_rendered(text))) <= count


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20) | urls,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
brave_items = st.fixed_dictionaries(
    {"title": texts, "url": st.one_of(urls, json_values), "description": texts},
    optional={"page_age": st.one_of(texts, json_values)},
)
payloads = st.one_of(
    st.builds(
        lambda items: {"web": {"results": items}},
        st.lists(st.one_of(brave_items, json_values), max_size=8),
    ),
    json_values,
)


@settings(max_examples=150, deadline=None)
@given(payloads, st.sampled_from(POLICIES))
def test_the_tool_never_shows_a_refused_url_nor_a_traceback(
    payload: object, policy: DomainPolicy
) -> None:
    body = json.dumps(payload).encode()
    client = httpx.Client(
        transport=httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    )
    tool = web_search(
        brave("BSA-property-key", requests_per_second=None), policy=policy, http_client=client
    )
    text = tool.handler(None, query="python", count=20)
    assert text.startswith("Web search results (agentloop-tools)\n")
    for url in URL_IN_TEXT.findall(text):
        # Trailing punctuation ends the sentence, not the URL, for linkifiers as for readers.
        linked = url.rstrip(".,:;!?'*_~")
        assert policy.permits(linked), (linked, text)
