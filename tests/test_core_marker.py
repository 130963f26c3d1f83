"""The core tests are chosen by a marker: .ci/lowest runs them on agentloop 0.4 and 0.5.

A module in the core's test rooms that forgot the marker would silently leave the oldest
agentloop releases the project promises untested; this holds each to it.
"""

import ast
from pathlib import Path

TESTS = Path(__file__).parent
CORE_ROOMS = ("policy", "text", "transcript", "web")


def declares_core(path: Path) -> bool:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            return "pytest.mark.core" in ast.unparse(node.value)
    return False


def test_every_module_in_the_cores_test_rooms_declares_the_core_marker() -> None:
    modules = [path for room in CORE_ROOMS for path in sorted((TESTS / room).glob("test_*.py"))]
    assert len(modules) > 20
    missing = [str(path.relative_to(TESTS)) for path in modules if not declares_core(path)]
    assert not missing, f"add `pytestmark = pytest.mark.core` to: {', '.join(missing)}"
