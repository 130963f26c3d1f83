"""The agentloop-tools command line, run as users run it: the real entry point, in a subprocess."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from agentloop.transcript import to_jsonl

from agentloop_tools.testing import anthropic_message, anthropic_search, anthropic_text
from tests.cli.helpers import ANTHROPIC_DEMO, DEMO, OPENAI_DEMO, REPO, run
from tests.transcripts import converse

KEY = "sk-ant-api03-" + "K" * 40
PROMPT_ONLY = '{"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}'


def test_a_clean_audit_exits_0() -> None:
    result = run("audit", DEMO, "--allow", "python.org,realpython.com", "--allow", "medium.com",
                 "--allow", "wikipedia.org")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("from --allow.")
    assert result.stdout.startswith("0 violation(s) in 0 of 2 file(s)")


def test_violations_exit_1_with_a_readable_table() -> None:
    result = run("audit", ANTHROPIC_DEMO, "--allow", "python.org,realpython.com")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        str(ANTHROPIC_DEMO),
        "  interaction 0   text      https://en.wikipedia.org/wiki/History_of_Python  "
        "[not on the allowlist]",
        "",
        "1 violation(s) in 1 of 1 file(s); policy DomainPolicy.allow(['python.org', "
        "'realpython.com']) from --allow.",
    ]


def test_json_output_lists_every_violation_with_its_interaction() -> None:
    result = run("audit", DEMO, "--block", "medium.com", "--format", "json")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["policy"] == {"mode": "block", "domains": ["medium.com"], "from": "--block"}
    assert document["summary"] == {
        "files": 2,
        "violations": 4,
        "refused_attempts": 0,
        "failing": 4,
        "problems": 0,
    }
    [openai_file] = [f for f in document["files"] if f["path"].endswith("openai-web-search.yaml")]
    assert [(v["where"], v["interaction"], v["rule"]) for v in openai_file["violations"]] == [
        ("source", 0, "medium.com"),
        ("citation", 0, "medium.com"),
        ("text", 0, "medium.com"),
        ("text", 0, "medium.com"),
    ]


def test_github_annotations() -> None:
    result = run("audit", ANTHROPIC_DEMO, "--allow", "python.org", "--format", "github")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"::error file={ANTHROPIC_DEMO},line=2,title=Domain policy violation::source "
        "https://realpython.com/python313-repl/: not on the allowlist (interaction 0)"
    )
    assert all(line.startswith("::error ") for line in lines[:-1])
    assert lines[-1] == (
        "::notice title=agentloop-tools audit::3 violation(s) in 1 of 1 file(s); policy "
        "DomainPolicy.allow(['python.org']) from --allow."
    )


def test_github_annotations_sit_on_the_line_sarif_gives(tmp_path: Path) -> None:
    # Two interactions: the second one's violation is annotated on its own line.
    import yaml

    cassette = tmp_path / "two.yaml"
    data = yaml.safe_load(ANTHROPIC_DEMO.read_text())
    data["interactions"] *= 2
    cassette.write_text(yaml.safe_dump(data))
    github = run("audit", cassette, "--allow", "python.org", "--format", "github", cwd=tmp_path)
    sarif = run("audit", cassette, "--allow", "python.org", "--format", "sarif", cwd=tmp_path)
    assert github.returncode == sarif.returncode == 1, github.stderr
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    expected = [
        result["locations"][0]["physicalLocation"]["region"]["startLine"] for result in results
    ]
    assert len(set(expected)) == 2, "one line per interaction"
    annotations = [line for line in github.stdout.splitlines() if line.startswith("::error ")]
    assert [int(line.split(",line=")[1].split(",")[0]) for line in annotations] == expected


def test_github_format_with_a_baseline_and_nothing_new_still_says_what_it_read(
    tmp_path: Path,
) -> None:
    baseline = tmp_path / "baseline.json"
    written = run("audit", ANTHROPIC_DEMO, "--allow", "python.org", "--write-baseline", baseline)
    assert written.returncode == 0, written.stderr
    result = run(
        "audit", ANTHROPIC_DEMO, "--allow", "python.org", "--baseline", baseline,
        "--format", "github",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "::notice title=agentloop-tools audit::0 violation(s) in 0 of 1 file(s); policy "
        f"DomainPolicy.allow(['python.org']) from --allow. Baseline {baseline}: 3 known "
        "violation(s) not listed, 0 stale."
    ]


def test_junit_xml(tmp_path: Path) -> None:
    report = tmp_path / "audit.xml"
    result = run("audit", DEMO, "--block", "medium.com", "--format", "junit", "-o", report)
    assert result.returncode == 1
    suite = ElementTree.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    failure = suite.find("testcase/failure")
    assert failure is not None
    assert "4 domain policy violation(s)" in (failure.get("message") or "")


def test_the_policy_can_come_from_a_file_or_pyproject(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('block = ["medium.com"]\n')
    assert run("audit", OPENAI_DEMO, "--policy", policy).returncode == 1
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.agentloop-tools]\nallow = ["python.org", "medium.com"]\n'
    )
    result = run("audit", OPENAI_DEMO, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "from " + str(tmp_path / "pyproject.toml") + " [tool.agentloop-tools]" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["audit", ANTHROPIC_DEMO], "no policy: pass --allow DOMAIN[,DOMAIN...], --block"),
        (["audit", ANTHROPIC_DEMO, "--allow", "https://a.com"], "has a scheme"),
        (["audit", ANTHROPIC_DEMO, "--allow", "a.com", "--block", "b.com"], "not allowed with"),
        (["audit", ANTHROPIC_DEMO, "--allow", "a.com,,b.com"], "has an empty domain"),
    ],
)
def test_bad_usage_exits_2_and_says_why(
    args: list[str | Path], message: str, tmp_path: Path
) -> None:
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr


def write_cassette(path: Path, uri: str, body: str | bytes, status: int = 200) -> Path:
    import yaml

    body_yaml = {"string": body}
    path.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "interactions": [
                    {
                        "request": {"method": "POST", "uri": uri, "body": "{}", "headers": {}},
                        "response": {
                            "status": {"code": status, "message": "OK"},
                            "headers": {},
                            "body": body_yaml,
                        },
                    }
                ],
            }
        )
    )
    return path


def test_unreadable_inputs_are_named_and_the_rest_is_still_audited(tmp_path: Path) -> None:
    shutil.copy(ANTHROPIC_DEMO, tmp_path / "good.yaml")
    text = ANTHROPIC_DEMO.read_text()
    (tmp_path / "truncated.yaml").write_text(text[:700])
    (tmp_path / "cut-in-a-string.yaml").write_text(text[: text.index("body: '") + 40])
    (tmp_path / "empty.yaml").write_text("")
    write_cassette(
        tmp_path / "unknown.yaml", "https://api.example.com/v1/generate", '{"text":"hi"}'
    )
    write_cassette(
        tmp_path / "binary.yaml", "https://api.anthropic.com/v1/messages", b"\xff\xfe\x00"
    )
    write_cassette(tmp_path / "broken.yaml", "https://api.openai.com/v1/responses", "{not json")
    result = run("audit", tmp_path, "--allow", "python.org,realpython.com")
    assert result.returncode == 1, "the violation found wins over the problems beside it"
    out = result.stdout
    assert "https://en.wikipedia.org/wiki/History_of_Python" in out, "the good file was audited"
    assert f"could not read {tmp_path / 'empty.yaml'}: the file is empty" in out
    assert (
        f"could not read {tmp_path / 'truncated.yaml'} (interaction 0): the interaction has no "
        "response: the file may be truncated" in out
    )
    assert f"could not read {tmp_path / 'cut-in-a-string.yaml'}: not a readable cassette" in out
    assert (
        f"could not read {tmp_path / 'unknown.yaml'} (interaction 0): unknown provider API at "
        "'https://api.example.com/v1/generate'" in out
    )
    assert (
        f"could not read {tmp_path / 'binary.yaml'} (interaction 0): the response body is binary"
        in out
    )
    assert (
        f"could not read {tmp_path / 'broken.yaml'} (interaction 0): the response body "
        "cannot be read" in out
    )
    assert "6 input problem(s): the audit is incomplete." in out


def test_saved_transcripts_are_audited_too(tmp_path: Path) -> None:
    transcript = converse("anthropic", [anthropic_message([
        anthropic_search("q", ["https://docs.python.org/3/", "https://evil.example/x"]),
        anthropic_text("Answer.", cite=["https://docs.python.org/3/"]),
    ])])  # fmt: skip
    (tmp_path / "run.jsonl").write_text(to_jsonl(transcript.messages))
    (tmp_path / "run.json").write_text(transcript.model_dump_json())
    (tmp_path / "bad.jsonl").write_text('{"role": "robot"}\n')
    result = run("audit", tmp_path, "--allow", "python.org", "--format", "json")
    assert result.returncode == 1, "violations found, bad.jsonl reported beside them"
    files = {Path(f["path"]).name: f for f in json.loads(result.stdout)["files"]}
    for name in ("run.jsonl", "run.json"):
        assert [(v["where"], v["url"], v["message_index"]) for v in files[name]["violations"]] == [
            ("source", "https://evil.example/x", 1)
        ]
    [problem] = files["bad.jsonl"]["problems"]
    assert problem["reason"].startswith("line 1 is not an agentloop message")


@pytest.mark.parametrize(
    ("content", "found"),
    [
        ('{"foo": 1}', "the object has no 'messages' (its keys: 'foo')"),
        ("{}", "the object has no 'messages' (its keys: none)"),
        ('[{"a": 1}]', "item 0 of the list: the object has no 'messages' (its keys: 'a')"),
        ('{"messages": []}', "'messages' is empty: there is nothing to audit"),
        ('{"messages": {"role": "user"}}', "'messages' is of type dict, not a list"),
        ("[]", "the list is empty"),
        ("null", "the file holds null, not an object"),
        ("3", "the file holds a number, not an object"),
        (
            '{"messages": [], "interactions": []}',
            "the object has both 'messages' and 'interactions' (a transcript or a cassette?)",
        ),
    ],
)
def test_a_json_file_that_holds_no_transcript_is_a_problem_not_an_empty_pass(
    tmp_path: Path, content: str, found: str
) -> None:
    other = tmp_path / "other.json"
    other.write_text(content + "\n")
    result = run("audit", "--block", "wikipedia.org", other, "--format", "json")
    assert result.returncode == 2, result.stdout
    [file] = json.loads(result.stdout)["files"]
    assert (file["transcripts"], len(file["problems"])) == (0, 1)
    assert file["problems"][0]["reason"] == (
        f'not an agentloop transcript: {found}; expected {{"messages": [...]}} with at least '
        "one message (Transcript.model_dump_json()), a list of messages or of transcripts, or "
        'a vcrpy cassette ({"interactions": [...]})'
    )
    evidence = run("evidence", other)
    assert evidence.returncode == 2
    assert f"could not read {other}: not an agentloop transcript: {found}" in evidence.stdout


def as_vcrpy_json(cassette: Path, target: Path) -> Path:
    """The cassette as vcrpy writes it under ``vcr_config = {"serializer": "json"}``."""
    from vcr import serialize
    from vcr.serializers import jsonserializer

    from agentloop_tools.cassettes import _format as serializer

    requests, responses = serialize.deserialize(cassette.read_text(), serializer)[:2]
    recorded = {"requests": requests, "responses": responses}
    target.write_text(serialize.serialize(recorded, jsonserializer))
    return target


@pytest.mark.parametrize("demo", [ANTHROPIC_DEMO, OPENAI_DEMO], ids=["anthropic", "openai"])
def test_a_cassette_vcrpy_wrote_as_json_is_read_as_its_yaml_is(tmp_path: Path, demo: Path) -> None:
    cassette = as_vcrpy_json(demo, tmp_path / "test_agent.json")
    assert json.loads(cassette.read_text())["version"] == 1
    as_json, as_yaml = (
        run("audit", path, "--block", "medium.com,wikipedia.org", "--format", "json")
        for path in (cassette, demo)
    )
    assert as_json.returncode == as_yaml.returncode == 1, as_json.stdout
    [json_file], [yaml_file] = (json.loads(r.stdout)["files"] for r in (as_json, as_yaml))
    assert json_file["violations"] == yaml_file["violations"]
    assert json_file["transcripts"] == 1
    assert json_file["problems"] == []
    evidence_json, evidence_yaml = (
        run("evidence", path, "--format", "json") for path in (cassette, demo)
    )
    assert evidence_json.returncode == 0
    turns = [json.loads(r.stdout)["files"][0]["turns"] for r in (evidence_json, evidence_yaml)]
    assert turns[0] == turns[1] != []


def test_a_json_file_shaped_like_a_cassette_is_read_as_one(tmp_path: Path) -> None:
    broken = tmp_path / "test_agent.json"
    broken.write_text('{"version": 1, "interactions": {"request": {}}}\n')
    result = run("audit", broken, "--block", "wikipedia.org")
    assert result.returncode == 2, result.stdout
    assert (
        f"could not read {broken}: not a readable cassette: not a vcrpy cassette: expected a "
        "mapping with an 'interactions' list"
    ) in result.stdout


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_json_cassette_is_parsed_as_json_whatever_its_suffix(tmp_path: Path, suffix: str) -> None:
    # vcrpy's JSON serializer escapes an emoji the API sent as UTF-8 as a surrogate pair,
    # which YAML refuses.
    from vcr.serializers import jsonserializer

    answer = anthropic_message([
        anthropic_search("q", ["https://en.wikipedia.org/wiki/Python"]),
        anthropic_text("Snakes \N{SNAKE} and https://en.wikipedia.org/wiki/Python"),
    ])  # fmt: skip
    request = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "q"}]}
    interaction = {
        "request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages",
                    "body": json.dumps(request), "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {},
                     "body": {"string": json.dumps(answer, ensure_ascii=False)}},
    }  # fmt: skip
    cassette = tmp_path / f"test_agent{suffix}"
    cassette.write_text(jsonserializer.serialize({"version": 1, "interactions": [interaction]}))
    assert "\\ud83d\\udc0d and" in cassette.read_text()
    result = run("audit", cassette, "--block", "wikipedia.org", "--format", "json")
    assert result.returncode == 1, result.stdout
    [file] = json.loads(result.stdout)["files"]
    assert [(v["where"], v["url"]) for v in file["violations"]] == [
        ("source", "https://en.wikipedia.org/wiki/Python"),
        ("text", "https://en.wikipedia.org/wiki/Python"),
    ]


@pytest.mark.parametrize("command", ["audit", "evidence"])
def test_a_folder_with_no_file_to_read_is_exit_2_not_a_clean_pass(
    tmp_path: Path, command: str
) -> None:
    empty, other = tmp_path / "casettes", tmp_path / "elsewhere"
    empty.mkdir()
    other.mkdir()
    (other / "test_agent.yaml.bak").write_text("interactions: []\n")
    policy = ["--block", "wikipedia.org"] if command == "audit" else []
    result = run(command, empty, other, *policy)
    assert result.returncode == 2, result.stdout
    for folder in (empty, other):
        assert (
            f"could not read {folder}: no file to read: {command} reads cassettes (.yaml, .yml, "
            "vcrpy's .json) and transcripts (.jsonl, .json) in this folder and those below it, "
            "and found none. Check the path: a mistyped or empty cassette folder would audit "
            "nothing"
        ) in result.stdout
    (other / ".venv").mkdir()
    (other / ".venv" / "cassette.yaml").write_text("interactions: []\n")
    vendored = run(command, other, *policy)
    assert vendored.returncode == 2
    assert "in this folder and those below it (not searched: .venv), and found none" in (
        vendored.stdout
    )


COUNTED = (
    "1 model request(s), 1893 input tokens, 96 output tokens, unknown cache read, unknown "
    "cache write, 1 hosted search(es), 0 hosted fetch(es), 0 tool call(s), 0 refused"
)


def test_evidence_lists_sources_and_citations_per_turn() -> None:
    result = run("evidence", OPENAI_DEMO)
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        str(OPENAI_DEMO),
        # The demo cassettes predate provenance: their age is unknown, and said so.
        "  recorded: unknown (no provenance in the cassette: age unknown; re-record it with "
        "the agentloop-tools plugin to date it)",
        "  turn at interaction 0: What changed in Python 3.13's interactive interpreter?",
        # One page, one line: the URL OpenAI cites with ?utm_source=openai is the same page.
        "    sources (2):",
        "      - https://docs.python.org/3/whatsnew/3.13.html (also written "
        "https://docs.python.org/3/whatsnew/3.13.html?utm_source=openai)",
        "      - https://medium.com/@pydev/python-3-13-repl-tour-5f1e (also written "
        "https://medium.com/@pydev/python-3-13-repl-tour-5f1e?utm_source=openai)",
        "    citations (2):",
        "      - https://docs.python.org/3/whatsnew/3.13.html?utm_source=openai",
        "      - https://medium.com/@pydev/python-3-13-repl-tour-5f1e?utm_source=openai",
        # The answer's links, each consulted as the report and assert_cited read it.
        "    links (2, 2 to a page a tool returned):",
        "      - https://docs.python.org/3/whatsnew/3.13.html?utm_source=openai [consulted]",
        "      - https://medium.com/@pydev/python-3-13-repl-tour-5f1e?utm_source=openai "
        "[consulted]",
        # The evidence record: usage as OpenAI reported it (no cached-token detail in
        # this recording: unknown, not 0), and the hosted search's query.
        "  evidence record:",
        f"    conversation 0: {COUNTED}",
        "      - hosted search: Python 3.13 REPL changes",
        f"    total: {COUNTED}",
    ]
    as_json = json.loads(run("evidence", OPENAI_DEMO, "--format", "json").stdout)
    assert as_json["files"][0]["evidence"]["totals"]["searches"] == 1
    [turn] = as_json["files"][0]["turns"]
    assert len(turn["citations"]) == 2
    assert turn["sources"][1]["urls"] == [
        "https://medium.com/@pydev/python-3-13-repl-tour-5f1e",
        "https://medium.com/@pydev/python-3-13-repl-tour-5f1e?utm_source=openai",
    ]


def test_scan_finds_keys_and_credential_headers(tmp_path: Path) -> None:
    leaky = tmp_path / "leaky.yaml"
    write_cassette(leaky, "https://api.anthropic.com/v1/messages", '{"note": "' + KEY + '"}')
    text = leaky.read_text().replace(
        "headers: {}", "headers:\n      authorization:\n      - Bearer abc", 1
    )
    leaky.write_text(text)
    result = run("scan", tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{leaky}: line 11: Anthropic API key (sk-a...(53 chars))",
        f"{leaky}: interactions[0] request headers authorization: credential header "
        "'authorization' with a value",
        f"scanned 1 file(s) under {tmp_path} (1 parsed as YAML/JSON): 2 secret(s) found.",
    ]
    assert KEY not in result.stdout + result.stderr, "a scan never prints the secret"
    clean = run("scan", REPO / "cassettes")
    assert clean.returncode == 0
    bundled = len(list((REPO / "cassettes").rglob("*.yaml")))
    assert clean.stdout == (
        f"scanned {bundled} file(s) under {REPO / 'cassettes'} ({bundled} parsed as YAML/JSON): "
        "no secrets found.\n"
    )


def test_help_shows_examples() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert "agentloop-tools audit cassettes/ --allow python.org" in result.stdout
    assert run("audit", "--help").returncode == 0
    assert run().returncode == 2


def test_audit_and_scan_skip_the_same_vendored_folders_and_count_them(
    tmp_path: Path,
) -> None:
    hidden = tmp_path / ".venv" / "lib"
    hidden.mkdir(parents=True)
    (hidden / "leak.json").write_text('{"k": "' + KEY + '"}')
    (tmp_path / "node_modules").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("key: " + KEY)
    (tmp_path / ".cassettes").mkdir()
    (tmp_path / ".cassettes" / "notes.txt").write_text("token\t" + KEY)
    result = run("scan", tmp_path)
    assert result.returncode == 1
    assert [line.split(": ")[0] for line in result.stdout.splitlines()[:-1]] == [
        str(tmp_path / ".cassettes" / "notes.txt"),
    ]
    assert result.stdout.splitlines()[-1].endswith(
        "; skipped 3 folder(s): .git, .venv, node_modules): 1 secret(s) found."
    )
    named = run("scan", tmp_path / ".venv")
    assert named.returncode == 1, "a vendored folder named on the command line is read"
    assert str(hidden / "leak.json") in named.stdout
    assert run("scan", tmp_path / ".git" / "config").returncode == 1, "a file named is read"
    (tmp_path / "run.json").write_text(PROMPT_ONLY)
    audit = run("audit", tmp_path, "--allow", "python.org")
    assert audit.returncode == 0, "leak.json under .venv (no transcript) was not read"
    assert audit.stdout.startswith("0 violation(s) in 0 of 1 file(s)")
    assert "not searched: .git, .venv, node_modules folders" in audit.stderr


def test_a_named_file_that_is_not_a_cassette_is_a_problem_and_the_rest_is_read() -> None:
    result = run("audit", REPO / "README.md", ANTHROPIC_DEMO, "--block", "wikipedia.org")
    assert result.returncode == 1  # the violation wins; README.md is still a problem
    assert (
        f"could not read {REPO / 'README.md'}: not a cassette (.yaml, .yml) or transcript "
        "(.jsonl, .json)"
    ) in result.stdout
    assert "https://en.wikipedia.org/wiki/History_of_Python" in result.stdout


def test_a_cassette_with_no_interaction_is_a_problem_not_a_clean_pass(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("version: 1\ninteractions: []\n")
    result = run("audit", "--block", "wikipedia.org", empty)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "the cassette holds no interaction: nothing to audit" in result.stdout + result.stderr


def test_a_folder_walk_skips_json_that_is_no_evidence_and_still_finds_the_breach(
    tmp_path: Path,
) -> None:
    shutil.copy(ANTHROPIC_DEMO, tmp_path / "leaky.yaml")
    (tmp_path / "prompts.json").write_text('[{"prompt": "What is Python?"}]\n')
    (tmp_path / "settings.json").write_text('{"model": "claude"}\n')
    (tmp_path / "broken.json").write_text("{not json\n")
    result = run("audit", tmp_path, "--block", "wikipedia.org")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "https://en.wikipedia.org/wiki/History_of_Python" in result.stdout
    for name in ("prompts.json", "settings.json"):
        line = f"agentloop-tools: skipped {tmp_path / name}: JSON that is neither a cassette "
        assert result.stderr.count(line) == 1, result.stderr
        assert str(tmp_path / name) not in result.stdout
    # JSON that does not parse may be a broken cassette: still a problem, reported.
    assert f"could not read {tmp_path / 'broken.json'}" in result.stdout
    assert "1 input problem(s)" in result.stdout
    # Named on the command line, the same file stays a problem.
    named = run("audit", tmp_path / "prompts.json", "--block", "wikipedia.org")
    assert named.returncode == 2
    assert (
        f"could not read {tmp_path / 'prompts.json'}: not an agentloop transcript" in named.stdout
    )
