"""``agentloop-tools evidence`` renders the evidence record, read from real recordings.

The hosted search counts and queries must be what the provider recorded: Anthropic's
billed ``usage.server_tool_use.web_search_requests`` summed over the requests, its
``server_tool_use`` blocks' queries; OpenAI's ``web_search_call`` items of type search.
The expectation is computed here from the raw YAML, independently of the reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentloop_tools.cli import main
from tests.real_cassettes import FILES, needs_real_cassettes

pytestmark = pytest.mark.agentloop_06


def _body(response: dict[str, Any]) -> str:
    body = response.get("body") or {}
    if "json" in body:
        return json.dumps(body["json"])
    text = body.get("string", "")
    return text.decode() if isinstance(text, bytes) else str(text)


def _events(text: str) -> list[dict[str, Any]]:
    found = []
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip().startswith("{"):
            found.append(json.loads(line[5:]))
    return found


def _final(text: str) -> dict[str, Any] | None:
    """The response a body stands for: its JSON, or what a stream's events add up to."""
    if text.lstrip().startswith("{"):
        value: dict[str, Any] = json.loads(text)
        return value
    events = _events(text)
    completed = [e["response"] for e in events if e.get("type") == "response.completed"]
    if completed:
        last: dict[str, Any] = completed[-1]
        return last
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, str] = {}
    for event in events:
        if event.get("type") == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        delta = event.get("delta") or {}
        if delta.get("type") == "input_json_delta":
            inputs[event["index"]] = inputs.get(event["index"], "") + delta["partial_json"]
    for index, text in inputs.items():
        blocks[index]["input"] = json.loads(text) if text else {}
    usage: dict[str, Any] = {}
    for event in events:  # message_start, then message_delta's cumulative usage
        usage.update((event.get("message") or {}).get("usage") or event.get("usage") or {})
    content = [blocks[index] for index in sorted(blocks)]
    return {"content": content, "usage": usage} if content or usage else None


def expected(path: Path) -> tuple[int, list[str]] | None:
    """(searches, queries) from the raw recording; None when it holds no model answer."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    searches, queries, answered = 0, [], False
    for interaction in data["interactions"]:
        request, response = interaction["request"], interaction["response"]
        uri = request["uri"].split("?")[0].rstrip("/")
        if request["method"] != "POST" or not 200 <= response["status"]["code"] < 300:
            continue
        final = _final(_body(response))
        if final is None:
            continue
        if uri.endswith("/messages"):
            answered = True
            blocks = [b for b in final.get("content") or [] if b.get("type") == "server_tool_use"]
            asked = [b["input"].get("query", "") for b in blocks if b["name"] == "web_search"]
            queries += asked
            billed = (final.get("usage") or {}).get("server_tool_use") or {}
            searches += billed.get("web_search_requests", len(asked))
        elif uri.endswith("/responses"):
            answered = True
            for item in final.get("output") or []:
                action = item.get("action") or {}
                if (
                    item.get("type") == "web_search_call"
                    and action.get("type", "search") == "search"
                ):
                    searches += 1
                    queries.append(action.get("query") or (action.get("queries") or [""])[0])
    return (searches, queries) if answered else None


def record_of(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    main(["evidence", "--format", "json", str(path)])
    document = json.loads(capsys.readouterr().out)
    files = document["files"] if isinstance(document, dict) else document
    [file] = files
    record: dict[str, Any] = file["evidence"]
    return record


@needs_real_cassettes
@pytest.mark.parametrize("path", FILES, ids=lambda path: path.stem[:60])
def test_hosted_searches_are_counted_as_the_provider_recorded_them(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wanted = expected(path)
    if wanted is None:
        pytest.skip("no Anthropic Messages or OpenAI Responses answer in this recording")
    record = record_of(path, capsys)
    searches, queries = wanted
    assert record["totals"]["searches"] == searches
    assert [q for c in record["conversations"] for q in
            (h["target"] for h in c["hosted"] if h["kind"] == "search")] == queries  # fmt: skip


def test_a_paused_turns_search_billed_in_its_continuation_counts_once(
    real_cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = record_of(real_cassettes / "pydantic-ai__test_pause_turn_web_search_vcr.yaml", capsys)
    # Billed 10 in the paused answer and 5 in its continuation; 15 queries in blocks.
    assert record["totals"]["searches"] == 15
    assert record["totals"]["model_requests"] == 2
    assert record["totals"]["input_tokens"] is not None


def test_the_table_shows_the_record_and_says_unknown_for_what_was_not_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentloop_tools.testing import anthropic_message, anthropic_search, anthropic_text

    answer = anthropic_message(
        [anthropic_search("rust book", ["https://doc.rust-lang.org/book/"]),
         anthropic_text("See https://doc.rust-lang.org/book/")]
    )  # fmt: skip
    del answer["usage"]  # no usage: tokens unknown, the search counted from its block
    cassette = tmp_path / "c.yaml"
    cassette.write_text(
        yaml.safe_dump(
            {
                "interactions": [
                    {
                        "request": {
                            "method": "POST",
                            "uri": "https://api.anthropic.com/v1/messages",
                            "body": json.dumps(
                                {"model": "m", "messages": [{"role": "user", "content": "q"}]}
                            ),
                            "headers": {},
                        },
                        "response": {
                            "status": {"code": 200, "message": "OK"},
                            "headers": {},
                            "body": {"string": json.dumps(answer)},
                        },
                    }
                ],
                "version": 1,
            }
        )
    )
    capsys.readouterr()
    assert main(["evidence", str(cassette)]) == 0
    out = capsys.readouterr().out
    assert "evidence record:" in out
    assert "unknown input tokens" in out
    assert "1 hosted search(es)" in out
    assert "hosted search: rust book" in out
    assert "https://doc.rust-lang.org/book/ [consulted]" in out
