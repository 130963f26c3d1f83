"""One exception tree: every exception of the package is an AgentloopToolsError.

Read from the source, so a class added anywhere later is held to the same rule.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

import agentloop_tools
from agentloop_tools import AgentloopToolsError, _errors
from agentloop_tools.cassettes import CassetteSecretError, InputError, StreamError
from agentloop_tools.testing import EvidenceAssertionError
from agentloop_tools.web import FatalToolError, ToolFailure
from agentloop_tools.web._fetch._codes import CODES

pytestmark = pytest.mark.core

SOURCE = Path(agentloop_tools.__file__).parent
# The one class outside _errors.py: it must be an httpx timeout for httpx's own handling.
OUTSIDE = {("web/_net/_body.py", "Overtime")}


def _exception_classes() -> list[tuple[str, str, list[str]]]:
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(base) for base in node.bases]
            names = [base.rsplit(".", 1)[-1] for base in bases]
            if any(n.endswith(("Error", "Exception")) or n in {"Exception"} for n in names):
                found.append((path.relative_to(SOURCE).as_posix(), node.name, bases))
    return found


def test_every_exception_class_is_defined_in_the_errors_module() -> None:
    elsewhere = {(where, name) for where, name, _ in _exception_classes() if where != "_errors.py"}
    assert elsewhere == OUTSIDE, (
        "exception classes belong in src/agentloop_tools/_errors.py, under "
        f"AgentloopToolsError; found elsewhere: {sorted(elsewhere - OUTSIDE)}"
    )


def test_every_exception_of_the_package_derives_from_the_package_base() -> None:
    classes = [
        value
        for value in vars(_errors).values()
        if isinstance(value, type) and issubclass(value, BaseException)
    ]
    assert len(classes) >= 12
    outside = {c.__name__ for c in classes if not issubclass(c, AgentloopToolsError)}
    assert outside == {"FatalToolError"}


def test_built_in_bases_are_kept_so_existing_except_clauses_still_catch() -> None:
    for cls in (InputError, StreamError, CassetteSecretError, _errors.ConfigError):
        assert issubclass(cls, ValueError)
        assert issubclass(cls, AgentloopToolsError)
    assert issubclass(EvidenceAssertionError, AssertionError)
    with pytest.raises(AgentloopToolsError):
        raise EvidenceAssertionError("no citation of python.org")


def test_a_fatal_tool_error_passes_through_except_exception() -> None:
    # agentloop's executor catches Exception; only a BaseException ends the run.
    assert not issubclass(FatalToolError, Exception)
    caught_by_exception, code = False, ""
    try:
        try:
            raise ToolFailure("quota-exceeded", "used up", "stop").fatal("web_search")
        except Exception:  # pragma: no cover - the point is that this does not run
            caught_by_exception = True
    except FatalToolError as fatal:
        code = fatal.code
    assert code == "quota-exceeded"
    assert not caught_by_exception


def test_public_classes_are_shown_under_their_public_module() -> None:
    assert AgentloopToolsError.__module__ == "agentloop_tools"
    assert FatalToolError.__module__ == "agentloop_tools.web"
    assert InputError.__module__ == "agentloop_tools.cassettes"
    assert EvidenceAssertionError.__module__ == "agentloop_tools.testing"
    assert agentloop_tools.web.AgentloopToolsError is AgentloopToolsError


def test_every_fetch_refusal_raised_in_the_source_has_a_documented_code() -> None:
    # The code table is checked statically at each raise site (no runtime assert).
    used: set[str] = set()
    for path in SOURCE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and ast.unparse(node.func).endswith("FetchRefusal")
                and node.args
            ):
                first = node.args[0]
                assert isinstance(first, ast.Constant), (path, ast.unparse(node))
                assert isinstance(first.value, str)
                used.add(first.value)
    assert used, "no FetchRefusal raise site found"
    assert used <= CODES, sorted(used - CODES)


def test_no_exception_name_shadows_a_builtin() -> None:
    names = {name for name, _, _ in [(n, w, b) for w, n, b in _exception_classes()]}
    assert not names & set(dir(builtins))
