"""What users install: the wheel's metadata, the extras, and ``./dev build``.

The real guard of the built files is .ci/run, which builds them with ``./dev build`` and
installs the wheel and the sdist each in a fresh environment. These tests are the quick
part: the metadata hatchling writes, a missing optional dependency naming its extra, and
the build command's paths (run against a stand-in environment, not PyPA's build).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).parents[1]


def _absolute_paths_in_dev_build() -> list[str]:
    """The paths ./dev's build branch writes from the root: /dist, /bin/... ."""
    text = (REPO / "dev").read_text()
    start = text.index("\n    build)\n")
    return re.findall(r'(?:^|\s)"*(/(?:dist|bin)\b)', text[start : text.index(";;", start)])


def test_dev_build_names_no_path_outside_the_checkout() -> None:
    # Emptied variables once made these "/dist" and "/bin/python": rm -rf /dist.
    assert _absolute_paths_in_dev_build() == []


@pytest.mark.skipif(shutil.which("bash") is None, reason="./dev is a bash script")
def test_dev_build_builds_into_the_checkouts_dist(tmp_path: Path) -> None:
    # A copy of ./dev beside a stand-in .venv whose python and twine log their arguments:
    # what the build branch runs, without building anything.
    if _absolute_paths_in_dev_build():
        pytest.fail("./dev build names /dist or /bin: not run")  # it would remove /dist
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(REPO / "dev", checkout / "dev")
    shutil.copy(REPO / "pyproject.toml", checkout / "pyproject.toml")
    (checkout / "dist").mkdir()
    (checkout / "dist" / "stale.whl").touch()
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    log = tmp_path / "calls"
    python = (
        '#!/bin/sh\n[ "$1" = -c ] && exit 0\n'  # the version check
        f'echo "python $*" >>{log}\n'
        'while [ "$1" != --outdir ]; do shift; done\n'
        'mkdir -p "$2" && touch "$2/a.whl" "$2/a.tar.gz"\n'
    )
    (bin_dir / "python").write_text(python)
    (bin_dir / "twine").write_text(f'#!/bin/sh\necho "twine $*" >>{log}\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    stamp = subprocess.run(
        "cat pyproject.toml | cksum", shell=True, cwd=checkout, capture_output=True, text=True
    )
    (checkout / ".venv" / ".installed").write_text(stamp.stdout)

    subprocess.run(["bash", str(checkout / "dev"), "build"], check=True, cwd=tmp_path)

    dist = checkout / "dist"
    assert sorted(p.name for p in dist.iterdir()) == ["a.tar.gz", "a.whl"]  # stale removed
    assert log.read_text().splitlines() == [
        f"python -m build --outdir {dist} {checkout}",
        f"twine check --strict {dist}/a.tar.gz {dist}/a.whl",
    ]
