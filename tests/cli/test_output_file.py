"""``-o FILE``: the output replaces the file once whole; spooled JSON as if written whole."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TextIO

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agentloop_tools.cli import _emit
from tests.cli.helpers import DEMO, run


class Broken(Exception):
    pass


def _fails_midway(out: TextIO) -> None:
    out.write("a partial report\n" * 200_000)  # past a chunk: some of it was passed on
    raise Broken


def test_a_failing_output_leaves_the_old_file_untouched_and_no_temporary(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text("the old report\n")
    with pytest.raises(Broken):
        _emit.emit(str(report), _fails_midway, exact=True)
    assert report.read_text() == "the old report\n"  # was truncated, then half written
    assert os.listdir(tmp_path) == ["report.json"]


def test_a_failing_output_creates_no_file(tmp_path: Path) -> None:
    with pytest.raises(Broken):
        _emit.emit(str(tmp_path / "report.json"), _fails_midway)
    assert os.listdir(tmp_path) == []


def test_the_output_replaces_the_file_keeping_its_mode(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.write_text("the old report\n")
    report.chmod(0o640)
    result = run("audit", DEMO, "--block", "medium.com", "--format", "junit", "-o", report)
    assert result.returncode == 1, result.stderr
    assert report.read_text().startswith("<?xml")
    assert stat.S_IMODE(report.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["report.xml"]


def test_a_new_file_has_the_mode_open_gives(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        _emit.emit(str(tmp_path / "new.txt"), _new)
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


def _new(out: TextIO) -> None:
    out.write("new\n")


def test_a_symbolic_link_is_written_through(tmp_path: Path) -> None:
    target, link = tmp_path / "target.txt", tmp_path / "link.txt"
    target.write_text("old\n")
    link.symlink_to(target)
    _emit.emit(str(link), _new)
    assert link.is_symlink()
    assert target.read_text() == "new\n"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(entry=JSON, indent=st.sampled_from(["", "    ", "      "]))
@example(entry={"where": "text", "span": [1, 2], "url": "é\n"}, indent="    ")
def test_a_spooled_entry_is_written_as_json_dumps_writes_it(entry: object, indent: str) -> None:
    from agentloop_tools.cli._spool import _indented

    assert _indented(entry, indent) == json.dumps(entry, indent=2).replace("\n", "\n" + indent)


def test_a_file_with_another_hard_link_is_written_in_place(tmp_path: Path) -> None:
    report, other = tmp_path / "report.txt", tmp_path / "other.txt"
    report.write_text("old\n")
    other.hardlink_to(report)
    _emit.emit(str(report), _new)
    assert other.read_text() == "new\n"


def test_a_file_another_user_owns_is_written_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Replacing it would hand it to the user running audit (and drop its ACLs): a file
    # someone else owns and lets this user write keeps its owner, written in place.
    report = tmp_path / "report.txt"
    report.write_text("old\n")
    inode = report.stat().st_ino
    monkeypatch.setattr(os, "geteuid", lambda: report.stat().st_uid + 1)
    _emit.emit(str(report), _new)
    assert report.read_text() == "new\n"
    assert report.stat().st_ino == inode
