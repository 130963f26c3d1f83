"""What users install: the wheel's metadata, the extras, and ``./dev build``.

The real guard of the built files is .ci/run, which builds them with ``./dev build`` and
installs the wheel and the sdist each in a fresh environment. These tests are the quick
part: the metadata hatchling writes, a missing optional dependency naming its extra, and
the build command's paths (run against a stand-in environment, not PyPA's build).
"""

from __future__ import annotations

import email.parser
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.message import Message
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).parents[1]
URL = "https://github.com/based-models/agentloop-tools"


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


@pytest.fixture(scope="module")
def metadata(tmp_path_factory: pytest.TempPathFactory) -> Message:
    """The METADATA of a wheel hatchling builds from this checkout (about a second)."""
    pytest.importorskip("hatchling", reason="hatchling (the dev extra) builds the wheel")
    out = tmp_path_factory.mktemp("wheel")
    build = f"from hatchling.build import build_wheel; build_wheel({str(out)!r})"
    subprocess.run(
        [sys.executable, "-c", build],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    [wheel] = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(name).decode()
    return email.parser.Parser().parsestr(text)


def test_the_license_is_an_spdx_expression_in_metadata_2_4(metadata: Message) -> None:
    # 2.4 brought License-Expression (hatchling 1.27, the floor); a newer hatchling
    # writes a later version.
    assert Version(metadata["Metadata-Version"]) >= Version("2.4")
    assert metadata["License-Expression"] == "Apache-2.0"
    # PEP 639: a License classifier beside License-Expression is an error for PyPI.
    assert not [c for c in metadata.get_all("Classifier", []) if c.startswith("License ::")]


def test_the_project_urls_and_keywords(metadata: Message) -> None:
    urls = dict(line.split(", ", 1) for line in metadata.get_all("Project-URL", []))
    assert urls["Changelog"] == f"{URL}/blob/main/CHANGELOG.md"
    assert urls["Issues"] == f"{URL}/issues"
    assert urls["Source"] == URL
    assert "pytest" in metadata["Keywords"].split(",")


def _extra(metadata: Message, extra: str) -> set[str]:
    """The names of the packages ``extra`` adds to the core install."""
    names = set()
    for line in metadata.get_all("Requires-Dist", []):
        requirement = Requirement(line)
        marker = requirement.marker
        # Only under this extra: not a core requirement with some other marker.
        if marker and marker.evaluate({"extra": extra}) and not marker.evaluate({"extra": ""}):
            names.add(requirement.name)
    return names


def test_the_testing_extra_adds_no_second_httpx_floor(metadata: Message) -> None:
    # The core requires httpx at a newer floor: a second, older one only misleads.
    assert "httpx" not in _extra(metadata, "testing")
    assert "pytest" in _extra(metadata, "testing")


def test_strategies_without_hypothesis_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "try:\n"
        "    import agentloop_tools.testing.strategies\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error.name, error, sep='|')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    kind, name, message = result.stdout.strip().split("|")
    assert kind == "ModuleNotFoundError"
    assert name == "hypothesis"
    assert "pip install 'based-models-agentloop-tools[strategies]'" in message


def test_strategies_import_with_hypothesis() -> None:
    pytest.importorskip("hypothesis")
    from agentloop_tools.testing import strategies

    assert callable(strategies.urls)


def test_hypothesis_is_in_the_strategies_extra_only(metadata: Message) -> None:
    assert "strategies" in metadata.get_all("Provides-Extra", [])
    assert _extra(metadata, "strategies") == {"hypothesis"}
    # Installed, Hypothesis's pytest plugin loads in every run of the environment.
    assert "hypothesis" not in _extra(metadata, "testing")


def test_dev_repeats_the_strategies_extras_hypothesis_floor() -> None:
    # .ci/lowest reads Hypothesis's floor from dev; users get the strategies extra's.
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    [ours] = [r for r in map(Requirement, extras["strategies"]) if r.name == "hypothesis"]
    [devs] = [r for r in map(Requirement, extras["dev"]) if r.name == "hypothesis"]
    assert ours.specifier == devs.specifier
