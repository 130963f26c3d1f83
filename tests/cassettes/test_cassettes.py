"""Scrubbing, the readable format and body matching, over generated inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import assume, example, given
from hypothesis import strategies as st
from vcr.request import Request

from agentloop_tools._secrets import find_key_shapes, placeholder, redact
from agentloop_tools.cassettes import BodyMatcher, CassetteSecretError, Scrubber
from agentloop_tools.cassettes import _format as serializer

KEY_CHARS = st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
SECRETS = st.text(KEY_CHARS, min_size=8, max_size=64)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)  # fmt: skip


def request(body: object, uri: str = "https://api.anthropic.com/v1/messages") -> Request:
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return Request("POST", uri, data, {"content-type": "application/json"})


@given(secret=SECRETS, prefix=st.text(max_size=20), suffix=st.text(max_size=20))
@example(secret="sk-ant-api03-" + "A" * 30, prefix="", suffix="")
def test_no_secret_survives_scrubbing_anywhere_in_a_request(
    secret: str, prefix: str, suffix: str
) -> None:
    # A value inside the placeholder's own text ("ANTHROPI") would "survive" trivially.
    assume(secret not in placeholder("ANTHROPIC_API_KEY"))
    scrubber = Scrubber({"ANTHROPIC_API_KEY": secret})
    live = Request(
        "POST",
        f"https://api.anthropic.com/v1/messages?key={secret}&beta=true",
        json.dumps({"prompt": prefix + secret + suffix}),
        {"x-api-key": secret, "authorization": f"Bearer {secret}", "x-note": f"k={secret}"},
    )
    scrubbed = scrubber.request(live)
    text = f"{scrubbed.uri} {scrubbed.headers} {scrubbed.body!r}"
    assert secret not in text
    assert "x-api-key" not in scrubbed.headers
    assert "authorization" not in scrubbed.headers


REAL_LOOKING = st.builds(lambda tail: "sk-ant-api03-" + tail, st.text(KEY_CHARS, min_size=20))


@given(secret=REAL_LOOKING, prefix=st.text(max_size=20), suffix=st.text(max_size=20))
@example(secret="sk-ant-api03-" + "0" * 20, prefix="À", suffix="")
def test_the_placeholder_stands_where_the_key_was(secret: str, prefix: str, suffix: str) -> None:
    body = json.dumps({"prompt": prefix + secret + suffix})
    scrubbed = Scrubber({"ANTHROPIC_API_KEY": secret}).request(request(body))
    prompt = json.loads(scrubbed.body)["prompt"]
    assert prompt == prefix + placeholder("ANTHROPIC_API_KEY") + suffix


@given(secret=SECRETS)
def test_no_secret_survives_in_a_response(secret: str) -> None:
    assume(secret not in placeholder("OPENAI_API_KEY"))
    scrubber = Scrubber({"OPENAI_API_KEY": secret})
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"set-cookie": [f"session={secret}"], "x-echo": [secret]},
        "body": {"string": f'{{"echo": "{secret}"}}'.encode()},
    }
    scrubbed = scrubber.response(response)
    assert secret not in repr(scrubbed)
    assert "set-cookie" not in scrubbed["headers"]


def test_scrubbed_live_requests_match_their_recording() -> None:
    real, stand_in = "sk-ant-api03-" + "R" * 40, placeholder("ANTHROPIC_API_KEY")
    recorded = Scrubber({"ANTHROPIC_API_KEY": real}).request(request({"prompt": f"key {real}"}))
    replayed = Scrubber({}).request(request({"prompt": f"key {stand_in}"}))
    BodyMatcher()(recorded, replayed)  # the placeholder stands in for the key


@given(body=st.dictionaries(st.text(max_size=8), JSON, max_size=5), noise=JSON, other=JSON)
def test_matching_ignores_exactly_the_volatile_fields(
    body: dict[str, Any], noise: Any, other: Any
) -> None:
    matcher = BodyMatcher(("metadata", "user"))
    plain = {key: value for key, value in body.items() if key not in ("metadata", "user")}
    # Volatile fields never decide a match...
    BodyMatcher(("metadata", "user"))(request({**plain, "metadata": noise}), request(plain))
    matcher(request({**plain, "user": noise}), request({**plain, "user": other}))
    # ...and every other field does.
    changed = {**plain, "model": "other-model" if plain.get("model") != "other-model" else "x"}
    with pytest.raises(AssertionError):
        matcher(request(plain), request(changed))


def test_nested_volatile_paths_reach_into_lists() -> None:
    matcher = BodyMatcher(("messages.*.id",))
    first = {"messages": [{"id": "a", "text": "hi"}, {"id": "b", "text": "yo"}]}
    second = {"messages": [{"id": "c", "text": "hi"}, {"id": "d", "text": "yo"}]}
    matcher(request(first), request(second))
    with pytest.raises(AssertionError):
        matcher(request(first), request({"messages": [{"id": "a", "text": "bye"}]}))


def cassette(request_body: object, response_body: object) -> dict[str, Any]:
    return {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "https://api.openai.com/v1/responses",
                    "body": request_body,
                    "headers": {"content-type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": ["application/json"], "content-length": ["9"]},
                    "body": {"string": response_body},
                },
            }
        ],
    }


@given(sent=st.dictionaries(st.text(max_size=8), JSON, max_size=5), got=JSON)
def test_json_bodies_round_trip_through_the_readable_format(sent: dict[str, Any], got: Any) -> None:
    data = cassette(json.dumps(sent).encode(), json.dumps({"output": got}).encode())
    text = serializer.serialize(data)
    back = serializer.deserialize(text)["interactions"][0]
    assert json.loads(back["request"]["body"]) == sent
    assert json.loads(back["response"]["body"]["string"]) == {"output": got}
    assert "json:" in text, "JSON bodies are stored as mappings"
    assert "content-length" not in back["response"]["headers"]


@given(stream=st.text(st.characters(codec="utf-8"), max_size=200))
@example(stream='event: message_start\ndata: {"a":  1}\n\n')
def test_text_bodies_round_trip_exactly(stream: str) -> None:
    back = serializer.deserialize(serializer.serialize(cassette("not json", stream)))
    assert back["interactions"][0]["response"]["body"]["string"] == stream


def test_plain_vcrpy_cassettes_read_unchanged() -> None:
    plain = serializer.deserialize(
        "interactions:\n- request:\n    body: '{\"a\":1}'\n    headers: {}\n    method: POST\n"
        "    uri: https://x.example/\n  response:\n    body:\n      string: '{\"b\":2}'\n"
        "    headers: {}\n    status:\n      code: 200\n      message: OK\nversion: 1\n"
    )
    [interaction] = plain["interactions"]
    assert interaction["request"]["body"] == '{"a":1}'
    assert interaction["response"]["body"]["string"] == '{"b":2}'


@pytest.mark.parametrize(
    "leak",
    [
        "sk-ant-api03-" + "x" * 40,
        "sk-proj-" + "y4Kz9" * 8,
        "sk-or-v1-" + "a1" * 20,
        "Bearer " + "t0Kq7Zx3Lm" * 3,
        "AKIAABCDEFGHIJKLMNOP",
        "ghp_" + "z" * 36,
    ],
)
def test_a_key_shaped_leftover_is_refused_and_never_shown_whole(leak: str) -> None:
    with pytest.raises(CassetteSecretError, match="refused to write a cassette") as raised:
        serializer.serialize(cassette(json.dumps({"note": leak}), "{}"))
    assert leak not in str(raised.value)


@pytest.mark.parametrize(
    "harmless",
    ["task-" + "a" * 30, "disk-usage-report-for-the-team", "placeholder-" + placeholder("X")],
)
def test_ordinary_text_is_not_key_shaped(harmless: str) -> None:
    assert find_key_shapes(harmless) == []


def test_redaction_hides_known_values_and_key_shapes() -> None:
    assert redact("key sk-ant-api03-" + "q" * 30 + " and hunter2hunter2", ["hunter2hunter2"]) == (
        "key [redacted] and [redacted]"
    )


CASSETTE_NOISE = st.one_of(
    st.text(max_size=300),
    st.builds(
        lambda uri, status, body: serializer.serialize(cassette("{}", body)).replace(
            "https://api.openai.com/v1/responses", uri
        ).replace("code: 200", f"code: {status}"),
        st.sampled_from(["https://api.anthropic.com/v1/messages", "https://api.openai.com/v1/responses",
                         "https://x.example/other"]),
        st.sampled_from([200, 204, 429, 500]),
        st.one_of(st.text(max_size=200), JSON.map(json.dumps),
                  st.just("event: message_start\ndata: {\"type\":\"message_start\"}\n\n"),
                  st.just("data: {\"type\":\"response.created\"}\n\ndata: [DONE]\n\n")),
    ),
)  # fmt: skip


@given(content=CASSETTE_NOISE)
def test_the_reader_never_raises_on_odd_cassettes(content: str, tmp_path_factory: Any) -> None:
    from agentloop_tools.cassettes import Reader, read_transcript_file

    folder = tmp_path_factory.mktemp("odd")
    for name in ("odd.yaml", "odd.jsonl", "odd.json"):
        path = folder / name
        path.write_text(content, encoding="utf-8")
        reading = Reader().read(path) if name.endswith(".yaml") else read_transcript_file(path)
        for problem in reading.problems:
            assert problem.path == str(path)
            assert problem.reason


def test_read_transcript_file_names_a_json_cassette_instead_of_reading_it_empty(
    tmp_path: Path,
) -> None:
    from agentloop_tools.cassettes import Reader, read_transcript_file
    from tests.cli.helpers import ANTHROPIC_DEMO

    cassette = tmp_path / "test_agent.json"
    cassette.write_text(json.dumps(serializer.deserialize(ANTHROPIC_DEMO.read_text())))
    [problem] = read_transcript_file(cassette).problems
    assert problem.reason == (
        "a vcrpy cassette, not a transcript: read it with Reader().read or read_cassette"
    )
    reading = Reader().read(cassette)
    assert (len(reading.transcripts), reading.problems) == (1, [])


@pytest.mark.parametrize("text", ["a\x85b", "x\u2028y\u2029z", "line\nnext\x85line\n", "\x85"])
def test_line_breaks_yaml_folds_survive_pyyaml_without_libyaml(text: str) -> None:
    # A PyYAML built without libyaml (e.g. 6.0.1 from source on Python 3.13) emits
    # these raw and reads NEL back as a space, unless they are written escaped.
    from agentloop_tools.cassettes import _format

    class PureDumper(yaml.SafeDumper):
        pass

    PureDumper.add_representer(str, _format._represent_text)  # type: ignore[arg-type]
    written = yaml.dump({text: text}, Dumper=PureDumper, allow_unicode=True)
    assert yaml.load(written, Loader=yaml.SafeLoader) == {text: text}


def test_a_file_is_read_whole_under_any_limit_however_large(tmp_path: Path) -> None:
    # The read asks for what the file holds, not for the limit: a generous limit
    # once made a buffer of its size (a MemoryError at this one).
    from agentloop_tools.cassettes._load import read_bytes

    path = tmp_path / "small.yaml"
    path.write_bytes(b"interactions: []\n")
    assert read_bytes(path, limit=1 << 62) == b"interactions: []\n"


def test_a_file_that_grows_while_read_is_read_on_to_the_limit_and_no_further(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from agentloop_tools._errors import InputError
    from agentloop_tools.cassettes._load import read_bytes

    path = tmp_path / "growing.yaml"
    path.write_bytes(b"x" * 100)
    real_fstat = os.fstat

    def stale_fstat(descriptor: int) -> os.stat_result:
        # The size fstat saw before the file grew to 100 bytes.
        found = list(real_fstat(descriptor))
        found[6] = 10
        return os.stat_result(found)

    monkeypatch.setattr(os, "fstat", stale_fstat)
    assert read_bytes(path, limit=1000) == b"x" * 100
    with pytest.raises(InputError, match="grew past"):
        read_bytes(path, limit=50)
