"""A URL web_fetch refused before sending anything is an attempt the policy held.

``policy.audit()`` still returns it, marked ``Violation.refused``; everything a tool read
or reached stays an ordinary violation. The transcripts come from a real agent (a
scripted model) calling the real web_fetch, its pages on a mock transport; the one case
no offline run can produce (a hop refused as its connection opened) is written with the
tool's own error and trailer builders.
"""

from __future__ import annotations

import httpx
import pytest
from agentloop.transcript import Message, TextPart, ToolCallPart, ToolResultPart

from agentloop_tools.web import DomainPolicy, Violation, web_fetch
from agentloop_tools.web._fetch._codes import FetchRefusal
from agentloop_tools.web._transcript._fetch_format import requested_trailer
from agentloop_tools.web._transcript._tool_calls import our_tool_calls
from tests.fetch.helpers import Recorder, converse, html_page, public_resolver, turn

pytestmark = [pytest.mark.core, pytest.mark.agentloop_06]

ALLOW = DomainPolicy.allow(["python.org"])
EVIL = "https://evil.example/page"


def _audit(judge: DomainPolicy, *calls: dict[str, object], **tool: object) -> list[Violation]:
    pages = Recorder(tool.pop("respond", None))  # type: ignore[arg-type]
    fetch = web_fetch(http_client=pages.client(), resolver=public_resolver, **tool)  # type: ignore[arg-type]
    return judge.audit(converse(fetch, turn(*calls)))


def test_a_url_the_tool_refused_by_its_policy_is_a_refused_violation() -> None:
    [found] = _audit(ALLOW, {"url": EVIL}, policy=ALLOW)
    assert (found.where, found.url, found.refused) == ("tool-call", EVIL, True)
    assert found.rule is None  # the 0.1.x fields are as before
    assert str(found) == (
        f"message 1 tool-call: {EVIL} (not on the allowlist; refused by the tool, nothing read)"
    )


def test_a_url_the_tool_read_stays_a_violation() -> None:
    found = _audit(ALLOW, {"url": EVIL})  # the tool has no policy: it reads the page
    assert [(v.where, v.refused) for v in found] == [("tool-call", False), ("tool-result", False)]


def test_a_private_address_the_tool_refused_is_refused() -> None:
    [found] = _audit(ALLOW, {"url": "http://127.0.0.1/admin"})
    assert (found.url, found.refused) == ("http://127.0.0.1/admin", True)


def test_a_page_robots_txt_forbids_is_refused_and_robots_txt_itself_was_read() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/robots.txt":
            return httpx.Response(200, text="User-agent: *\nDisallow: /private\n")
        return html_page("<p>secret</p>")

    policy = DomainPolicy.block(["python.org/private"])
    asked = "https://docs.python.org/private/notes"
    [found] = _audit(policy, {"url": asked}, respect_robots=True, respond=respond)
    assert (found.where, found.url, found.refused) == ("tool-call", asked, True)


def test_a_url_that_redirected_to_a_refused_hop_was_requested_so_it_stays_a_violation() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": "https://evil.example/next"})

    asked = "https://other.example/r"
    # The tool's own policy lets other.example through and refuses the hop; the
    # audit's refuses other.example, which answered: it was reached.
    [found] = _audit(
        ALLOW, {"url": asked}, policy=DomainPolicy.block(["evil.example"]), respond=respond
    )
    assert (found.where, found.url, found.refused) == ("tool-call", asked, False)


def test_a_start_past_the_end_came_after_the_page_was_read() -> None:
    found = _audit(ALLOW, {"url": EVIL, "start": 10**6})
    assert [(v.where, v.refused) for v in found] == [("tool-call", False)]


def _transcript(asked: str, result: str) -> list[Message]:
    return [
        Message(role="user", content=(TextPart(text="Read it."),)),
        Message(
            role="assistant",
            content=(ToolCallPart(id="f1", tool_name="web_fetch", arguments={"url": asked}),),
        ),
        Message(
            role="user",
            content=(
                ToolResultPart(call_id="f1", tool_name="web_fetch", content=result, is_error=True),
            ),
        ),
    ]


def _error(code: str, message: str, *requested: tuple[str, str]) -> str:
    failure = FetchRefusal(code, message, "do not retry")
    return f"Error: {failure.failure}{requested_trailer(list(requested))}"  # type: ignore[arg-type]


def test_a_redirect_hop_refused_as_its_connection_opened_is_refused() -> None:
    hop = "https://evil.example/next"
    result = _error(
        "blocked-address", f"{hop} resolves to 10.0.0.1, a private address", ("redirect", hop)
    )
    found = ALLOW.audit(_transcript("https://docs.python.org/3/", result))
    # The URL asked for answered with the redirect (it was reached, and is permitted);
    # the hop was refused before a byte was sent.
    assert [(v.where, v.url, v.refused) for v in found] == [("redirect", hop, True)]


def test_a_hop_requested_before_the_refusal_stays_a_violation() -> None:
    hop, last = "https://evil.example/next", "https://docs.python.org/3/"
    result = _error(
        "blocked-address", f"{last} resolves to 10.0.0.1, a private address",
        ("redirect", hop), ("redirect", last),
    )  # fmt: skip
    found = ALLOW.audit(_transcript("https://docs.python.org/", result))
    assert [(v.where, v.url, v.refused) for v in found] == [("redirect", hop, False)]


@pytest.mark.parametrize(
    "result",
    [
        # A refusal that names another URL than the one asked for.
        _error("blocked-by-policy", "https://evil.example/other is not permitted by the policy"),
        # A hop refused by the policy: the URL asked for answered first.
        _error("blocked-by-policy", "the redirect to 'https://evil.example/x' is not permitted"),
        # Not one of the tool's refusals.
        _error("fetch-error", f"{EVIL} could not be reached"),
        "Error: [blocked-by-policy]",
        "Error: something else",
        "",
    ],
)
def test_anything_but_a_refusal_of_the_url_itself_stays_a_violation(result: str) -> None:
    found = ALLOW.audit(_transcript(EVIL, result))
    assert [(v.where, v.refused) for v in found] == [("tool-call", False)]


def test_the_report_of_calls_agrees_with_the_audit() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": "https://evil.example/next"})

    pages = Recorder(respond)
    policy = DomainPolicy.block(["evil.example"])
    fetch = web_fetch(http_client=pages.client(), resolver=public_resolver, policy=policy)
    transcript = converse(fetch, turn({"url": "https://other.example/r"}, {"url": EVIL}))
    hop, refused = our_tool_calls(transcript.messages)
    assert (hop.outcome, hop.describe()) == (
        "failed",
        "web_fetch failed ([blocked-by-policy]): no result reached the model",
    )
    assert (refused.outcome, refused.code) == ("refused", "blocked-by-policy")
    assert [v.refused for v in ALLOW.audit(transcript)] == [False, True]
