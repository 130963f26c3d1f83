"""The project-wide domain policy, shared by the command line and the plugin.

It is read where pytest reads its own configuration, and nowhere else: the ini keys
``agentloop_allow_domains`` / ``agentloop_block_domains``, a policy file named by the ini
key ``agentloop_policy_file`` (relative to the rootdir), or, in the pyproject.toml pytest
uses (its configuration file, else the rootdir's)::

    [tool.agentloop-tools]
    allow = ["python.org", "realpython.com"]   # or: block = ["wikipedia.org"]
    refused_attempts = "fail"                   # optional: "report" (the default) or "fail"

A parent folder's pyproject.toml (a monorepo root, a home folder) is never read.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from agentloop_tools._errors import ConfigError

if TYPE_CHECKING:
    from agentloop_tools.web import DomainPolicy

TABLE = "tool.agentloop-tools"
TABLE_KEYS = ("allow", "block", "refused_attempts")
INI_POLICY_KEYS = ("agentloop_allow_domains", "agentloop_block_domains")
REFUSED_KEY = "refused_attempts"  # in the table
REFUSED_INI_KEY = "agentloop_refused_attempts"
POLICY_FILE_KEY = "agentloop_policy_file"
# A policy file is a list of domains: a megabyte is far more than any needs.
MAX_POLICY_BYTES = 1024 * 1024
# pytest's configuration files, in the order pytest 9 looks for them in each folder.
CONFIG_NAMES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
# Files pytest takes as its configuration even with no pytest section in them.
_ALWAYS_CONFIG = frozenset({"pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"})
# Before pytest 9: no pytest.toml, and .pytest.ini counts only with a [pytest] section.
_CONFIG_NAMES_8 = tuple(name for name in CONFIG_NAMES if not name.endswith("pytest.toml"))
_ALWAYS_CONFIG_8 = frozenset({"pytest.ini"})


def _rules() -> tuple[tuple[str, ...], frozenset[str]]:
    """The file names and always-taken files of the pytest installed here (pytest 9's
    when there is none: the command line does not need pytest)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        major = int(version("pytest").split(".", 1)[0])
    except (PackageNotFoundError, ValueError):
        return CONFIG_NAMES, _ALWAYS_CONFIG
    return (CONFIG_NAMES, _ALWAYS_CONFIG) if major >= 9 else (_CONFIG_NAMES_8, _ALWAYS_CONFIG_8)


def read_table(path: Path) -> dict[str, Any] | None:
    """``[tool.agentloop-tools]`` of a pyproject.toml, or None if the file has none.

    A table that is there but cannot be a policy (no list, an unknown key, a misspelled
    table name) is a :class:`ConfigError`: a typo must not read as "no policy".
    """
    tools = _toml(path).get("tool", {})
    if not isinstance(tools, dict):
        return None
    table = tools.get("agentloop-tools")
    if table is None:
        _refuse_near_miss(path, tools)
        return None
    where = f"{path} [{TABLE}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table holding allow = [...] or block = [...].")
    unknown = sorted(set(table) - set(TABLE_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; the table takes "
            'allow = [...] or block = [...]. It may also set refused_attempts = "report" or '
            '"fail".'
        )
    if not table:
        raise ConfigError(f"{where}: no allow = [...] or block = [...] list.")
    if REFUSED_KEY in table:
        refused_setting(table[REFUSED_KEY], f"{where} {REFUSED_KEY}")
    return table


def refused_setting(value: object, where: str) -> str:
    """A refused-attempts setting as written, checked: ``"report"`` or ``"fail"``."""
    from agentloop_tools.web._policy._violation import refused_attempts_value

    try:
        return refused_attempts_value(value, where)
    except ValueError as error:
        raise ConfigError(str(error)) from None


def _refuse_near_miss(path: Path, tools: dict[str, Any]) -> None:
    """A table named almost like ours (``[tool.agentloop_tools]``) is a typo, not no policy."""
    import difflib

    near = difflib.get_close_matches(
        "agentloop-tools", [str(key) for key in tools], n=1, cutoff=0.8
    )
    if near:
        raise ConfigError(
            f"{path}: [tool.{near[0]}] is not read; the domain list goes in [{TABLE}] "
            f"(with a hyphen). Rename the table."
        )


def policy_file(path: Path) -> DomainPolicy:
    """A TOML file holding ``allow``/``block``, at the top level or under the tool table.

    Read as any file someone else wrote is: a regular file only, up to
    ``MAX_POLICY_BYTES`` (a FIFO would block the run, ``/dev/zero`` never end).
    """
    from agentloop_tools._errors import InputError
    from agentloop_tools.cassettes._load import read_bytes

    try:
        data = _toml(path, read_bytes(path, limit=MAX_POLICY_BYTES))
    except InputError as error:
        raise ConfigError(f"{path}: {error}") from None
    table = data.get("tool", {}).get("agentloop-tools") if "tool" in data else data
    if isinstance(table, dict) and REFUSED_KEY in table:
        # Not read from here: a setting that seems to apply and does not is an off-switch.
        raise ConfigError(
            f"{path}: {REFUSED_KEY} is not read from a policy file; set it under "
            f"[{TABLE}] in pyproject.toml or with the ini key {REFUSED_INI_KEY}."
        )
    return policy_from(table if isinstance(table, dict) else {}, str(path))


def policy_from(table: dict[str, Any], where: str) -> DomainPolicy:
    """The policy of a ``[tool.agentloop-tools]``-style table (``allow`` or ``block``)."""
    policy = build_policy(where, allow=table.get("allow"), block=table.get("block"))
    if policy is None:
        raise ConfigError(f"{where}: no allow = [...] or block = [...] list.")
    return policy


def build_policy(
    where: str,
    *,
    allow: object = None,
    block: object = None,
    policy: object = None,
    names: tuple[str, str, str] = ("allow", "block", "policy"),
) -> DomainPolicy | None:
    """The one way configuration becomes a policy: ini keys, pyproject, marker, command line.

    ``None`` means "not given"; nothing given at all is ``None`` (no policy). Anything
    else that is not exactly one valid list raises :class:`ConfigError` naming ``where``,
    the entry and the fix, so a mistake can never leave a run without its policy.

    Args:
        where: how the user names this place ("ini key agentloop_block_domains", ...).
        allow: an allowlist as given. block: a blocklist. policy: a DomainPolicy.
        names: how ``where`` spells the three settings, for messages.
    """
    from agentloop_tools.web import DomainPolicy

    settings = zip(("allow", "block", "policy"), names, (allow, block, policy), strict=True)
    given = [(kind, name, value) for kind, name, value in settings if value is not None]
    if not given:
        return None
    if len(given) > 1:
        both = " and ".join(name for _, name, _ in given)
        raise ConfigError(
            f"{where}: {both} are both set; a policy is an allowlist or a blocklist. Keep one."
        )
    [(kind, name, value)] = given
    if kind == "policy":
        if not isinstance(value, DomainPolicy):
            raise ConfigError(
                f"{where}: {name} must be a DomainPolicy such as "
                f"DomainPolicy.allow(['python.org']), got {value!r}."
            )
        return value
    if isinstance(value, str | bytes):
        raise ConfigError(
            f"{where}: {name} must be a list of domains, not the single string {value!r}; "
            f"write {name if name.endswith('=') else ''}[{value!r}]."
        )
    if isinstance(value, DomainPolicy):
        policy_name = names[2]
        raise ConfigError(
            f"{where}: {name} takes a list of domains, and this is a DomainPolicy; pass it "
            f"as {policy_name}{'' if policy_name.endswith('=') else ' = '}{value!r} instead."
        )
    if isinstance(value, list | tuple):
        spaced = next((e for e in value if isinstance(e, str) and len(e.split()) > 1), None)
        if spaced is not None:
            parts = spaced.split()
            raise ConfigError(
                f"{where}: entry {spaced!r} holds {len(parts)} domains separated by spaces; "
                f"separate them with commas ({', '.join(parts)}) or put one per line."
            )
    try:
        if isinstance(value, list | tuple) and all(isinstance(e, str) for e in value):
            return _built(kind, tuple(value))
        build = DomainPolicy.allow if kind == "allow" else DomainPolicy.block
        return build(value)  # type: ignore[arg-type]
    except (ValueError, TypeError) as error:
        raise ConfigError(f"{where}: {_in_our_words(str(error))}") from None


@functools.lru_cache(maxsize=256)
def _built(kind: str, domains: tuple[str, ...]) -> DomainPolicy:
    """One policy per list: a suite's markers repeat a few lists over many tests, each
    read at collection. A policy is immutable, so tests may share it; a list that
    raises is not cached and raises again for the next test that gives it."""
    from agentloop_tools.web import DomainPolicy

    return DomainPolicy.allow(domains) if kind == "allow" else DomainPolicy.block(domains)


def _in_our_words(message: str) -> str:
    # DomainPolicy's messages name its own API; here the user wrote a setting.
    for api in ("DomainPolicy.allow()", "DomainPolicy.block()"):
        message = message.replace(api, "the list")
    for api in ("DomainPolicy.allow", "DomainPolicy.block"):
        message = message.replace(f"{api} entry", "entry").replace(f"{api} entries", "entries")
    return message


type PolicySource = Literal["none", "ini", "policy-file", "pyproject"]


class ProjectPolicy(NamedTuple):
    """The project-wide policy (None: none set), where it was written, and what was read."""

    policy: DomainPolicy | None
    origin: str  # for people: "pyproject.toml [tool.agentloop-tools]", "policy.toml (...)"
    read: tuple[Path, ...]
    path: Path | None = None  # the file the policy is written in
    source: PolicySource = "none"  # for code: which of the places wrote it
    # How refused attempts count by the project's settings, and where "fail" was written.
    refused_attempts: str = "report"
    refused_from: str | None = None

    def summary(self) -> str:
        """One line for a run's header: the mode, the list's size, where it came from."""
        if self.policy is None:
            return "none"
        where = " from pyproject.toml" if self.source == "pyproject" else ""
        return f"{self.policy.mode} {len(self.policy.domains)} domain(s){where}"


def pyproject_for(inifile: Path | None, rootdir: Path) -> Path:
    """The pyproject.toml whose table is the project's: pytest's own, else the rootdir's."""
    if inifile is not None and inifile.name == "pyproject.toml":
        return inifile
    return rootdir / "pyproject.toml"


def project_policy(
    inifile: Path | None, rootdir: Path, settings: Mapping[str, list[str]]
) -> ProjectPolicy:
    """The one project-wide policy, from the settings pytest reads.

    Args:
        inifile: pytest's configuration file (None: it found none).
        rootdir: pytest's rootdir.
        settings: the plugin's ini keys that are set (an override counts), each as its
            lines; a key that is not set is absent.

    More than one source of a policy is a :class:`ConfigError`: an ini list quietly
    replacing the pyproject table (or the reverse) would switch a list off unseen.
    """
    inifile_name = inifile.name if inifile is not None else "the ini file"
    found: list[tuple[DomainPolicy, str, Path | None, PolicySource]] = []
    lists = {key: _entries(settings[key]) for key in INI_POLICY_KEYS if key in settings}
    for key, domains in lists.items():
        if not domains:
            raise ConfigError(
                f"ini key {key} in {inifile_name} is set but lists no domain, so it would "
                "audit nothing. List one domain per line (or separate them with commas), or "
                "remove the key."
            )
    if lists:
        [first, *_] = lists
        where = f"ini key {first} in {inifile_name}" if len(lists) == 1 else inifile_name
        policy = build_policy(
            where,
            allow=lists.get(INI_POLICY_KEYS[0]),
            block=lists.get(INI_POLICY_KEYS[1]),
            names=(*INI_POLICY_KEYS, "policy"),
        )
        assert policy is not None
        found.append((policy, inifile_name, inifile, "ini"))
    read = [inifile] if inifile is not None else []
    if POLICY_FILE_KEY in settings:
        named, path = _named_policy_file(settings, rootdir, inifile_name)
        found.append((policy_file(path), f"{named} ({POLICY_FILE_KEY})", path, "policy-file"))
        read.append(path)
    refused = _refused_in_ini(settings, inifile_name)  # where "fail" is written
    pyproject = pyproject_for(inifile, rootdir)
    if pyproject.is_file() and mentions_us(pyproject):
        if pyproject not in read:
            read.append(pyproject)
        table = read_table(pyproject)
        refused += _refused_in_table(table)
        if table is not None and set(table) - {REFUSED_KEY}:
            policy = policy_from(table, f"{pyproject} [{TABLE}]")
            found.append((policy, f"pyproject.toml [{TABLE}]", pyproject, "pyproject"))
    if len(found) > 1:
        raise ConfigError(
            f"a project-wide domain policy is set in {len(found)} places "
            f"({'; '.join(entry[1] for entry in found)}), and a run is audited with one. "
            "Which one should win is not a guess to make: keep one."
        )
    if not found:
        return ProjectPolicy(None, "none", tuple(read), None, "none", *_refused_setting(refused))
    [(policy, origin, written_in, source)] = found
    return ProjectPolicy(
        policy, origin, tuple(read), written_in, source, *_refused_setting(refused)
    )


def _named_policy_file(
    settings: Mapping[str, list[str]], rootdir: Path, inifile_name: str
) -> tuple[str, Path]:
    """The policy file the ini key names, as written and as a path; it must be a file."""
    [named] = _entries(settings[POLICY_FILE_KEY])[:1] or [""]
    if not named:
        raise ConfigError(
            f"ini key {POLICY_FILE_KEY} in {inifile_name} is set but names no file; name "
            "a TOML file (relative to the rootdir) or remove the key."
        )
    path = rootdir / named
    if not path.is_file():
        raise ConfigError(
            f"ini key {POLICY_FILE_KEY} in {inifile_name} names {named}, but {path} is "
            "not a file. Fix the path (it is relative to the rootdir) or remove the key."
        )
    return named, path


def _refused_setting(places: list[str]) -> tuple[str, str | None]:
    # "fail" anywhere wins: a setting narrows, never lifts another.
    return ("fail", "; ".join(places)) if places else ("report", None)


def _refused_in_table(table: dict[str, Any] | None) -> list[str]:
    """``[where]`` when the project table sets refused attempts to fail (checked on reading)."""
    fails = table is not None and table.get(REFUSED_KEY) == "fail"
    return [f"{REFUSED_KEY} in pyproject.toml [{TABLE}]"] if fails else []


def _refused_in_ini(settings: Mapping[str, list[str]], inifile_name: str) -> list[str]:
    """``[where]`` when the ini key sets refused attempts to fail; a bad value is an error."""
    if REFUSED_INI_KEY not in settings:
        return []
    [value] = _entries(settings[REFUSED_INI_KEY])[:1] or [""]
    where = f"ini key {REFUSED_INI_KEY} in {inifile_name}"
    return [where] if refused_setting(value.lower(), where) == "fail" else []


def _entries(lines: list[str]) -> list[str]:
    """One entry per line, or several separated by commas, blanks dropped."""
    return [entry.strip() for line in lines for entry in line.split(",") if entry.strip()]


def pytest_settings(
    inifile: Path, *, always: frozenset[str] = _ALWAYS_CONFIG
) -> dict[str, Any] | None:
    """The raw settings of a pytest configuration file, or None if it has no pytest section.

    pyproject.toml: ``[tool.pytest.ini_options]`` (and pytest 9's ``[tool.pytest]``);
    pytest.toml: ``[pytest]``; setup.cfg: ``[tool:pytest]``; other ini files: ``[pytest]``.
    ``always``: the files taken without a section (empty settings, not None).
    """
    if inifile.suffix == ".toml":
        data = _toml(inifile)
        if inifile.name != "pyproject.toml":
            table = data.get("pytest")
            return dict(table) if isinstance(table, dict) else {}
        tool = data.get("tool")
        native = tool.get("pytest") if isinstance(tool, dict) else None
        if not isinstance(native, dict):
            return None
        options = native.get("ini_options")
        settings = dict(options) if isinstance(options, dict) else {}
        settings.update((key, value) for key, value in native.items() if key != "ini_options")
        return settings
    import configparser  # only for ini-style files, off the start-up path otherwise

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(inifile.read_text(encoding="utf-8"), source=str(inifile))
    except OSError as error:
        raise ConfigError(f"{inifile}: cannot be read ({error.strerror})") from None
    except (configparser.Error, UnicodeDecodeError) as error:
        raise ConfigError(f"{inifile}: not an ini file ({error})") from None
    section = "tool:pytest" if inifile.name == "setup.cfg" else "pytest"
    if not parser.has_section(section):
        return {} if inifile.name in always else None
    return dict(parser.items(section))


def lines_of(value: Any) -> list[str]:
    """A raw ini or TOML value as pytest's ``linelist`` reads it."""
    if isinstance(value, list):
        return [str(entry) for entry in value]
    return [line.strip() for line in str(value).splitlines() if line.strip()]


def locate_config(start: Path) -> tuple[Path | None, Path]:
    """pytest's configuration file and rootdir for a run started in ``start`` (no arguments).

    pytest's rules (8.1 and later): the first folder from ``start`` upwards holding a
    configuration file with a pytest section (pytest.ini and pytest.toml count even
    without one), in pytest's order of names; else the first pyproject.toml, with no
    pytest table; else the first folder with a setup.py; else ``start``.
    """
    start = start.resolve()
    names, always = _rules()
    fallback: Path | None = None
    for folder in (start, *start.parents):
        for name in names:
            path = folder / name
            if not path.is_file():
                continue
            if name in always or pytest_settings(path, always=always) is not None:
                return path, folder
            if name == "pyproject.toml" and fallback is None:
                fallback = path
    if fallback is not None:
        return fallback, fallback.parent
    for folder in (start, *start.parents):
        if (folder / "setup.py").is_file():
            return None, folder
    return None, start


def policy_at(start: Path) -> ProjectPolicy:
    """The project policy a pytest run started in ``start`` would read (the command line)."""
    inifile, rootdir = locate_config(start)
    raw = pytest_settings(inifile) if inifile is not None else None
    keys = (*INI_POLICY_KEYS, POLICY_FILE_KEY, REFUSED_INI_KEY)
    settings = {key: lines_of(raw[key]) for key in keys if raw and key in raw}
    return project_policy(inifile, rootdir, settings)


def mentions_us(path: Path) -> bool:
    """Whether a file may hold our table (``_config_probe``): one that cannot is not parsed,
    so a template, or a file that is not TOML or not UTF-8, is not ours to judge.
    """
    from agentloop_tools._config_probe import mentions_us as probe

    try:
        return probe(path.read_bytes())
    except OSError:
        return True  # unreadable: reading it again says why


def _toml(path: Path, data: bytes | None = None) -> dict[str, Any]:
    """``path`` parsed as TOML (``data``: its bytes, when already read)."""
    import tomllib  # a run configured in pytest.ini or setup.cfg never parses TOML

    try:
        raw = path.read_bytes() if data is None else data
        # Newlines as read_text() turned them (universal newlines), as before.
        return tomllib.loads(raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: not UTF-8, so not TOML ({error.reason} at byte {error.start})"
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not TOML ({error})") from None
