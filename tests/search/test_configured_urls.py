"""A configured URL quoted in an error keeps its secrets to itself (issue 26, item 2).

``SEARXNG_URL`` and ``ANTHROPIC_BASE_URL`` may carry a password, a token in the
query or the fragment; a message naming the URL masks them whether it parses or not.
"""

from __future__ import annotations

import pytest

from agentloop_tools.web import search_tool
from agentloop_tools.web._domains._masked import masked_url
from agentloop_tools.web._search._backends_builtin import SearxngBackend
from agentloop_tools.web.backends import backend_from_env, searxng

SECRET = "S3cretPassw0rd"

# Each is refused (a typo, a broken host, a query or fragment) and holds SECRET.
REFUSED = [
    f"https://admin:{SECRET}@searx.example.com:8O80",
    f"https://admin:{SECRET}@[::1",
    f"https://admin:{SECRET}@searx.example.com:8080/?x=1",
    f"https://searx.example.com/?token={SECRET}",
    f"https://searx.example.com/search?a=1&token={SECRET}",
    f"https://searx.example.com/#{SECRET}",
    f"https://searx.example.com/#access_token={SECRET}",
    f"ftp://admin:{SECRET}@searx.example.com/",
    f"https://a@b:{SECRET}@searx.example.com/",
    f"https://admin:{SECRET}#x@searx.example.com/",
    f"https://{SECRET}@searx.example.com:99999/",
]


@pytest.mark.parametrize("url", REFUSED)
def test_searxng_never_echoes_a_secret_of_its_url(url: str) -> None:
    with pytest.raises(ValueError, match=r"searxng\(base_url=") as raised:
        searxng(url)
    assert SECRET not in str(raised.value)


@pytest.mark.parametrize("url", REFUSED)
def test_backend_from_env_never_echoes_a_secret_of_searxng_url(url: str) -> None:
    with pytest.raises(ValueError, match="searxng") as raised:
        backend_from_env({"SEARXNG_URL": url})
    assert SECRET not in str(raised.value)


def test_the_masked_url_still_names_the_host_and_the_port_typo() -> None:
    with pytest.raises(ValueError, match="not a URL") as raised:
        searxng(f"https://admin:{SECRET}@searx.example.com:8O80")
    message = str(raised.value)
    assert "'https://***@searx.example.com:8O80'" in message
    assert "8O80" in message  # httpx's own complaint is kept, masked


@pytest.mark.parametrize(
    "base",
    [
        f"https://gw:{SECRET}@host.example/anthropic",
        f"https://gw.example/anthropic?key={SECRET}",
        f"https://gw.example/anthropic#{SECRET}",
        f"https://gw:{SECRET}@[::1/anthropic",
    ],
)
def test_search_tool_never_echoes_a_secret_of_anthropic_base_url(base: str) -> None:
    env = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": base}
    with pytest.raises(ValueError, match="ANTHROPIC_BASE_URL='") as raised:
        search_tool(env)
    assert SECRET not in str(raised.value)


def test_a_searxng_backend_built_directly_masks_its_url_in_its_repr() -> None:
    backend = SearxngBackend(f"https://admin:{SECRET}@searx.example.com")
    assert SECRET not in repr(backend)
    assert "searx.example.com" in repr(backend)


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("http://localhost:8080", "http://localhost:8080"),
        ("https://u:p@h.example:8O80/x", "https://***@h.example:8O80/x"),
        ("https://h.example/?a=1&b&c=&&d=2", "https://h.example/?a=***&***&c=&&d=***"),
        ("https://h.example/p#frag", "https://h.example/p#***"),
        ("https://h.example/?q=a@b.example", "https://h.example/?q=***"),
        ("https://h.example/~u@x", "https://h.example/~u@x"),  # an @ in the path is no userinfo
        ("https://u:pa/ss@h.example/", "https://***@h.example/"),  # nor a typed password's /
        ("u:p@h.example", "***@h.example"),
        ("https://h.example/#", "https://h.example/#"),
    ],
)
def test_what_the_masking_helper_keeps_and_masks(url: str, masked: str) -> None:
    assert masked_url(url) == masked
