"""``audit --format sarif``: valid SARIF 2.1.0 (the official schema, vendored in
tests/cli/schemas with its source and licence), one rule per policy rule plus
``not-on-the-allowlist``, each result at its cassette file and interaction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from tests.cli.helpers import ANTHROPIC_DEMO, DEMO, OPENAI_DEMO, REPO, run

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json").read_text())


def sarif(*args: str | Path, cwd: Path | None = None) -> tuple[int, dict[str, Any]]:
    result = run("audit", *args, "--format", "sarif", cwd=cwd)
    document = json.loads(result.stdout)
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    validator = jsonschema.Draft4Validator(
        SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )
    errors = sorted(validator.iter_errors(document), key=lambda error: list(error.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    return result.returncode, document


def test_the_vendored_schema_is_the_official_one() -> None:
    assert SCHEMA["id"] == (
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    )
    notes = (Path(__file__).parent / "schemas" / "README.md").read_text()
    assert "oasis-tcs/sarif-spec" in notes
    assert "Licence" in notes


def test_a_blocklist_gives_a_rule_per_domain_and_results_at_the_interaction() -> None:
    code, document = sarif(DEMO, "--block", "medium.com,wikipedia.org", cwd=REPO)
    assert code == 1
    assert document["version"] == "2.1.0"
    [run_] = document["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [
        "blocked/medium.com",
        "blocked/wikipedia.org",
        "not-on-the-allowlist",
    ]
    results = run_["results"]
    assert len(results) == 5
    wikipedia = [r for r in results if r["ruleId"] == "blocked/wikipedia.org"]
    assert len(wikipedia) == 1
    [location] = wikipedia[0]["locations"]
    assert location["physicalLocation"]["artifactLocation"] == {
        "uri": "cassettes/demo/anthropic-web-search.yaml",
        "uriBaseId": "%SRCROOT%",
    }
    # Interaction 0 starts at line 2 (after "interactions:").
    assert location["physicalLocation"]["region"] == {"startLine": 2}
    assert location["logicalLocations"] == [
        {"fullyQualifiedName": "interactions[0]", "kind": "element"}
    ]
    assert wikipedia[0]["message"]["text"] == (
        "text https://en.wikipedia.org/wiki/History_of_Python: blocked by 'wikipedia.org' "
        "(interaction 0)"
    )
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    assert run_["invocations"][0]["executionSuccessful"] is True


def test_an_allowlist_reports_not_on_the_allowlist(tmp_path: Path) -> None:
    code, document = sarif(ANTHROPIC_DEMO, "--allow", "python.org,realpython.com", cwd=tmp_path)
    assert code == 1
    [run_] = document["runs"]
    assert [rule["id"] for rule in run_["tool"]["driver"]["rules"]] == [
        "allowed/python.org",
        "allowed/realpython.com",
        "not-on-the-allowlist",
    ]
    assert [r["ruleId"] for r in run_["results"]] == ["not-on-the-allowlist"]
    # Outside the current folder: an absolute file URI.
    uri = run_["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == ANTHROPIC_DEMO.as_uri()


def test_a_clean_run_is_valid_sarif_with_no_results() -> None:
    code, document = sarif(OPENAI_DEMO, "--block", "example.org")
    assert code == 0
    assert document["runs"][0]["results"] == []


def test_fingerprints_are_stable_and_distinct() -> None:
    _, first = sarif(DEMO, "--block", "medium.com", cwd=REPO)
    _, second = sarif(DEMO, "--block", "medium.com", cwd=REPO)
    prints = [r["partialFingerprints"] for r in first["runs"][0]["results"]]
    assert prints == [r["partialFingerprints"] for r in second["runs"][0]["results"]]
    assert len({p["agentloopViolation/v1"] for p in prints}) == len(prints)


def test_unreadable_input_is_a_notification_and_an_unsuccessful_run(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("interactions: [\n")
    code, document = sarif(tmp_path, "--block", "example.org")
    assert code == 2
    invocation = document["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["message"]["text"].startswith("could not read: ")


def test_every_real_recording_gives_valid_sarif_with_a_line_per_interaction(
    real_cassettes: Path,
) -> None:
    code, document = sarif(real_cassettes, "--allow", "python.org")
    assert code == 1
    results = document["runs"][0]["results"]
    assert len(results) > 100
    for result in results:
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"].startswith("file://")
        assert physical["region"]["startLine"] >= 2
