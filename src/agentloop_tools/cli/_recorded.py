"""``audit`` under the project policy applies what pytest applied to each cassette.

A cassette recorded by the plugin says which policy its test ran under (provenance
v2's ``policy``): the markers' rules inline, the project policy by origin and
fingerprint, and ``replace``. The command line audits it with today's project policy
and every recorded marker (a URL must pass each), or with the recorded markers alone
where the recording says ``replace`` (the test's whole policy), so a cassette of a green
test gives no error. A cassette without a recorded policy (a transcript, an older or
adopted cassette) is audited with the project policy alone, as before. An explicit
``--allow``, ``--block`` or ``--policy`` is audited as given: not wrapped here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from agentloop_tools._errors import InputError

_SHOWN = 5


class ProjectAsInPytest:
    """Today's project policy, and a cassette's recorded markers beside it.

    Reads as the project policy (``mode``, ``domains``, ``audit``) wherever one policy
    is named (the formats, the baseline); :meth:`for_file` is the policy one file is
    audited with. Picklable, for ``--jobs`` workers.
    """

    def __init__(self, project: Any, origin: str) -> None:
        self.project = project
        self.origin = origin
        self.mode = project.mode
        self.domains = project.domains

    def audit(self, transcript: Any, *args: Any, **kwargs: Any) -> Any:
        return self.project.audit(transcript, *args, **kwargs)

    def __repr__(self) -> str:
        # The summary line and SARIF name the policy: the project's rules, not this wrapper.
        return repr(self.project)

    def for_file(self, path: str | Path) -> Any:
        """The policy ``path`` is audited with; InputError for a recorded policy that
        cannot be read (never a silent fallback to fewer rules)."""
        recorded = recorded_policy(path)
        if recorded is None:
            return self.project
        markers = [_marker(entry, path) for entry in recorded["markers"]]
        layers = markers if recorded["replace"] and markers else [*markers, self.project]
        return layers[0] if len(layers) == 1 else AllOf(tuple(layers))


class AllOf:
    """Several policies a URL must pass, each; every violation of any of them once."""

    def __init__(self, policies: tuple[Any, ...]) -> None:
        self.policies = policies
        self.mode = policies[0].mode
        self.domains = policies[0].domains

    def audit(self, transcript: Any, *args: Any, **kwargs: Any) -> list[Any]:
        seen: set[tuple[object, ...]] = set()
        found = []
        for policy in self.policies:
            for violation in policy.audit(transcript, *args, **kwargs):
                key = (violation.message_index, violation.where, violation.url, violation.span)
                if key not in seen:
                    seen.add(key)
                    found.append(violation)
        return sorted(found, key=lambda v: (v.message_index, v.span or (0, 0)))


def recorded_policy(path: str | Path) -> dict[str, Any] | None:
    """A cassette's recorded ``policy`` block, checked; None when it records none.

    Raises:
        InputError: the block is there but not in the form the plugin writes.
    """
    if not str(path).lower().endswith((".yaml", ".yml")):
        return None
    from agentloop_tools.cassettes._provenance import read

    provenance = read(path)
    policy = provenance.get("policy") if provenance else None
    if policy is None:
        return None
    markers = policy.get("markers") if isinstance(policy, dict) else None
    replace = policy.get("replace", False) if isinstance(policy, dict) else None
    if not isinstance(markers, list) or not isinstance(replace, bool):
        raise InputError(
            "its provenance's policy block is not one the plugin writes (markers: a list, "
            "replace: true or false); re-record the cassette, or remove the block to audit "
            "it with the project policy alone"
        )
    return {"markers": markers, "replace": replace, "project": policy.get("project")}


def _marker(entry: object, path: str | Path) -> Any:
    from agentloop_tools.web import DomainPolicy

    problem = "a recorded marker that is not {mode: allow|block, domains: [...]}"
    if not isinstance(entry, dict) or entry.get("mode") not in ("allow", "block"):
        raise InputError(f"{problem}; re-record the cassette")
    domains = entry.get("domains")
    if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
        raise InputError(f"{problem}; re-record the cassette")
    try:
        if entry["mode"] == "allow":
            return DomainPolicy.allow(domains, bare_hosts=entry.get("bare_hosts") is True)
        return DomainPolicy.block(domains)
    except (ValueError, TypeError) as error:
        reason = " ".join(str(error).split())[:200]
        raise InputError(f"a recorded marker's rules cannot be read ({reason})") from None


def notes(
    files: Iterable[Path],
    policy: ProjectAsInPytest,
    audit_file: Callable[[str, Any], Any] | None = None,
) -> list[str]:
    """What the command line applied differently from a plain project audit, to say so:
    cassettes audited with a recorded ``replace`` marker alone (with what the project
    policy forbids in them), and cassettes recorded under a project policy whose
    fingerprint differs from today's. ``audit_file`` (``_audit.audit_one``) reads what
    the project policy forbids; without it the replace note names the files only."""
    from agentloop_tools.cassettes._provenance import fingerprint

    today = fingerprint(policy.project)
    replaced: list[str] = []
    changed: list[str] = []
    for path in files:
        try:
            recorded = recorded_policy(path)
        except InputError:
            continue  # reported with the file's problems
        if recorded is None:
            continue
        if recorded["replace"] and recorded["markers"]:
            replaced.append(str(path))
            continue
        project = recorded["project"]
        was = project.get("fingerprint") if isinstance(project, dict) else None
        if was != today:
            changed.append(str(path))
    out = []
    if replaced:
        out.append(
            f"agentloop-tools: note: {len(replaced)} cassette(s) recorded under a "
            "domain_policy marker with replace=True were audited with their recorded "
            f"marker alone, as pytest audits them, not the project policy: {_listed(replaced)}"
        )
        if audit_file is not None:
            out.extend(_lifted(replaced, policy, audit_file))
    if changed:
        out.append(
            f"agentloop-tools: note: {len(changed)} cassette(s) were recorded under a "
            "project policy other than today's (its fingerprint differs, or it had none); "
            f"they are audited with today's ({policy.origin}) and their recorded markers: "
            f"{_listed(changed)}. Re-record them to record today's."
        )
    return out  # stderr() shows recorded text's control characters as escapes


def _lifted(
    paths: Sequence[str], policy: ProjectAsInPytest, audit_file: Callable[[str, Any], Any]
) -> list[str]:
    """What the project policy forbids in each ``replace`` cassette, named: a cassette is
    text anyone can edit, and pytest takes ``replace`` only from a marker in code, so a
    recorded ``replace`` that lifts a project rule is shown, never passed quietly."""
    from agentloop_tools.cli._emit import _cleaner

    cleaner = _cleaner()
    out = []
    for path in paths[:_SHOWN]:
        found = [v for v in audit_file(path, policy.project).violations if not v["refused"]]
        if not found:
            continue
        urls = list(dict.fromkeys(str(v["url"]) for v in found))
        shown = ", ".join(url[:200] for url in urls[:_SHOWN])
        more = f" and {len(urls) - _SHOWN} more" if len(urls) > _SHOWN else ""
        out.append(
            cleaner.text(
                f"agentloop-tools: note: {path}: its recorded replace=True lifts the project "
                f"policy ({policy.origin}) from {len(found)} finding(s) it forbids: "
                f"{shown}{more}. pytest takes replace only from the marker in code: if the "
                "test's marker has no replace=True, the cassette was edited and pytest fails "
                "it; re-record it. To audit every cassette with the project policy itself, "
                "pass it explicitly (--policy/--allow/--block)."
            )
        )
    return out


def _listed(paths: Sequence[str]) -> str:
    more = f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
    return ", ".join(paths[:_SHOWN]) + more
