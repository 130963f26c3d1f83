"""The one detector behind the refusal, ``scan`` and the reports: every place a credential
hides, checked on decoded strings; and no false alarm on real recordings.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from vcr.request import Request

from agentloop_tools._errors import CassetteSecretError
from agentloop_tools._secrets import Detector, secret_values, variants
from agentloop_tools.cassettes import Reader, Scrubber
from agentloop_tools.cassettes import _format as serializer
from agentloop_tools.cassettes._hygiene._leaks import cassette_leaks
from agentloop_tools.cassettes._scan import scan_file

BUNDLED = Path(__file__).parents[2] / "cassettes"
KEYS = {
    "Anthropic API key": "sk-ant-api03-" + "Zq3vX9bL2mN8pR4t" * 5 + "-AA",
    "OpenAI API key": "sk-proj-" + "aB3dE5fG7hJ9kL1m" * 3,
    "Google API key": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
    "JSON Web Token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "Stripe key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "AWS access key id": "AKIA" + "IOSFODNN7EXAMPLE",
    "GitHub token": "ghp_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "Brave Search API key": "BSA" + "x7Kp2mQ9vL4nR8tW3yZ6bC1dF5gH",
    "Tavily API key": "tvly-dev-" + "Ab3dEf7hIj9kLm1nOp5qRs2tUv",
    "Slack token": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "Hugging Face token": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
}


@pytest.mark.parametrize(("kind", "key"), KEYS.items())
def test_every_known_shape_is_found_after_a_tab_a_newline_or_inside_a_word(
    kind: str, key: str
) -> None:
    detector = Detector()
    for text in (key, f"key:\t{key}", f"x \n{key}", f'"{key}"', f"Bearer {key}"):
        assert [f.kind for f in detector.find(text)] in ([kind], ["bearer token"]), text


@pytest.mark.parametrize(
    "harmless",
    [
        "risk-assessment-framework-guide",
        "sk-learn-pipeline-tutorial-example",
        "task-" + "a" * 30,
        '"max_tokens": 1234567890123456',
        "postgres://user:password@localhost/db",
        "Authorization: Bearer YOUR_API_KEY_HERE",
        "msg_01XFDUDYJgAACzvnptvVoYEL",
        "a basic introduction to python",
    ],
)
def test_ordinary_text_is_not_a_credential(harmless: str) -> None:
    assert Detector().find(harmless) == []


def documents(folder: Path) -> list[tuple[Path, Any]]:
    return [(path, yaml.safe_load(path.read_text())) for path in sorted(folder.rglob("*.yaml"))]


def test_no_false_alarm_on_33_real_recordings_and_the_bundled_cassettes(
    real_cassettes: Path,
) -> None:
    detector = Detector()
    read = documents(real_cassettes) + documents(BUNDLED)
    found = {
        path.name: [str(leak) for leak in cassette_leaks(data, detector)] for path, data in read
    }
    assert len(read) >= 33 + 8
    assert {name: leaks for name, leaks in found.items() if leaks} == {}


ENV_KEY = "3f2a8b1c-9d4e-4f6a-8b7c-1d2e3f4a5b6c"  # an Exa key: a UUID, no shape to find


def encodings(secret: str) -> list[str]:
    raw = secret.encode()
    return [
        quote(secret, safe=""),
        raw.hex(),
        base64.b64encode(raw).decode(),
        base64.b64encode(b"user:" + raw).decode(),  # HTTP basic, at another alignment
        base64.urlsafe_b64encode(b"xy" + raw).decode(),
    ]


@pytest.mark.parametrize("encoded", encodings(ENV_KEY))
def test_encoded_copies_of_an_environment_key_are_scrubbed_and_else_refused(encoded: str) -> None:
    secrets = secret_values({"EXA_API_KEY": ENV_KEY})
    assert any(variant in encoded for variant in variants(ENV_KEY))
    request = Request("POST", "https://api.exa.ai/search", json.dumps({"q": encoded}), {})
    scrubbed = Scrubber(secrets).request(request)
    assert not cassette_leaks({"interactions": [{"request": {"body": scrubbed.body}}]},
                              Detector(secrets))  # fmt: skip
    leaks = cassette_leaks({"interactions": [{"request": {"body": encoded}}]}, Detector(secrets))
    assert [leak.kind for leak in leaks] == ["the value of EXA_API_KEY"]


def test_a_key_split_across_two_json_fields_or_stream_events_is_found() -> None:
    key = KEYS["Google API key"]
    split = json.dumps({"a": "your key is " + key[:12], "b": key[12:]})
    stream = "".join(
        f"data: {json.dumps({'delta': {'text': part}})}\n\n"
        for part in (key[:9], key[9:20], key[20:])
    )
    for body in (split, stream):
        leaks = cassette_leaks({"interactions": [{"response": {"body": {"string": body}}}]},
                               Detector())  # fmt: skip
        assert [leak.kind for leak in leaks] == ["Google API key"], body
        assert leaks[0].side == "response"


def test_unicode_escaped_binary_and_compressed_bodies_are_read_decoded() -> None:
    key = KEYS["Anthropic API key"]
    escaped = json.dumps({"k": key}).replace("sk-", "\\u0073k-")
    for body in (
        escaped,
        key.encode("utf-16"),
        gzip.compress(key.encode()),
        b"\xff\x00" + key.encode(),
    ):
        leaks = cassette_leaks({"interactions": [{"response": {"body": {"string": body}}}]},
                               Detector())  # fmt: skip
        assert [leak.kind for leak in leaks] == ["Anthropic API key"], body


def test_a_body_that_looks_compressed_but_is_not_is_refused_unchecked() -> None:
    with pytest.raises(CassetteSecretError, match="cannot be checked"):
        serializer.serialize(
            {"interactions": [{"request": {"method": "GET", "uri": "https://x.example/",
                                           "body": None, "headers": {}},
                               "response": {"status": {"code": 200}, "headers": {},
                                            "body": {"string": b"\x1f\x8b\x08broken"}}}]}
        )  # fmt: skip


def test_the_readable_format_checks_what_it_writes_not_its_escapes() -> None:
    key = KEYS["OpenAI API key"]  # written as "\\tsk-proj-...": no word boundary left
    data = {"interactions": [{
        "request": {"method": "POST", "uri": "https://x.example/", "headers": {},
                    "body": json.dumps({"note": "a tab\t" + key + " \nand a newline"})},
        "response": {"status": {"code": 200}, "headers": {}, "body": {"string": "ok\t" + key}},
    }]}  # fmt: skip
    with pytest.raises(CassetteSecretError) as raised:
        serializer.serialize(data)
    assert key not in str(raised.value)
    assert "OpenAI API key" in str(raised.value)


def test_the_scrubber_keeps_only_allowlisted_headers_and_parameters() -> None:
    request = Request(
        "GET",
        "https://svc:hunter2hunter2@api.search.brave.com/res/v1/web/search?q=python&count=5"
        "&auth=abc&client_secret=s3cr3t;key=k&X-Amz-Security-Token=tok",
        None,
        {"X-Subscription-Token": KEYS["Brave Search API key"], "X-Auth-Token": "t0k3n",
         "Accept": "application/json", "User-Agent": "agentloop-tools-test"},
    )  # fmt: skip
    scrubbed = Scrubber({}).request(request)
    assert scrubbed.uri == (
        "https://api.search.brave.com/res/v1/web/search?q=python&count=5&auth=%5Bscrubbed%5D"
        "&client_secret=%5Bscrubbed%5D&X-Amz-Security-Token=%5Bscrubbed%5D"
    )
    assert dict(scrubbed.headers) == {
        "Accept": "application/json",
        "User-Agent": "agentloop-tools-test",
    }
    response = Scrubber({}).response({
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": ["application/json"], "x-debug-token": ["abc"],
                    "set-cookie": ["s=1"], "X-RateLimit-Remaining": ["1, 14999"],
                    "request-id": ["req_1"], "anthropic-organization-id": ["org"]},
        "body": {"string": "{}"},
    })  # fmt: skip
    assert set(response["headers"]) == {"content-type", "X-RateLimit-Remaining", "request-id"}


def test_scrubbed_real_recordings_replay_exactly_as_before(
    real_cassettes: Path, tmp_path: Path
) -> None:
    """The allowlist keeps what a replay needs: each real cassette, scrubbed as if it
    were being recorded now, reads into the same transcripts."""
    reader = Reader()
    for path in sorted(real_cassettes.glob("*.yaml")):
        data = serializer.deserialize(path.read_text())
        scrubber = Scrubber({})
        for interaction in data["interactions"]:
            request = Request._from_dict(interaction["request"])
            interaction["request"] = scrubber.request(request)._to_dict()
            scrubber.response(interaction["response"])
        copy = tmp_path / path.name
        copy.write_text(yaml.safe_dump(data, allow_unicode=True))
        before, after = reader.read(path), reader.read(copy)
        assert [t.model_dump() for t in after.transcripts] == [
            t.model_dump() for t in before.transcripts
        ], path.name
        assert len(after.problems) == len(before.problems), path.name


def dumped(value: Any, **options: Any) -> bytes:
    text: str = yaml.safe_dump(value, **options)
    return text.encode()


HAR = {"log": {"entries": [{"request": {"headers": [
    {"name": "Authorization", "value": "Bearer " + ENV_KEY}]}}]}}  # fmt: skip
SCAN_CASES: dict[str, bytes] = {
    ".env": b"BRAVE_API_KEY=" + KEYS["Brave Search API key"].encode() + b"\n",
    "conftest.py": b'TOKEN = "' + KEYS["Tavily API key"].encode() + b'"\n',
    "escaped.yaml": dumped({"body": "note:\t" + KEYS["OpenAI API key"] + " \n"}),
    "folded.yaml": dumped({"body": "x" * 90 + "\t" + KEYS["Google API key"]}, width=40),
    "unicode.json": json.dumps({"k": KEYS["Stripe key"]}).replace("sk_", "\\u0073k_").encode(),
    "binary.yaml": dumped({"body": {"string": b"\xff\xfe\x00" + KEYS["GitHub token"].encode()}}),
    "gzip.yaml": dumped({"body": {"string": gzip.compress(KEYS["Slack token"].encode())}}),
    "latin1.txt": "caf\xe9 ".encode("latin-1") + KEYS["AWS access key id"].encode(),
    "utf16.txt": ("clé " + KEYS["Hugging Face token"]).encode("utf-16"),
    "headers.json": json.dumps(
        {"interactions": [{"request": {"headers": {"x-api-key": [ENV_KEY]}}}]}
    ).encode(),
    "capture.har": json.dumps(HAR).encode(),
    "blob.bin": b"\x00\x01\x02" + KEYS["JSON Web Token"].encode() + b"\x00",
}


@pytest.mark.parametrize("name", SCAN_CASES)
def test_scan_finds_the_key_wherever_the_file_hides_it(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(SCAN_CASES[name])
    result = scan_file(path, Detector())
    assert result.findings, (name, result)
    assert not result.problems, result.problems
    shown = " ".join(str(hit) for hit in result.findings)
    assert not any(key in shown for key in KEYS.values())


@given(st.text(max_size=40), st.sampled_from(sorted(KEYS.values())), st.text(max_size=40))
def test_a_key_anywhere_in_a_yaml_string_is_found_by_the_refusal_and_by_scan(
    before: str, key: str, after: str
) -> None:
    text = before + " " + key + " " + after
    data = {"interactions": [{"response": {"body": {"string": text}}}]}
    assert cassette_leaks(data, Detector()), text


def test_an_escaped_environment_key_in_a_json_body_becomes_its_placeholder() -> None:
    body = json.dumps({"a": ENV_KEY}).replace(ENV_KEY[:4], "\\u0033" + ENV_KEY[1:4])
    assert json.loads(body) == {"a": ENV_KEY}
    scrubbed = Scrubber({"EXA_API_KEY": ENV_KEY}).data(body)
    assert isinstance(scrubbed, str)
    assert json.loads(scrubbed) == {"a": "agentloop-tools-placeholder-EXA_API_KEY"}


def test_a_key_next_to_a_placeholder_is_still_a_key() -> None:
    key = KEYS["Anthropic API key"]
    text = key + "agentloop-tools-placeholder-ANTHROPIC_API_KEY"
    assert [f.kind for f in Detector().find(text)] == ["Anthropic API key"]
    assert Detector().find("Bearer agentloop-tools-placeholder-ANTHROPIC_API_KEY") == []


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_an_escaped_key_in_a_stream_event_is_found_past_a_line_separator(separator: str) -> None:
    from agentloop_tools.cassettes._hygiene._leaks import find_leaks

    # JSON allows these raw in a string; an SSE line does not end at them (issue 26).
    key = "sk-ant-api03-" + "K" * 40
    escaped = "\\u0073" + key[1:]  # only the decoded event shows the key
    body = f'event: delta\ndata: {{"text": "a{separator}b {escaped}"}}\n\n'
    leaks = find_leaks({"body": body}, Detector())
    assert [leak.kind for leak in leaks] == ["Anthropic API key"]


GITHUB_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


@pytest.mark.parametrize(
    ("text", "kind", "length"),
    [
        # The environment's key is a key shape too: found twice at one place.
        (f"token {GITHUB_TOKEN}", "the value of GITHUB_TOKEN", 40),
        # The shape reaches further than the known value: the longest span is the one.
        (f"x {GITHUB_TOKEN}abcdef", "GitHub token", 46),
    ],
)
def test_one_place_is_one_finding_the_longest(text: str, kind: str, length: int) -> None:
    [found] = Detector({"GITHUB_TOKEN": GITHUB_TOKEN}).find(text)
    assert (found.kind, len(found.value)) == (kind, length)


def test_scan_lists_an_environment_key_once(tmp_path: Path) -> None:
    path = tmp_path / "leak.json"
    path.write_text(json.dumps({"messages": [{"content": GITHUB_TOKEN}, {"content": "next"}]}))
    [leak] = scan_file(path, Detector(secret_values({"GITHUB_TOKEN": GITHUB_TOKEN}))).findings
    assert (leak.kind, leak.masked) == ("the value of GITHUB_TOKEN", "ghp_...(40 chars)")
