"""The command line on hostile files: exit 0 clean, 1 violations, 2 problems; a problem
never hides a violation elsewhere; every problem names the file and the reason; never a
traceback; bounded time and memory.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentloop_tools import cli
from agentloop_tools.cassettes import Reader, read_transcript_file
from tests.cli.helpers import ANTHROPIC_DEMO, DEMO, run

BLOCKED = "wikipedia.org"  # the Anthropic demo cites en.wikipedia.org


def in_process(*args: str | Path) -> tuple[int, str, str]:
    """``agentloop-tools`` run in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(arg) for arg in args])
    return code, out.getvalue(), err.getvalue()


def interaction(response: Any, request: Any = None) -> dict[str, Any]:
    return {
        "request": request
        if request is not None
        else {"method": "POST", "uri": "https://api.anthropic.com/v1/messages", "body": "{}",
              "headers": {}},
        "response": response,
    }  # fmt: skip


def cassette_text(*interactions: Any) -> str:
    return yaml.safe_dump({"version": 1, "interactions": list(interactions)})


ALIAS_BOMB = (
    "a: &a ["
    + ",".join(["lol"] * 10)
    + "]\n"
    + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 10) + "]\n"
        for i in range(9)
    )
)
HOSTILE_CASSETTES = {
    "truncated.yaml": ANTHROPIC_DEMO.read_text()[:900],
    "status-string.yaml": cassette_text(
        interaction({"status": "200 OK", "headers": {}, "body": {"string": "{}"}})
    ),
    "status-code-list.yaml": cassette_text(
        interaction({"status": {"code": [200]}, "headers": {}, "body": {"string": "{}"}})
    ),
    "body-list.yaml": cassette_text(
        interaction({"status": {"code": 200}, "headers": {}, "body": ["x"]})
    ),
    "body-string-int.yaml": cassette_text(
        interaction({"status": {"code": 200}, "headers": {}, "body": {"string": 12}})
    ),
    "request-list.yaml": cassette_text({"request": [], "response": {}}),
    "interaction-string.yaml": yaml.safe_dump({"interactions": ["x", 3, None]}),
    "sse-missing-fields.yaml": cassette_text(
        interaction(
            {
                "status": {"code": 200},
                "headers": {},
                "body": {
                    "string": (
                        'event: message_start\ndata: {"type":"message_start"}\n\n'
                        "event: content_block_delta\n"
                        'data: {"type":"content_block_delta","index":"x","delta":7}\n\n'
                    )
                },
            }
        )
    ),
    "sse-wrong-types.yaml": cassette_text(
        interaction(
            {
                "status": {"code": 200},
                "headers": {},
                "body": {"string": ('data: {"type":"response.completed","response":[1,2]}\n\n')},
            },
            {"method": "POST", "uri": "https://api.openai.com/v1/responses", "body": None},
        )
    ),
    "deep-flow.yaml": "interactions: " + "[" * 1000 + "]" * 1000 + "\n",
    "alias-bomb.yaml": ALIAS_BOMB,
    "not-utf8.yaml": "interactions: []\n# caf\xe9\n",
}
HOSTILE_TRANSCRIPTS = {
    "deep.json": "[" * 100_000 + "]" * 100_000,
    "deep.jsonl": '{"role":"user","content":' + "[" * 100_000 + "]" * 100_000 + "}\n",
    "wrong.json": '{"messages": [{"role": 7, "content": {"a": []}}]}',
    "scalar.json": "3",
}


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    shutil.copy(ANTHROPIC_DEMO, folder / "zz-leaky.yaml")  # a real violation, read last
    for name, text in HOSTILE_CASSETTES.items():
        if name == "not-utf8.yaml":
            (folder / name).write_bytes(text.encode("latin-1"))
        else:
            (folder / name).write_text(text)
    for name, text in HOSTILE_TRANSCRIPTS.items():
        (folder / name).write_text(text)
    (folder / "loop").symlink_to(folder / "loop")  # a symlink loop
    (folder / "loop.yaml").symlink_to(folder / "loop.yaml")
    (folder / "broken.yaml").symlink_to(folder / "missing.yaml")
    os.mkfifo(folder / "fifo.yaml")
    (folder / "sub").mkdir()
    (folder / "sub" / "up").symlink_to(folder)  # a folder loop
    return folder


def test_one_hostile_folder_every_problem_named_and_the_violation_still_found(
    hostile: Path,
) -> None:
    started = time.perf_counter()
    result = run("audit", hostile, "--block", BLOCKED, "--format", "json")
    elapsed = time.perf_counter() - started
    assert "Traceback" not in result.stderr, result.stderr
    # The problems make the audit incomplete, but the violation found wins: exit 1.
    assert result.returncode == 1, result.stdout
    document = json.loads(result.stdout)
    files = {Path(f["path"]).name: f for f in document["files"]}
    assert files["zz-leaky.yaml"]["violations"], "a crasher beside it never hides a violation"
    expected_problems = {*HOSTILE_CASSETTES, *HOSTILE_TRANSCRIPTS, "broken.yaml", "fifo.yaml"}
    with_problems = {name for name, f in files.items() if f["problems"]}
    assert expected_problems <= with_problems, expected_problems - with_problems
    for file in document["files"]:
        for problem in file["problems"]:
            assert problem["path"] == file["path"], file
            assert problem["reason"], file
    reasons = {name: " ".join(p["reason"] for p in files[name]["problems"]) for name in files}
    assert "alias bomb" in reasons["alias-bomb.yaml"]
    assert "nested deeper than 100 levels" in reasons["deep.json"]
    assert "a FIFO" in reasons["fifo.yaml"]
    # A loop hides nothing: named and counted, never read, never a problem.
    assert "loop.yaml" not in files
    assert "up" not in files
    assert document["left_out"]["link_loops"] == 3  # loop, loop.yaml, sub/up
    for name in ("loop", "loop.yaml", "sub/up"):
        assert f"not followed: {hostile / name}: a symbolic link loop" in result.stderr
    assert "broken symbolic link" in reasons["broken.yaml"]
    assert "not UTF-8" in reasons["not-utf8.yaml"]
    assert elapsed < 60, f"bounded time: {elapsed:.1f} s"


@pytest.mark.parametrize("command", ["evidence", "scan"])
def test_evidence_and_scan_name_every_problem_too(hostile: Path, command: str) -> None:
    result = run(command, hostile)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2
    for name in ("alias-bomb.yaml", "fifo.yaml", "deep.json"):
        assert str(hostile / name) in result.stdout, name
    assert f"not followed: {hostile / 'loop.yaml'}: a symbolic link loop" in result.stderr


@pytest.mark.parametrize("command", ["audit", "scan"])
def test_a_folder_that_cannot_be_read_is_a_problem_not_a_pass(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "leak.yaml").write_text(ANTHROPIC_DEMO.read_text())
    unreadable = tmp_path / "unreadable.yaml"
    unreadable.write_text(ANTHROPIC_DEMO.read_text())
    if os.geteuid() == 0:
        # Root reads anything: make the two refuse the way the kernel would.
        scandir, real_open = os.scandir, os.open

        def refusing_scandir(path: Any) -> Any:
            if Path(path) == locked:
                raise PermissionError(13, "Permission denied", str(path))
            return scandir(path)

        def refusing_open(path: Any, *args: Any, **kwargs: Any) -> Any:
            if Path(path) == unreadable:
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(os, "scandir", refusing_scandir)
        monkeypatch.setattr(os, "open", refusing_open)  # the reader opens with os.open
    else:  # pragma: no cover - CI runs as root here
        locked.chmod(0o000)
        unreadable.chmod(0o000)
    extra = ["--block", BLOCKED] if command == "audit" else []
    try:
        code, out, _ = in_process(command, tmp_path, *extra)
    finally:
        locked.chmod(0o755)
        unreadable.chmod(0o644)
    assert code == 2, out
    assert f"{locked}: permission denied" in out
    assert f"{unreadable}: permission denied" in out


def test_evidence_piped_into_head_ends_quietly() -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "agentloop_tools", "evidence", "--format", "json", str(DEMO)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    ) as process:  # fmt: skip
        assert process.stdout is not None
        assert process.stderr is not None
        process.stdout.close()  # what `| head` does once it has read enough
        error = process.stderr.read().decode()
        code = process.wait(timeout=120)
    assert "Traceback" not in error, error
    assert "BrokenPipe" not in error, error
    assert code == 0, "the verdict stands: the demo cassettes are read whole"


# --- generated inputs ----------------------------------------------------------------

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=30),
    st.binary(max_size=20),
    st.sampled_from(["event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
                     "data: {\"type\":\"response.completed\",\"response\":{}}\n\n",
                     "{\"type\":\"message\",\"content\":[{\"type\":\"text\"}]}",
                     "https://api.anthropic.com/v1/messages", "https://api.openai.com/v1/responses",
                     "200", "-1"]),
)  # fmt: skip
NAMES = st.sampled_from(["request", "response", "status", "code", "body", "string", "json",
                         "uri", "headers", "method", "role", "content", "messages", "type",
                         "text"])  # fmt: skip
ANY = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(NAMES | st.text(max_size=5), children, max_size=5),
    max_leaves=25,
)  # fmt: skip
INTERACTION = st.fixed_dictionaries(
    {},
    optional={
        "request": st.one_of(ANY, st.fixed_dictionaries(
            {"method": st.just("POST"), "uri": st.sampled_from(
                ["https://api.anthropic.com/v1/messages", "https://api.openai.com/v1/responses"]),
             "body": ANY})),
        "response": st.one_of(ANY, st.fixed_dictionaries(
            {"status": st.one_of(ANY, st.fixed_dictionaries({"code": ANY})),
             "body": st.one_of(ANY, st.fixed_dictionaries({"string": ANY})),
             "headers": ANY})),
    },
)  # fmt: skip
CASSETTES = st.one_of(
    ANY, st.fixed_dictionaries({"interactions": st.lists(st.one_of(INTERACTION, ANY), max_size=4)})
)
GENERATED = {"count": 0}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=CASSETTES)
def test_generated_cassettes_never_crash_the_reader_or_the_cli(
    document: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    GENERATED["count"] += 1
    folder = tmp_path_factory.mktemp("generated")
    path = folder / "generated.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True))
    reading = Reader().read(path)
    for problem in reading.problems:
        assert problem.path == str(path)
        assert problem.reason
    for command in (["audit", "--block", BLOCKED], ["evidence"], ["scan"]):
        code, _out, err = in_process(*command, folder)
        assert code in (0, 1, 2), (command, code)
        assert "internal error" not in err, err


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=ANY, as_lines=st.booleans())
def test_generated_transcripts_never_crash_the_reader(
    document: Any, as_lines: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("generated")
    safe = json.loads(json.dumps(document, default=repr))
    if as_lines and isinstance(safe, list):
        path = folder / "generated.jsonl"
        path.write_text("\n".join(json.dumps(item) for item in safe))
    else:
        path = folder / "generated.json"
        path.write_text(json.dumps(safe))
    reading = read_transcript_file(path)
    for problem in reading.problems:
        assert problem.path == str(path)
        assert problem.reason
    code, _, err = in_process("audit", "--allow", "python.org", path)
    assert code in (0, 1, 2)
    assert "internal error" not in err, err


# --- generated request bodies: the conversation a model call carried ----------------

PART = st.one_of(
    ANY,
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "tool_use", "tool_result", "function_call",
                                  "function_call_output", "message", "input_text"])},
        optional={"text": ANY, "id": ANY, "call_id": ANY, "tool_use_id": ANY, "name": ANY,
                  "input": ANY, "arguments": ANY, "output": ANY, "content": ANY,
                  "is_error": ANY, "role": ANY},
    ),
)  # fmt: skip
TURN = st.one_of(
    PART,
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system", "developer", 7])},
        optional={"content": st.one_of(ANY, st.lists(PART, max_size=3)),
                  "tool_calls": st.one_of(ANY, st.lists(st.one_of(ANY, st.fixed_dictionaries(
                      {}, optional={"id": ANY, "index": ANY,
                                    "function": st.one_of(ANY, st.fixed_dictionaries(
                                        {}, optional={"name": ANY, "arguments": ANY}))})),
                      max_size=3)),
                  "tool_call_id": ANY, "name": ANY},
    ),
)  # fmt: skip
REQUEST_BODY = st.one_of(
    ANY,
    st.fixed_dictionaries(
        {}, optional={"messages": st.one_of(ANY, st.lists(TURN, max_size=4)),
                      "input": st.one_of(ANY, st.lists(TURN, max_size=4))},
    ),
)  # fmt: skip
ANSWERS = {
    "https://api.anthropic.com/v1/messages": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [{"type": "text", "text": "See https://en.wikipedia.org/wiki/X"}],
    },
    "https://api.openai.com/v1/responses": {
        "id": "resp_1", "object": "response", "status": "completed", "model": "m",
        "usage": {"input_tokens": 1, "output_tokens": 1},
        "output": [{"type": "message", "id": "m1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "annotations": [],
                                 "text": "See https://en.wikipedia.org/wiki/X"}]}],
    },
    "https://openrouter.ai/api/v1/chat/completions": {
        "id": "g", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "See https://en.wikipedia.org/wiki/X"}}],
    },
}  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    uri=st.sampled_from(sorted(ANSWERS)),
    bodies=st.lists(REQUEST_BODY, min_size=1, max_size=3),
    as_text=st.booleans(),
)
# Found by Hypothesis: a "json:" mapping holding bytes made the whole file unreadable.
@example(uri="https://api.anthropic.com/v1/messages", bodies=[{"json": b""}], as_text=False)
def test_generated_requests_never_crash_and_never_hide_the_response(
    uri: str, bodies: list[Any], as_text: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("requests")
    path = folder / "generated.yaml"
    interactions = [
        {
            "request": {
                "method": "POST",
                "uri": uri,
                "body": json.dumps(body, default=repr) if as_text else body,
            },
            "response": {
                "status": {"code": 200},
                "headers": {},
                "body": {"string": json.dumps(ANSWERS[uri])},
            },
        }
        for body in bodies
    ]
    path.write_text(yaml.safe_dump({"interactions": interactions}, allow_unicode=True))
    reading = Reader().read(path)
    for problem in reading.problems:
        assert problem.reason.startswith("the request: "), problem
        assert "cannot be read (" not in problem.reason, problem  # no unexpected error
    answers = [
        message
        for transcript in reading.transcripts
        for message in transcript.messages
        if message.role == "assistant"
        and any("wiki/X" in getattr(part, "text", "") for part in message.content)
    ]
    assert len(answers) == len(bodies), "every response is read, whatever its request"
    code, out, err = in_process("audit", "--block", BLOCKED, "--format", "json", path)
    assert code == 1, (out, err)  # violations are found: exit 1, problems or not
    assert "internal error" not in err, err
    [file] = json.loads(out)["files"]
    assert sum(v["where"] == "text" for v in file["violations"]) == len(bodies)
