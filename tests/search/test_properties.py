"""Hypothesis: whatever a backend returns, the model never reads a URL the policy refuses."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy, SearchHit
from agentloop_tools.web._client_search import filter_and_render
from agentloop_tools.web._render import read_rendered

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
def test_the_rendered_text_never_shows_a_refused_url(
    found: list[SearchHit], policy: DomainPolicy, count: int
) -> None:
    text = filter_and_render(found, count, policy)
    for url, _ in read_rendered(text):
        assert policy.permits(url)
    for url in URL_IN_TEXT.findall(text):
        assert policy.permits(url), (url, text)
    assert len(list(read_rendered(text))) <= count
