"""What a page API reports back is checked and masked before the model reads it (issue 26).

Item 4: the final URL the provider says it read is checked like a redirect hop: the
policy, then the address table of a direct fetch (literal addresses in every
notation), before any of its text is shown. Item 3: the backend's key is masked in
every field of the result (URL, title, text, errors); a final URL whose host holds
the key is withheld with its text.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agentloop_tools.testing import ScriptedSearch
from agentloop_tools.web import DomainPolicy, fetch, web_fetch
from agentloop_tools.web.backends import ApiPage, exa, tavily
from tests.fetch.helpers import converse, results, turn

TAVILY_KEY = "tvly-test-secret-0123456789"
EXA_KEY = "exa-test-secret-0123456789"
PAGE = "https://docs.python.org/3/tutorial/controlflow.html"
TEXT = "# More Control Flow Tools\n\nThe match statement takes an expression. " * 5
MARK = "The match statement"


def tavily_reply(final: str, text: str = TEXT) -> tuple[int, dict[str, Any]]:
    return 200, {"results": [{"url": final, "raw_content": text}], "failed_results": []}


def exa_reply(final: str, title: str = "Control Flow", text: str = TEXT) -> tuple[int, Any]:
    return 200, {"results": [{"id": PAGE, "url": final, "title": title, "text": text}]}


def read(
    backend: str,
    reply: tuple[int, Any],
    *,
    key: str | None = None,
    url: str = PAGE,
    **options: Any,
) -> tuple[str, bool]:
    script = ScriptedSearch(backend, [reply])
    via = tavily(key or TAVILY_KEY) if backend == "tavily" else exa(key or EXA_KEY)
    tool = web_fetch(via=via, http_client=script.http_client(), **options)
    [result] = results(converse(tool, turn({"url": url})))
    return result.content, result.is_error


# --- item 4: the final URL meets the address table --------------------------------

PRIVATE_FINALS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://127.0.0.1:2375/containers/json",
    "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
    "http://[::ffff:169.254.169.254]/latest/",
    "http://0xa9fea9fe/latest/meta-data/",
    "http://0251.0376.0251.0376/latest/",
    "http://2852039166/latest/",
    "http://10.0.0.5/admin",
    "http://100.100.100.200/latest/meta-data/",
    "http://[::1]:8080/",
    "http://[fd00:ec2::254]/latest/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://0x7f.1/",
]


@pytest.mark.parametrize("final", PRIVATE_FINALS)
@pytest.mark.parametrize("policy", [None, DomainPolicy.block(["evil.example"])])
@pytest.mark.parametrize("backend", ["tavily", "exa"])
def test_a_private_final_url_is_refused_before_its_text_is_shown(
    final: str, policy: DomainPolicy | None, backend: str
) -> None:
    reply = tavily_reply(final) if backend == "tavily" else exa_reply(final)
    content, is_error = read(backend, reply, policy=policy)
    assert is_error
    assert content.startswith("Error: [blocked-address] the redirect to ")
    assert MARK not in content
    # Named as the hop it is, so the audit sees it.
    assert "\n[web_fetch] redirect: http" in content


@pytest.mark.parametrize("final", PRIVATE_FINALS[:4])
def test_allow_private_networks_admits_a_private_final_url(final: str) -> None:
    content, is_error = read("tavily", tavily_reply(final), allow_private_networks=True)
    assert not is_error
    assert MARK in content


def test_a_public_final_url_is_still_read() -> None:
    final = "https://docs.python.org/3.13/tutorial/controlflow.html"
    content, is_error = read("tavily", tavily_reply(final))
    assert not is_error
    assert content.startswith(f"[web_fetch] url: {final}\n")


def test_a_private_final_url_is_refused_by_fetch_too() -> None:
    script = ScriptedSearch("exa", [exa_reply("http://169.254.169.254/latest/meta-data/")])
    result = fetch(PAGE, via=exa(EXA_KEY), http_client=script.http_client())
    assert result.error_code == "blocked-address"
    assert result.page is None


# --- item 3: the key is masked in every field shown -----------------------------


def test_a_key_echoed_in_the_title_is_masked() -> None:
    content, is_error = read("exa", exa_reply(PAGE, title=f"Welcome {EXA_KEY} user"))
    assert not is_error
    assert EXA_KEY not in content
    assert "[web_fetch] title: Welcome *** user\n" in content


@pytest.mark.parametrize("backend", ["tavily", "exa"])
@pytest.mark.parametrize(
    ("template", "shown"),
    [
        ("https://docs.python.org/3/?api_key={key}", "https://docs.python.org/3/?api_key=***"),
        ("https://docs.python.org/{key}/tutorial", "https://docs.python.org/***/tutorial"),
        ("https://docs.python.org/3/#{key}", "https://docs.python.org/3/"),  # fragment dropped
    ],
)
def test_a_key_echoed_in_the_final_url_is_masked(backend: str, template: str, shown: str) -> None:
    key = TAVILY_KEY if backend == "tavily" else EXA_KEY
    final = template.format(key=key)
    reply = tavily_reply(final) if backend == "tavily" else exa_reply(final)
    content, is_error = read(backend, reply)
    assert not is_error
    assert key not in content
    assert content.startswith(f"[web_fetch] url: {shown}\n")
    assert MARK in content


@pytest.mark.parametrize(
    "final",
    [
        f"https://{TAVILY_KEY}.example.com/",
        f"https://{TAVILY_KEY.upper()}.example.com/",  # a browser lower-cases the host
        f"https://docs.{TAVILY_KEY}.python.org/",
    ],
)
def test_a_final_url_whose_host_holds_the_key_is_withheld(final: str) -> None:
    content, is_error = read("tavily", tavily_reply(final))
    assert is_error
    assert content.startswith("Error: [fetch-error] the tavily page API reported a final URL")
    assert TAVILY_KEY not in content.lower()
    assert MARK not in content


def test_a_refused_final_url_names_the_hop_with_the_key_masked() -> None:
    final = f"https://evil.example/copy?k={TAVILY_KEY}"
    content, is_error = read(
        "tavily", tavily_reply(final), policy=DomainPolicy.allow(["python.org"])
    )
    assert is_error
    assert content.startswith("Error: [blocked-by-policy] the redirect to ")
    assert TAVILY_KEY not in content
    assert content.endswith("\n[web_fetch] redirect: https://evil.example/copy?k=***")


@pytest.mark.parametrize(
    "final",
    [
        f"https://user:{TAVILY_KEY}@docs.python.org/",
        f"https://docs.python.org:{TAVILY_KEY}/",
        f"ftp://docs.python.org/{TAVILY_KEY}",
        f"http://169.254.169.254/{TAVILY_KEY}",
    ],
)
def test_an_error_about_the_final_url_never_echoes_the_key(final: str) -> None:
    content, is_error = read("tavily", tavily_reply(final))
    assert is_error
    assert TAVILY_KEY not in content


def test_fetch_returns_the_page_with_the_key_masked() -> None:
    final = f"https://docs.python.org/3/?k={EXA_KEY}"
    script = ScriptedSearch(
        "exa", [exa_reply(final, title=f"t {EXA_KEY}", text=f"{TEXT} {EXA_KEY}")]
    )
    result = fetch(PAGE, via=exa(EXA_KEY), http_client=script.http_client())
    assert result.page is not None
    assert EXA_KEY not in result.page.url
    assert EXA_KEY not in (result.page.title or "")
    assert EXA_KEY not in result.page.text
    assert EXA_KEY not in result.output


class _EncodedKeyApi:
    """A page API of the user's whose key holds characters a URL percent-encodes."""

    name = "custom"
    secrets = ("abc+def/ghi=jk",)

    def build_page_request(self, url: str, max_chars: int) -> httpx.Request:
        return httpx.Request("POST", "https://api.custom.example/read", json={"url": url})

    def parse_page(self, payload: Any, url: str) -> ApiPage | str:
        return ApiPage(payload["url"], payload["title"], payload["text"])


def test_a_custom_key_percent_encoded_in_the_final_url_is_masked() -> None:
    final = "https://docs.python.org/3/?k=abc%2Bdef%2Fghi%3Djk"
    body = {"url": final, "title": "abc+def/ghi=jk", "text": TEXT}
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json=body)))
    result = fetch(PAGE, via=_EncodedKeyApi(), http_client=client)
    assert result.page is not None
    assert result.page.url == "https://docs.python.org/3/?k=***"
    assert result.page.title == "***"
