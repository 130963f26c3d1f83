"""What ``audit`` and ``evidence`` read: the files under the paths given, the policy, and
every input problem, built here in one shape.

A path given is read whatever it is (a link to a folder included). Inside a folder, a
symbolic link is never followed: one that resolves inside the paths given is read once,
under its real name, when the walk reaches that; one that resolves outside them, and a
loop, are named and counted as not followed. A broken link, a folder that cannot be
listed or a path that does not exist is a problem, never a silent skip.
"""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentloop_tools._errors import UsageProblem

if TYPE_CHECKING:
    import argparse

INPUT_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")
# Never searched inside a directory (named on the command line, they are read): version
# control, environments and caches.
VCS_FOLDERS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})
VENDORED_FOLDERS = frozenset(
    {".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__", "site-packages",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis"}
)  # fmt: skip
_DOMAIN_LIKE = re.compile(r"[\w-]+(\.[\w-]+)*\.[A-Za-z]{2,}")


# --- problems ----------------------------------------------------------------------


def problem(
    path: str | Path, reason: str, *, interaction: int | None = None, line: int | None = None
) -> dict[str, Any]:
    """One input problem, as every format prints it (``_report._entries.problem_entry``)."""
    from agentloop_tools._report._entries import problem_entry

    return problem_entry(path, reason, interaction=interaction, line=line)


def read_problem(found: Any) -> dict[str, Any]:
    """A problem the reader reported (a ``cassettes.Problem``)."""
    return problem(found.path, found.reason, interaction=found.interaction)


def failure(path: str | Path, error: BaseException, *, line: int | None = None) -> dict[str, Any]:
    """A file (or a log's line) that raised while read: one bad input never stops a run."""
    reason = " ".join(str(error).split())[:200]
    return problem(path, f"could not be read ({type(error).__name__}: {reason})", line=line)


def os_reason(error: OSError) -> str:
    from agentloop_tools.cassettes._load import os_reason as reason

    return reason(error)


# --- agentloop and the policy ------------------------------------------------------


def require_agentloop_06() -> None:
    """Cassettes are read through agentloop's clients' http_client= seam (0.6+)."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.version import InvalidVersion, Version

    try:
        installed = version("based-models-agentloop")
    except PackageNotFoundError:  # pragma: no cover - a dependency of this package
        return
    try:
        # 0.6.0rc1 and 0.6.0.dev3 are before 0.6 (a dotted split read them as 0.6).
        too_old = Version(installed) < Version("0.6")
    except InvalidVersion:
        return  # a local build with a version packaging cannot read: let it try
    if too_old:
        raise UsageProblem(
            f"reading recordings needs based-models-agentloop 0.6 or newer (installed: "
            f"{installed}); upgrade it: pip install 'based-models-agentloop>=0.6'. The core "
            "library (agentloop_tools.web) works on 0.4 and 0.5."
        )


def chosen_policy(args: argparse.Namespace) -> tuple[Any, str]:
    """The policy given (--allow, --block, --policy), else the project's; none is an error."""
    from agentloop_tools._config import policy_file
    from agentloop_tools._errors import ConfigError
    from agentloop_tools.web import DomainPolicy

    try:
        if args.allow:
            return DomainPolicy.allow(args.allow), "--allow"
        if args.block:
            return DomainPolicy.block(args.block), "--block"
        if args.policy:
            return policy_file(Path(args.policy)), args.policy
    except (ConfigError, ValueError, TypeError) as error:
        raise UsageProblem(str(error)) from None
    policy, origin, read = _project_or_read()
    if policy is not None:
        return policy, origin
    shown = ", ".join(str(path) for path in read) or "no configuration file"
    raise UsageProblem(
        "no policy: pass --allow DOMAIN[,DOMAIN...], --block DOMAIN[,DOMAIN...] or --policy "
        "FILE, or set allow = [...] or block = [...] under [tool.agentloop-tools] in the "
        "pyproject.toml a pytest run here reads (or the ini keys agentloop_allow_domains / "
        f"agentloop_block_domains / agentloop_policy_file). Read: {shown}."
    )


def project_policy() -> tuple[Any, str | None]:
    """The project's policy (as a pytest run here reads it), or none: then nothing is
    marked violating."""
    policy, origin, _read = _project_or_read()
    return (policy, origin) if policy is not None else (None, None)


def _project_or_read() -> tuple[Any, str, tuple[Path, ...]]:
    # The policy a pytest run started here would use: pytest's configuration file
    # and rootdir, never a parent folder's pyproject.toml.
    from agentloop_tools._config import policy_at
    from agentloop_tools._errors import ConfigError

    try:
        found = policy_at(Path.cwd())
    except (ConfigError, ValueError, TypeError) as error:
        raise UsageProblem(str(error)) from None
    if found.policy is None:
        return None, "", found.read
    table = " [tool.agentloop-tools]" if found.source == "pyproject" else ""
    return found.policy, f"{found.path}{table}", found.read


# --- files -------------------------------------------------------------------------


@dataclass
class Found:
    """The files under the given paths, what could not be listed, and what was skipped."""

    files: list[Path] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)
    skipped: set[str] = field(default_factory=set)
    # .json files a folder walk found that are neither a cassette nor a transcript.
    ignored: list[Path] = field(default_factory=list)
    named_skipped: bool = False  # some of them named on the command line (--skip-unrecognized)
    excluded: int = 0  # files --exclude left out (those in excluded folders included)
    gitignored: int = 0  # files --respect-gitignore left out
    skipped_folders: int = 0  # folders not entered: version control, vendored (by name)
    # Symbolic links not followed: (link, what it resolves to) outside the paths given,
    # and (link, the folder it leads back to, or "" when it never resolves) loops.
    outside: list[tuple[Path, str]] = field(default_factory=list)
    loops: list[tuple[Path, str]] = field(default_factory=list)


def collect_for(args: argparse.Namespace, hint_domains: bool = False) -> Found:
    """``audit``'s and ``evidence``'s inputs, less what --exclude and .gitignore leave out."""
    from agentloop_tools.cli._skip import Exclusions

    exclusions = Exclusions(args.exclude)
    found = collect(
        args.paths,
        INPUT_SUFFIXES,
        hint_domains,
        exclusions,
        skip_unrecognized=args.skip_unrecognized,
    )
    # The baseline beside the cassettes is ours: neither read nor reported as skipped.
    ours = {
        os.path.abspath(name)
        for name in (getattr(args, "baseline", None), getattr(args, "write_baseline", None))
        if name
    }
    found.ignored = [path for path in found.ignored if os.path.abspath(path) not in ours]
    if args.respect_gitignore:
        _leave_out_gitignored(args.paths, found)
    return found


def _leave_out_gitignored(paths: Sequence[str], found: Found) -> None:
    from agentloop_tools._errors import SkipProblem
    from agentloop_tools.cli._skip import git_ignored

    # Only walked files: a file named on the command line is read, as git-aware
    # tools do. A folder given is asked about as a whole.
    explicit = {Path(raw) for raw in paths}
    walked = [path for path in found.files if path not in explicit]
    ignored: set[Path] = set()
    try:
        for raw in paths:
            root = Path(raw)
            if root.is_dir():
                under = [path for path in walked if _below(path, root)]
                ignored |= git_ignored(root, under)
    except SkipProblem as error:
        raise UsageProblem(str(error)) from None
    found.gitignored = len(ignored)
    found.files = [path for path in found.files if path not in ignored]


def _below(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def collect(
    paths: Sequence[str],
    suffixes: tuple[str, ...] | None,
    hint_domains: bool = False,
    exclusions: Any = None,
    *,
    skip_unrecognized: bool = False,
) -> Found:
    """Every file under ``paths`` (with one of ``suffixes``, or any file when None).

    ``skip_unrecognized``: a file named in ``paths`` that is neither a cassette nor a
    transcript is skipped (``Found.ignored``), as a folder walk skips one; otherwise it
    is a problem.
    """
    found = Found()
    skip = VCS_FOLDERS | VENDORED_FOLDERS
    visited: set[tuple[int, int]] = set()
    roots = tuple(os.path.realpath(raw) for raw in paths)
    for raw in paths:
        path = Path(raw)
        try:
            info = path.stat()
        except OSError as error:
            reason = os_reason(error)
            if hint_domains and not path.exists() and _DOMAIN_LIKE.fullmatch(raw):
                reason += (
                    f". If {raw!r} is a domain: --allow and --block take one value each; "
                    f"write --allow a.com,{raw} or repeat the flag"
                )
            found.problems.append(problem(raw, reason))
            continue
        if exclusions and exclusions.matches(path, None):
            found.excluded += _count(path, suffixes, skip)
            continue
        if path.is_dir():
            _walk(path, _Walk(suffixes, skip, visited, found, roots, exclusions))
        elif suffixes is None or not _regular(info.st_mode):
            found.files.append(path)  # reading it says why a FIFO or device is refused
        elif skip_unrecognized and _unrecognized(path, suffixes):
            found.ignored.append(path)
            found.named_skipped = True
        elif path.suffix.lower() in suffixes:
            found.files.append(path)
        else:
            reason = "not a cassette (.yaml, .yml) or transcript (.jsonl, .json)"
            found.problems.append(problem(raw, reason))
    return found


def require_something(found: Found, paths: Sequence[str], command: str) -> None:
    """No file to read at all is a problem: a mistyped or empty folder must not pass.

    Files named and skipped under ``--skip-unrecognized`` were found and named on
    stderr: a hook passing only a ``prompts.json`` has nothing to audit, and passes.
    """
    if found.files or found.problems or found.named_skipped:
        return
    skipped = f" (not searched: {', '.join(sorted(found.skipped))})" if found.skipped else ""
    links = len(found.outside) + len(found.loops)
    followed = (
        f"; {links} symbolic link(s) not followed (each named on stderr: pass its target "
        "to read it)"
        if links
        else ""
    )
    reason = (
        f"no file to read: {command} reads cassettes (.yaml, .yml, vcrpy's .json) and "
        f"transcripts (.jsonl, .json) in this folder and those below it{skipped}, and found "
        f"none{followed}. Check the path: a mistyped or empty cassette folder would audit "
        "nothing"
    )
    found.problems.extend(problem(raw, reason) for raw in paths)


@dataclass
class _Walk:
    """One folder walk's settings and what it found."""

    suffixes: tuple[str, ...] | None
    skip: frozenset[str]
    visited: set[tuple[int, int]]
    found: Found
    roots: tuple[str, ...] = ()  # the paths given, resolved
    exclusions: Any = None

    def wanted(self, path: Path) -> bool:
        return self.suffixes is None or path.suffix.lower() in self.suffixes


def _walk(root: Path, walk: _Walk) -> None:
    stack = [root]
    while stack:
        entries = _entries(stack.pop(), walk)
        folders = [found for entry in entries if (found := _visit(entry, root, walk))]
        stack.extend(reversed(folders))
    walk.found.files.sort()
    walk.found.ignored.sort()


def _entries(folder: Path, walk: _Walk) -> list[os.DirEntry[str]]:
    """A folder's entries by name; [] (and a problem when it is one) if not listed."""
    problems = walk.found.problems
    try:
        info = folder.stat()
    except OSError as error:
        problems.append(problem(folder, os_reason(error)))
        return []
    if (info.st_dev, info.st_ino) in walk.visited:
        return []  # a path given twice, or inside another given: read once
    walk.visited.add((info.st_dev, info.st_ino))
    try:
        return sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as error:
        problems.append(problem(folder, os_reason(error)))
        return []


def _visit(entry: os.DirEntry[str], root: Path, walk: _Walk) -> Path | None:
    """Take one entry of a folder: a file is kept or left out; a folder to enter is returned."""
    found, path = walk.found, Path(entry.path)
    try:
        link = entry.is_symlink()
    except OSError as error:
        found.problems.append(problem(path, os_reason(error)))
        return None
    if link:
        _visit_link(entry, path, root, walk)
        return None
    try:
        is_dir = entry.is_dir(follow_symlinks=True)
    except OSError as error:
        found.problems.append(problem(path, os_reason(error)))
        return None
    if is_dir:
        if entry.name in walk.skip:
            found.skipped.add(entry.name)
            found.skipped_folders += 1
        elif walk.exclusions and walk.exclusions.matches(path, root):
            found.excluded += _count(path, walk.suffixes, walk.skip)
        else:
            return path
        return None
    if walk.exclusions and walk.exclusions.matches(path, root):
        if walk.wanted(path):
            found.excluded += 1
        return None
    if walk.wanted(path):
        if walk.suffixes is not None and path.suffix.lower() == ".json" and _not_evidence(path):
            found.ignored.append(path)  # prompts.json beside the cassettes
        else:
            found.files.append(path)
    return None


def _visit_link(entry: os.DirEntry[str], path: Path, root: Path, walk: _Walk) -> None:
    """A symbolic link in a folder: never followed (a link resolving inside the paths
    given is read under its real name; any other is named and counted)."""
    found = walk.found
    try:
        target = os.path.realpath(path, strict=True)
    except FileNotFoundError:
        if not (walk.exclusions and walk.exclusions.matches(path, root)):
            reason = "a broken symbolic link (its target does not exist)"
            found.problems.append(problem(path, reason))
        return
    except OSError as error:
        if error.errno != errno.ELOOP:
            found.problems.append(problem(path, os_reason(error)))
        elif not (walk.exclusions and walk.exclusions.matches(path, root)):
            found.loops.append((path, ""))  # it never resolves
        return
    is_dir = os.path.isdir(target)
    if is_dir and entry.name in walk.skip:
        found.skipped.add(entry.name)
        found.skipped_folders += 1
        return
    if walk.exclusions and walk.exclusions.matches(path, root):
        if walk.wanted(path) and not is_dir:
            found.excluded += 1
        return
    if any(_within(target, given) for given in walk.roots):
        if is_dir and _within(os.path.realpath(path.parent), target):
            found.loops.append((path, target))  # back to a folder it is in
        return  # read under its real name, where the walk finds it
    if is_dir or walk.wanted(path) or walk.wanted(Path(target)):
        found.outside.append((path, target))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _count(path: Path, suffixes: tuple[str, ...] | None, skip: frozenset[str]) -> int:
    from agentloop_tools.cli._skip import count_files

    if path.is_dir():
        return count_files(path, suffixes, skip)
    return 1


def _unrecognized(path: Path, suffixes: tuple[str, ...]) -> bool:
    """Neither a cassette nor a transcript: by its suffix, or JSON holding neither."""
    suffix = path.suffix.lower()
    return suffix not in suffixes or (suffix == ".json" and _not_evidence(path))


def _not_evidence(path: Path) -> bool:
    """Whether a JSON file holds neither a cassette nor a transcript: an object without
    ``interactions`` or ``messages``, or a list of no message or transcript.

    Anything else, JSON that does not parse included, is read, and its problems reported.
    """
    try:
        if not path.is_file():
            return False  # a FIFO or device is never opened here: the reader refuses it
        data = json.loads(path.read_bytes())
    except Exception:  # unreadable or not JSON: the reader says why
        return False
    if isinstance(data, dict):
        return "interactions" not in data and "messages" not in data
    if isinstance(data, list):
        return not any(
            isinstance(item, dict) and ("role" in item or "messages" in item) for item in data
        )
    return False  # a bare number or null: more likely a broken file than another one


def _regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)
