"""What the fixtures hand a test: the environment for ``Agent.from_env`` and the factory."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.failures import KIND_ATTRIBUTE, fail
from agentloop_tools._plugin.masking import SecretEnv
from agentloop_tools._plugin.network import CassetteState
from agentloop_tools._plugin.scope import FROM_SCRIPTS_OPTION
from agentloop_tools._providers import BACKEND_VARIABLE, SEARXNG_NAME, SEARXNG_VARIABLE

if TYPE_CHECKING:
    from agentloop import Agent, HostedTool
    from agentloop.tooling import ToolSpec

    from agentloop_tools._plugin.network import ReplayClients
    from agentloop_tools.testing import AgentloopEvidence


OPENAI_APIS = ("completions", "responses")  # agentloop's OPENAI_API values


def agent_env(
    provider: str | None,
    state: CassetteState,
    *,
    search_backend: str | None = None,
    recorded: Sequence[tuple[str, str]] = (),
    from_scripts: bool = False,
    scrubbed: Sequence[str] = (),
) -> SecretEnv:
    """``os.environ`` with placeholder keys wherever a real key must not be used.

    In replay, ``backend_from_env(env)`` must find the backend the cassette was
    recorded with: the one ``search_backend`` (the ``agentloop_search_backend`` ini key)
    or ``WEB_SEARCH_BACKEND`` names, else the one search API ``recorded`` shows
    (``(name, base URL)`` pairs). Then every search key is a placeholder. Recording
    from scripts (``from_scripts``) is treated the same way: no real key is needed.
    ``scrubbed``: in replay, the variables whose values the scrubber replaced in the
    cassette (``scrubbed_variables``): each gets its placeholder, set or not here, so
    the request a test builds from it is the recorded one.
    """
    from agentloop_tools._providers import PROVIDER_SECRET_VARIABLES, SEARCH_KEY_VARIABLES
    from agentloop_tools._secrets import placeholder

    env = SecretEnv(os.environ)
    if provider:
        env["LLM_PROVIDER"] = provider
    for variable in PROVIDER_SECRET_VARIABLES:
        # Recording keeps real keys; a missing one gets a placeholder, which only a
        # scripted provider accepts (the guard stops it reaching a real one).
        if state != "recording" or not env.get(variable):
            env[variable] = placeholder(variable)
    if state == "replaying":
        env.update({name: placeholder(name) for name in scrubbed})
    if state == "recording" and not from_scripts:
        return env
    named = (env.get(BACKEND_VARIABLE) or search_backend or "").strip().lower()
    shown = sorted({name for name, _ in recorded})
    if not named and len(shown) == 1:
        named = shown[0]
    if named:
        env[BACKEND_VARIABLE] = named
        searxng = [base for name, base in recorded if name == SEARXNG_NAME]
        if searxng and not env.get(SEARXNG_VARIABLE):
            env[SEARXNG_VARIABLE] = searxng[0]
    for variable in SEARCH_KEY_VARIABLES:
        # With a backend named, every key (none is ambiguous then); without one, only
        # the keys that are set, so backend_from_env's choice stays the user's. A real
        # key never reaches a replayed test.
        if named or env.get(variable):
            env[variable] = placeholder(variable)
    return env


# How a test's agentloop_env came to name no search backend, when the plugin chose it.
UNNAMED_BACKEND = pytest.StashKey[str]()


def remember_unnamed_backend(
    node: pytest.Item, env: Mapping[str, str], state: CassetteState, *, from_scripts: bool
) -> None:
    """Note a test whose ``agentloop_env`` the plugin filled but that names no backend."""
    if env.get(BACKEND_VARIABLE):
        return
    if state == "replaying":
        node.stash[UNNAMED_BACKEND] = "replays a cassette that shows no one search API"
    elif state == "recording" and from_scripts:
        node.stash[UNNAMED_BACKEND] = f"records from scripts ({FROM_SCRIPTS_OPTION})"


def explain_no_backend(item: pytest.Item, error: BaseException) -> BaseException:
    """A body's "no search backend is configured" as the ini key that fixes it.

    Only for a test whose ``agentloop_env`` the plugin filled (from scripts, or in
    replay) without a backend: there the fix is ours to name, not a traceback into
    ``backend_from_env``. Any other error is returned as it is.
    """
    how = item.stash.get(UNNAMED_BACKEND, None)
    # Not imported here: an error of that type means its module was imported already.
    registry = sys.modules.get("agentloop_tools.web._search._backends_registry")
    from agentloop_tools._errors import NoSearchBackend

    if how is None or registry is None or not isinstance(error, NoSearchBackend):
        return error
    message = messages.no_search_backend(
        item.nodeid, how, sorted(registry.registered_backends()), str(error)
    )
    failure = pytest.fail.Exception(message, pytrace=False)
    setattr(failure, KIND_ATTRIBUTE, "error")
    # Raised from the gate, not the test: the original's frames place it in the test.
    return failure.with_traceback(error.__traceback__)


class AgentBuilder:
    """The ``agentloop_agent`` fixture's value: builds agents whose conversations we see."""

    def __init__(
        self,
        request: pytest.FixtureRequest,
        env: dict[str, str],
        evidence: AgentloopEvidence,
        state: CassetteState,
        replay_clients: ReplayClients,
        *,
        from_scripts: bool = False,
    ) -> None:
        self._from_scripts = from_scripts
        self._request = request
        self._env = env
        self._evidence = evidence
        self._state = state
        self._replay_clients = replay_clients
        self.agents: list[Agent] = []

    def __repr__(self) -> str:
        # pytest lists a failing test's arguments: the factory, never its environment.
        provider = self._env.get("LLM_PROVIDER") or "from LLM_PROVIDER"
        return f"<agentloop_agent: {len(self.agents)} agent(s), {self._state}, {provider}>"

    def __call__(
        self,
        tools: Sequence[ToolSpec | HostedTool] = (),
        *,
        provider: str | None = None,
        model: str | None = None,
        openai_api: str | None = None,
        **agent_kwargs: Any,
    ) -> Agent:
        __tracebackhide__ = True
        from agentloop import Agent, MultiObserver

        from agentloop_tools._providers import PROVIDERS

        env, chosen = self._env_for(provider, model, openai_api)
        facts = PROVIDERS.get(chosen)
        http_client = agent_kwargs.pop("http_client", None)
        origin = "http_client= of the test"
        if http_client is None and self._from_scripts:
            http_client = self._scripted_client(chosen)
            origin = self._script_origin()
        scripted = bool(getattr(http_client, "agentloop_scripted", False))
        if self._state == "recording" and scripted:
            self._recorded_from_script(origin)
        nodeid = self._request.node.nodeid
        if self._state == "none" and http_client is None:
            fail(messages.no_cassette(nodeid), "missing-cassette")
        if self._state == "recording" and scripted:
            from agentloop_tools._providers import PROVIDER_SECRET_VARIABLES
            from agentloop_tools._secrets import placeholder

            # A scripted provider needs no key, and a real one must not be sent to it.
            env.update({name: placeholder(name) for name in PROVIDER_SECRET_VARIABLES})
        elif self._state == "recording" and facts is not None:
            missing = [name for name in facts.key_variables if not os.environ.get(name)]
            if missing:
                pytest.fail(messages.missing_keys(nodeid, chosen, missing), pytrace=False)
        user_observer = agent_kwargs.pop("observer", None)
        observer = (
            self._evidence.observer
            if user_observer is None
            else MultiObserver(user_observer, self._evidence.observer)
        )
        problem = None
        try:
            if self._state == "replaying" and http_client is None and facts is not None:
                http_client = self._replay_clients.for_provider(chosen)
            agent = Agent.from_env(
                env, list(tools), observer=observer, http_client=http_client, **agent_kwargs
            )
        except ImportError as error:
            extra = facts.extra if facts else "openai-compat"
            problem = messages.missing_extra(chosen, extra, error.name)
        if problem is not None:
            pytest.fail(problem, pytrace=False)
        self.agents.append(agent)
        return agent

    def _env_for(
        self, provider: str | None, model: str | None, openai_api: str | None
    ) -> tuple[SecretEnv, str]:
        """The test's environment with this agent's provider, model and OpenAI API set."""
        __tracebackhide__ = True
        from agentloop_tools._providers import DEFAULT_PROVIDER, PROVIDERS

        env = SecretEnv(self._env)
        if provider is not None:
            if provider not in PROVIDERS:
                pytest.fail(messages.unknown_provider(provider, list(PROVIDERS)), pytrace=False)
            env["LLM_PROVIDER"] = provider
        chosen = env.get("LLM_PROVIDER") or DEFAULT_PROVIDER
        facts = PROVIDERS.get(chosen)
        if model is not None:
            env[facts.model_variable if facts else "LLM_MODEL"] = model
        if openai_api is not None:
            # Only OpenAI reads OPENAI_API: elsewhere the choice would be dropped unseen.
            if openai_api not in OPENAI_APIS or chosen != "openai":
                pytest.fail(messages.bad_openai_api(openai_api, chosen, OPENAI_APIS), pytrace=False)
            env["OPENAI_API"] = openai_api
        return env, chosen

    def _scripted_client(self, provider: str) -> Any:
        """The ``agentloop_script`` fixture's script, served to this agent."""
        __tracebackhide__ = True
        from agentloop_tools.testing import ScriptedProvider

        script = self._request.getfixturevalue("agentloop_script")
        if script is None:
            pytest.fail(messages.no_script(self._request.node.nodeid), pytrace=False)
        if not isinstance(script, ScriptedProvider):
            script = ScriptedProvider(provider, script)
        return script.http_client()

    def _recorded_from_script(self, origin: str) -> None:
        """The cassette's provenance says it was recorded from a script, and which."""
        from agentloop_tools._plugin.cassette import RECORDING

        recording = self._request.node.stash.get(RECORDING, None)
        if recording is not None:
            recording.source = "scripts"
            if recording.script_origin is None:
                recording.script_origin = origin

    def _script_origin(self) -> str:
        """The ``agentloop_script`` fixture that gave the script: its module and name."""
        try:
            # pytest has no public look-up of the fixture that served a name.
            manager = self._request.session._fixturemanager
            definitions = manager.getfixturedefs("agentloop_script", self._request.node)
            function = definitions[-1].func if definitions else None
        except Exception:  # a pytest that keeps it elsewhere: the origin is unknown
            function = None
        if function is None:
            return "unknown"
        return f"{function.__module__}.{function.__qualname__}"

    def close(self) -> None:
        for agent in self.agents:
            agent.close()
