"""Every message the plugin shows a user: what happened, what was found, how to fix it."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import NamedTuple

from agentloop_tools._docs import docs_url
from agentloop_tools._plugin.scope import FROM_SCRIPTS_OPTION, RECORD_IN_CI_OPTION


def visible(text: str, *, layout: bool = False) -> str:
    # Imported when a message quotes recorded text, not at every pytest start-up.
    from agentloop_tools._visible import visible as escaped

    return escaped(text, layout=layout)


def rerun_command(nodeid: str, record_mode: str) -> str:
    return f"pytest {shlex.quote(nodeid)} --record-mode={record_mode}"


def no_cassette(nodeid: str) -> str:
    return (
        "agentloop-tools: this test builds an agent but has no cassette, so it would call "
        "the provider live.\n"
        "Mark it to replay a recorded conversation:\n"
        "  @pytest.mark.vcr\n"
        "then record the cassette once with real keys:\n"
        f"  {rerun_command(nodeid, 'once')}\n"
        "(or pass http_client= to agentloop_agent to use your own transport). "
        f"See {docs_url('recording')}."
    )


def placeholder_key_sent(nodeid: str, host: str, variable: str) -> str:
    return (
        f"agentloop-tools: recording {nodeid} would send a placeholder key to {host}: set "
        f"{variable} in the environment to record live, or record from a scripted provider; "
        f"see {docs_url('recording-without-provider')}."
    )


def missing_keys(nodeid: str, provider: str, missing: Sequence[str]) -> str:
    return (
        f"agentloop-tools: recording {nodeid} with provider {provider!r} needs "
        f"{' and '.join(missing)} in the environment. Set it, or record from a "
        f"scripted provider (agentloop_tools.testing.ScriptedProvider); see "
        f"{docs_url('recording-without-provider')}."
    )


def unknown_provider(provider: str, known: Sequence[str]) -> str:
    return (
        f"agentloop_agent(provider={provider!r}): unknown provider; use one of {', '.join(known)}."
    )


def bad_openai_api(value: str, provider: str, known: Sequence[str]) -> str:
    if value not in known:
        return (
            f"agentloop_agent(openai_api={value!r}): unknown OpenAI API; use one of "
            f"{', '.join(map(repr, known))} (Chat Completions or Responses)."
        )
    return (
        f"agentloop_agent(openai_api={value!r}) applies to provider 'openai' only, and this "
        f"agent's provider is {provider!r}: pass provider='openai' too, or leave "
        "openai_api out."
    )


def unknown_provider_setting(where: str, provider: str, known: Sequence[str]) -> str:
    return (
        f"{where} = {provider!r} is not a provider agentloop knows; use one of {', '.join(known)}."
    )


def missing_extra(provider: str, extra: str, module: str | None) -> str:
    return (
        f"agentloop-tools: provider {provider!r} needs its SDK, which is not installed "
        f"(import of {module or 'a module'} failed).\n"
        f"Install it with: pip install 'based-models-agentloop-tools[testing,{extra}]'"
    )


def needs_pytest_recording() -> str:
    return (
        "@pytest.mark.vcr needs pytest-recording: pip install "
        "'based-models-agentloop-tools[testing]'"
    )


def recording_test_in_ci(
    nodeid: str, path: str, exists: bool, *, from_scripts: bool = False
) -> str:
    why = "its cassette is missing" if not exists else "its record mode allows recording"
    # The command must record the way this run would have (from scripts, with no key).
    scripts = f" {FROM_SCRIPTS_OPTION}" if from_scripts else ""
    return (
        f"agentloop-tools: this test would record ({why}) while CI is set.\n"
        f"Cassette: {path}\n"
        "Record it on your machine and commit it:\n"
        f"  {rerun_command(nodeid, 'once')}{scripts}\n"
        f"or pass {RECORD_IN_CI_OPTION} if recording in CI is intended. "
        f"See {docs_url('recording-in-ci')}."
    )


def cassette_too_old(nodeid: str, path: str, days: int, max_age: str) -> str:
    return (
        f"agentloop-tools: {nodeid} replays a cassette recorded {days} days ago, older than "
        f"agentloop_max_cassette_age = {max_age}: the web it recorded has moved on.\n"
        f"Cassette: {path}\nRe-record it:\n  {rerun_command(nodeid, 'rewrite')}"
    )


def cassette_age_unknown(nodeid: str, path: str, max_age: str) -> str:
    return (
        f"agentloop-tools: {nodeid} replays a cassette that does not say when it was "
        f"recorded (no provenance), so agentloop_max_cassette_age = {max_age} cannot be "
        f"checked. Cassette: {path}. Re-record it once to date it:\n"
        f"  {rerun_command(nodeid, 'rewrite')}\n"
        "or, for a recording made elsewhere (no key needed), date it as it is:\n"
        f"  agentloop-tools adopt {shlex.quote(path)} --recorded-at YYYY-MM-DD\n"
        f"See {docs_url('adopting')}."
    )


def marker_near_miss(nodeid: str, written: str, right: str) -> str:
    return (
        f"@pytest.mark.{written} on {nodeid} is not a registered marker, and it is one "
        f"typo away from @pytest.mark.{right}: as written, the test would run with no "
        f"domain policy. Did you mean @pytest.mark.{right}? (A marker of your own with "
        f"this name must be registered in the ini file's markers.) See {docs_url('marker')}."
    )


def replaced(nodeid: str, project: str) -> str:
    what = f"the project policy ({project})" if project != "none" else "every farther marker"
    return (
        f"REPLACED POLICY {nodeid}: a domain_policy marker with replace=True is its whole "
        f"policy; {what} does not apply to it"
    )


def breached_attempt(nodeid: str, attempt: int, violations: int) -> str:
    return (
        f"BREACH IN A RERUN ATTEMPT {nodeid} (attempt {attempt}): {violations} domain policy "
        "violation(s), then rerun. The test's outcome is the rerun plugin's; the run fails "
        "all the same, since a model that reached a refused host once will again."
    )


def breach_in_teardown(nodeid: str, conversations: Sequence[int], *, replayed: bool) -> str:
    which = ", ".join(str(number) for number in conversations)
    how = (
        "audited from the transcript the observer saw"
        if replayed
        else "audited from the transcript the observer saw: it was not replayed from the "
        "cassette (it ran after the cassette closed, or on a transport of its own)"
    )
    return (
        f"(conversation(s) {which} of {nodeid} ran during teardown, after the test body, "
        f"in a fixture's teardown or a finalizer: {how}. A teardown error is pytest's "
        "only way to fail a test after its body; move the agent into the test, or keep "
        "it from the refused hosts.)"
    )


def asked_too_late(nodeid: str, fixture: str | None) -> str:
    return (
        f"{nodeid} asked for {fixture} through request.getfixturevalue(), after its "
        "cassette was opened: the plugin could not guard it (credentials scrubbed, "
        "requests matched strictly), so it would record or replay unguarded. Name the "
        "fixture as an argument of the test or of a fixture it uses, or add "
        f"@pytest.mark.usefixtures({fixture!r}). See {docs_url('connect')}."
    )


def marker_clash(nodeid: str, name: str, keywords: Sequence[str]) -> str:
    return (
        f"@pytest.mark.{name} on {nodeid} is a marker this project registered itself, "
        f"but it is written with agentloop-tools' keyword(s) {', '.join(keywords)}: which "
        f"of the two markers is meant is not the plugin's guess to make. Rename your own "
        f"marker, or drop its registration from the ini file's markers to use ours. "
        f"See {docs_url('marker')}."
    )


def ini_key_near_miss(key: str, where: str, right: str | None, known: Sequence[str]) -> str:
    guess = f"Did you mean {right}? " if right else ""
    return (
        f"ini key {key} in {where} is not an agentloop-tools setting, so as written it "
        f"would be ignored. {guess}The plugin's keys are {', '.join(known)}. "
        f"See {docs_url('options')}."
    )


def policy_sources(sources: Sequence[str]) -> str:
    return (
        f"a project-wide domain policy is set in {len(sources)} places: "
        f"{'; '.join(sources)}. The run is audited with one policy, so which one wins is "
        f"not the plugin's guess to make: keep one. See {docs_url('configuration')}."
    )


def ended_after_breach(how: str) -> str:
    return (
        f"(the test called pytest.{how}() after its agent ran: a domain policy failure "
        "fails the test whatever the body did afterwards)"
    )


def body_failed_too(error: BaseException) -> str:
    first = (str(error).strip().splitlines() or [""])[0][:200]
    return (
        f"(the test body also failed, after its agent ran: {type(error).__name__}"
        f"{': ' + first if first else ''})"
    )


def xfail_does_not_expect(nodeid: str) -> str:
    return (
        f"({nodeid} is marked xfail, but an xfail marker expects the test's own failure, "
        "not a domain policy breach, so this is reported as failed. To keep a known "
        "breach in the suite, name the plugin's failure: "
        "@pytest.mark.xfail(raises=pytest.fail.Exception, strict=True).)"
    )


_CONNECT = (
    "Connect the test's agent in one of two ways:\n"
    "  1. build it with the agentloop_agent fixture:\n"
    "       agent = agentloop_agent([...tools], provider='anthropic')\n"
    "  2. give your own agent the evidence observer:\n"
    "       Agent.from_env(env, tools, observer=agentloop_evidence.observer)\n"
)


def no_evidence(nodeid: str) -> str:
    return (
        f"agentloop-tools: {nodeid} is marked @pytest.mark.domain_policy, but no agent "
        "conversation reached the plugin, so nothing was audited.\n"
        + _CONNECT
        + "If this test runs no agent on purpose, say so with "
        "@pytest.mark.domain_policy(..., require_evidence=False); it is then listed as not "
        f"audited in the summary. See {docs_url('marker')}."
    )


def unseen_conversation(nodeid: str, requests: int, origin: str) -> str:
    return (
        f"agentloop-tools: {nodeid} sent {requests} request(s) to a model provider (see its "
        "cassette), but no agent conversation reached the plugin, so the project's domain "
        f"policy (from {origin}) audited nothing.\n" + _CONNECT + f"See {docs_url('connect')}."
    )


def opted_out_but_sent(nodeid: str, requests: int) -> str:
    return (
        f"agentloop-tools: {nodeid} is marked domain_policy(require_evidence=False), which "
        f"says it runs no agent, but it sent {requests} request(s) to a model provider (see "
        "its cassette) and no conversation reached the plugin, so nothing was audited.\n"
        + _CONNECT
        + f"and remove require_evidence=False. See {docs_url('connect')}."
    )


def unseen_requests(nodeid: str, sent: int, seen: int, origin: str) -> str:
    return (
        f"agentloop-tools: {nodeid} got {sent} answer(s) from a model provider (see its "
        f"cassette), but only {seen} reached the plugin: an agent the plugin cannot see "
        f"talked to the provider, and the domain policy (from {origin}) did not audit it.\n"
        + _CONNECT
        + f"for every agent the test builds. See {docs_url('connect')}."
    )


def empty_ini_key(key: str, inifile: str) -> str:
    return (
        f"ini key {key} in {inifile} is set but lists no domain, so it would audit nothing. "
        "List one domain per line (or separate them with commas), or remove the key."
    )


def stacked_markers(nodeid: str, where: str) -> str:
    return (
        f"@pytest.mark.domain_policy on {nodeid}: {where} carries more than one "
        "domain_policy marker, and a test is audited with one policy. Keep one marker, "
        "with the whole list in it."
    )


def not_audited(nodeid: str) -> str:
    return (
        f"NOT AUDITED {nodeid}: domain_policy(require_evidence=False) and no agent "
        "conversation reached the plugin"
    )


def report_path_unwritable(option: str, value: str, reason: str | None) -> str:
    return (
        f"{option} {value}: cannot write the report there ({reason}). "
        "Name a file in a folder you can write to."
    )


def unused_interactions(
    nodeid: str,
    path: str,
    total: int,
    unused: Sequence[tuple[int, str]],
    *,
    from_scripts: bool = False,
) -> str:
    # A cassette recorded from scripts is re-recorded from scripts (no key needed).
    scripts = f" {FROM_SCRIPTS_OPTION}" if from_scripts else ""
    lines = [
        f"agentloop-tools: the test passed but left {len(unused)} of {total} recorded "
        "interaction(s) unused:",
        *(f"  - interaction {index}: {summary}" for index, summary in unused[:10]),
        *([f"  ... and {len(unused) - 10} more"] if len(unused) > 10 else []),
        "",
        "The agent made fewer or different requests than the cassette holds (a cassette "
        "extended with --record-mode=new_episodes keeps the old requests beside the new "
        "ones), so it no longer describes this test. If the change is intended, re-record "
        "it from scratch:",
        f"  {rerun_command(nodeid, 'rewrite')}{scripts}",
        f"Cassette: {path}",
    ]
    # Recorded requests are anyone's text: shown, never obeyed by the terminal.
    return visible("\n".join(lines), layout=True)


def no_cassette_file(nodeid: str, path: str, sent: str) -> str:
    return (
        f"agentloop-tools: no cassette for this test at {path}.\n"
        f"The agent sent: {visible(sent)}\n"
        "Record it once with real keys in the environment:\n"
        f"  {rerun_command(nodeid, 'once')}\n"
        "or with no key, from the script the agentloop_script fixture gives:\n"
        f"  {rerun_command(nodeid, 'once')} {FROM_SCRIPTS_OPTION}\n"
        f"See {docs_url('recording-without-provider')}"
    )


def no_script(nodeid: str) -> str:
    return (
        f"agentloop-tools: {nodeid} records from scripts ({FROM_SCRIPTS_OPTION}), but the "
        "agentloop_script fixture gives no script for it. Override the fixture in a "
        "conftest.py to return a ScriptedProvider (or its list of responses) for "
        f"request.node, or pass http_client= to agentloop_agent. See "
        f"{docs_url('recording-without-provider')}"
    )


class Miss(NamedTuple):
    """What a replay miss's message says about its cause.

    Attributes:
        source: the cassette's provenance ``source`` (live, scripts, adopted); None when
            it has no provenance (recorded by another client, or before provenance).
        tool_calls: the tool calls whose results alone differ, or None.
        environment: what differs between the recording environment and this one.
    """

    source: str | None = "live"
    tool_calls: Sequence[str] | None = None
    environment: Sequence[str] = ()


def no_search_backend(nodeid: str, how: str, backends: Sequence[str], cause: str) -> str:
    return visible(
        f"agentloop-tools: {nodeid} {how}, and agentloop_env names no search backend, so "
        f"backend_from_env found none:\n  {cause}\n"
        "Name the backend the test searches with in the ini key agentloop_search_backend "
        f"({', '.join(backends)}), in pytest.ini or [tool.pytest.ini_options]:\n"
        f"  agentloop_search_backend = {backends[0] if backends else 'brave'}\n"
        "or set WEB_SEARCH_BACKEND in the environment. Its placeholder key is in "
        f"agentloop_env then; no real key is needed. See {docs_url('search-backend')}",
        layout=True,
    )


def not_in_cassette(
    nodeid: str,
    path: str,
    sent: str,
    total: int,
    closest: tuple[int, str, Sequence[str]] | None,
    why: Miss | None = None,
) -> str:
    why = why or Miss()
    lines = [
        "agentloop-tools: this request is not in the cassette, so it cannot be replayed.",
        f"  {sent}",
        "",
    ]
    if closest is not None:
        index, recorded, difference = closest
        lines.append(f"Closest recorded request (interaction {index} of {total}):")
        lines.append(f"  {recorded}")
        lines += [f"  {line}" for line in difference]
        lines.append("")
    rerun = rerun_command(nodeid, "rewrite")
    if why.source == "scripts":
        rerun += f" {FROM_SCRIPTS_OPTION}"
    if why.tool_calls:
        lines += _tool_result_changed(why, rerun)
    elif why.source is None:
        lines += [
            "The cassette has no provenance: it was not recorded by this plugin (another "
            "project's client, or vcrpy itself). A client that builds its requests "
            "differently (system as a list, tool_choice, include) never matches this "
            "agent's bodies; to replay such a recording, match this test's requests on "
            "method and URL only:",
            '  @pytest.mark.vcr(match_on=("method", "uri"))',
            "and date it without keys:",
            f"  agentloop-tools adopt {shlex.quote(path)} --recorded-at YYYY-MM-DD",
            f"See {docs_url('adopting')}. If the agent's request changed instead, "
            "re-record this test (keys needed):",
            f"  {rerun}",
        ]
    else:
        lines += [
            "The agent's request changed since the cassette was recorded (prompt, model, "
            "tools or history). If the change is intended, re-record this test:",
            f"  {rerun}",
        ]
    lines.append(f"Cassette: {path}")
    return visible("\n".join(lines), layout=True)


def _tool_result_changed(why: Miss, rerun: str) -> list[str]:
    calls = ", ".join(why.tool_calls or ())
    lines = [
        f"Only the result of {calls} differs: the agent's request is the recorded one "
        "(prompt, model, tools and history), but the tool read its input differently in "
        "this environment than where the cassette was recorded.",
    ]
    if why.environment:
        lines.append("What differs between the recording environment and this one:")
        lines += [f"  {line}" for line in why.environment]
    else:
        lines.append(
            "The versions the cassette records are those installed here: the tool's "
            "input itself changed (a page or API it reads)."
        )
    lines += [
        "Replay in the environment the cassette was recorded in (install or remove the "
        "extra named above, e.g. pip install 'based-models-agentloop-tools[fetch]'), or "
        "re-record this test here:",
        f"  {rerun}",
        f"See {docs_url('replay-environment')}.",
    ]
    return lines


# Web faults (the web_faults marker) ------------------------------------------------------


def faults_marker_near_miss(nodeid: str, written: str) -> str:
    return (
        f"@pytest.mark.{written} on {nodeid} is not a registered marker, and it is one "
        "typo away from @pytest.mark.web_faults: as written, the test's tools would meet "
        "no fault and the test would pass without testing one. Did you mean "
        "@pytest.mark.web_faults? (A marker of your own with this name must be registered "
        f"in the ini file's markers.) See {docs_url('web-faults')}."
    )


def stacked_faults(nodeid: str, where: str) -> str:
    return (
        f"@pytest.mark.web_faults on {nodeid}: {where} carries more than one web_faults "
        "marker, and which pattern wins between them is not the plugin's guess to make. "
        "Keep one marker, with every fault in its pages= and searches= mappings."
    )
