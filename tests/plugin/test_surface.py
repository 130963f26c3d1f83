"""The plugin's surface: the domain_policy marker, ini keys, options, help, imports."""

from __future__ import annotations

import ast

import pytest

from tests.plugin.scenarios import LEAKY_TEST


def test_a_domain_policy_breach_fails_the_test_and_lists_every_violation(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_agent=LEAKY_TEST.format(marker='@pytest.mark.domain_policy(block=["wikipedia.org"])')
    )
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1, errors=0)
    result.stdout.fnmatch_lines(
        [
            "2 domain policy violations (DomainPolicy.block(['wikipedia.org'])):",
            "  - source   message 1: https://en.wikipedia.org/wiki/Python  "
            "[blocked by 'wikipedia.org']",
            "  - text     message 1: https://en.wikipedia.org/wiki/Python  "
            "[blocked by 'wikipedia.org']",
            "      ...See https://en.wikipedia.org/wiki/Python for history....",
            "",
            "Each line is a place a finished turn reached a domain the policy does not permit.*",
            "(policy from the domain_policy marker)",
        ],
        consecutive=True,
    )
    # The same verdict on replay.
    project.runpytest().assert_outcomes(failed=1)


def test_a_clean_run_passes_under_the_marker(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=LEAKY_TEST.format(marker='@pytest.mark.domain_policy(block=["example.com"])')
    )
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)


def test_the_ini_file_sets_a_project_wide_policy(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nagentloop_allow_domains =\n    python.org\n")
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "2 domain policy violations (DomainPolicy.allow(['python.org'])):",
            "*(policy from tox.ini)",
        ]
    )
    result.stdout.fnmatch_lines(
        ["agentloop-tools: provider=*, record-mode=once, default policy=allow 1 domain(s)"]
    )


def test_a_marker_narrows_the_ini_policy_and_replace_lifts_it(project: pytest.Pytester) -> None:
    # Before, any marker replaced the project policy: a marker blocking example.com
    # quietly lifted the project's allowlist.
    project.makeini("[pytest]\nagentloop_allow_domains = python.org\n")
    project.makepyfile(
        test_agent=LEAKY_TEST.format(marker='@pytest.mark.domain_policy(block=["example.com"])')
    )
    narrowed = project.runpytest("--record-mode=once")
    narrowed.assert_outcomes(failed=1)
    narrowed.stdout.fnmatch_lines(["*(policy from the domain_policy marker; tox.ini)"])
    project.makepyfile(
        test_agent=LEAKY_TEST.format(
            marker='@pytest.mark.domain_policy(block=["example.com"], replace=True)'
        )
    )
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('@pytest.mark.domain_policy(["a.com"])', ": pass keyword arguments only*"),
        (
            '@pytest.mark.domain_policy(allow=["a.com"], block=["b.com"])',
            ": allow= and block= are both set*Keep one.",
        ),
        ('@pytest.mark.domain_policy(deny=["a.com"])', ": unknown argument(s) deny; pass exactly*"),
        ("@pytest.mark.domain_policy()", ": pass exactly one of*"),
        (
            '@pytest.mark.domain_policy(allow="a.com")',
            ": allow= must be a list*write allow=[[]'a.com'].",
        ),
        (
            '@pytest.mark.domain_policy(allow=["a.com"], require_evidence="no")',
            ": require_evidence must be True or False*",
        ),
        (
            '@pytest.mark.domain_policy(allow=["https://a.com"])',
            "*entry 'https://a.com' has a scheme*",
        ),
        ('@pytest.mark.domain_policy(policy="a.com")', "*policy= must be a DomainPolicy*"),
        ("@pytest.mark.domain_policy(allow=[])", "*needs at least one domain*"),
    ],
)
def test_a_bad_marker_stops_the_run_before_any_test(
    project: pytest.Pytester, marker: str, message: str
) -> None:
    project.makepyfile(
        test_agent=f"""
        import pytest

        def test_first():
            pass

        {marker}
        def test_agent():
            pass
        """
    )
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: @pytest.mark.domain_policy on test_agent.py::test_agent{message}"]
    )
    result.stdout.no_fnmatch_line("*passed*")
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            ("tox.ini", "[pytest]\nagentloop_block_domains = https://wikipedia.org\n"),
            "ERROR: ini key agentloop_block_domains in tox.ini: entry 'https://wikipedia.org' "
            "has a scheme. Write it without one: 'wikipedia.org'.",
        ),
        (
            ("tox.ini", "[pytest]\nagentloop_allow_domains =\n    python.org\n    *.org\n"),
            "ERROR: ini key agentloop_allow_domains in tox.ini: entry '[*].org'*",
        ),
        (
            (
                "tox.ini",
                "[pytest]\nagentloop_allow_domains = python.org\n"
                "agentloop_block_domains = wikipedia.org\n",
            ),
            "ERROR: tox.ini: agentloop_allow_domains and agentloop_block_domains are both set*",
        ),
        (
            ("pyproject.toml", '[tool.agentloop-tools]\nblock = ["https://wikipedia.org"]\n'),
            "ERROR: *pyproject.toml [[]tool.agentloop-tools]: entry 'https://wikipedia.org' has "
            "a scheme*",
        ),
        (
            ("pyproject.toml", '[tool.agentloop-tools]\nblock = "wikipedia.org"\n'),
            "ERROR: *pyproject.toml [[]tool.agentloop-tools]: block must be a list of domains*",
        ),
    ],
)
def test_a_bad_project_policy_stops_the_run_before_any_test(
    project: pytest.Pytester, config: tuple[str, str], message: str
) -> None:
    # The bug this guards: the first test failed, later tests ran with no policy at all.
    name, text = config
    (project.path / name).write_text(text)
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    result.stdout.no_fnmatch_line("*passed*")
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_ini_domains_may_be_listed_with_commas(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nagentloop_block_domains = example.com, wikipedia.org\n")
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*default policy=block 2 domain(s)"])


def test_a_bad_provider_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nagentloop_provider = gemini\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*agentloop_provider = 'gemini' is not a provider agentloop knows*"]
    )
    option = project.runpytest("--agentloop-provider=gemini")
    assert option.ret == pytest.ExitCode.USAGE_ERROR
    option.stderr.fnmatch_lines(
        ["*--agentloop-provider = 'gemini' is not a provider agentloop knows*"]
    )


SCRIPTED_CONVERSATIONS = """
import os
import time
import pytest
import agentloop.retry
from agentloop import Agent
from agentloop_tools.testing import (
    ScriptedProvider, anthropic_message, anthropic_search, anthropic_text,
    openai_message, openai_response, openai_search, assert_cited, assert_searched,
)
from agentloop_tools.web import native_web_search


@pytest.mark.vcr
def test_paused_turn(agentloop_agent, agentloop_evidence):
    script = [
        anthropic_message([anthropic_search("first", ["https://a.example/1"])],
                          stop_reason="pause_turn"),
        anthropic_message([anthropic_search("second", ["https://b.example/2"]),
                           anthropic_text("Done.", cite=["https://b.example/2"])]),
    ]
    agent = agentloop_agent([native_web_search()], provider="anthropic",
                            http_client=ScriptedProvider("anthropic", script).http_client())
    agent.run("search twice")
    [transcript] = agentloop_evidence.transcripts
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
    assert_searched(agentloop_evidence, "a.example", "b.example")
    assert_cited(agentloop_evidence, "b.example")


@pytest.mark.vcr
def test_openai_and_a_retried_overload(agentloop_agent, agentloop_evidence):
    text = "Docs ([python.org](https://docs.python.org/3/?utm_source=openai))."
    script = [
        (500, {"error": {"type": "server_error", "message": "overloaded"}}),
        openai_response([openai_search("python", ["https://docs.python.org/3/"]),
                         openai_message(text, cite=[("https://docs.python.org/3/?utm_source=openai",
                                                     "([python.org](https://docs.python.org/3/?utm_source=openai))")])]),
    ]
    agent = agentloop_agent([native_web_search()], provider="openai",
                            http_client=ScriptedProvider("openai", script).http_client())
    started = time.monotonic()
    agent.run("python docs")
    assert_cited(agentloop_evidence, "https://docs.python.org/3/")
    if os.environ.get("EXPECT_REPLAY"):
        assert agentloop.retry.time is not time, "replay swaps out agentloop's sleeps"
        assert time.monotonic() - started < 1.0, "replay skips agentloop's backoff sleeps"
    else:
        assert agentloop.retry.time is time, "recording keeps agentloop's real backoff"


@pytest.mark.vcr
def test_own_agent_with_the_evidence_observer(agentloop_env, agentloop_evidence):
    script = [anthropic_message([anthropic_text("Hi.", cite=["https://c.example/"])])]
    env = dict(agentloop_env, LLM_PROVIDER="anthropic")
    http = ScriptedProvider("anthropic", script).http_client()
    with Agent.from_env(env, [native_web_search()], observer=agentloop_evidence.observer,
                        http_client=http) as agent:
        agent.run("hello")
    assert_cited(agentloop_evidence, "c.example")
"""


def test_paused_turns_openai_retries_and_own_agents_record_and_replay(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_more=SCRIPTED_CONVERSATIONS)
    project.runpytest("--record-mode=once").assert_outcomes(passed=3)
    monkeypatch.setenv("EXPECT_REPLAY", "1")
    project.runpytest().assert_outcomes(passed=3)


def test_help_markers_and_header(project: pytest.Pytester) -> None:
    result = project.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: agent tests on recorded traffic:",
            "  --agentloop-provider=NAME*",
            "  --agentloop-record-in-ci*",
        ]
    )
    result.stdout.fnmatch_lines(["  agentloop_allow_domains (linelist):*"])
    markers = project.runpytest("--markers")
    markers.stdout.fnmatch_lines(
        [
            "@pytest.mark.domain_policy(*, allow=None, block=None, policy=None, "
            "require_evidence=True, replace=False, refused_attempts='report'):*"
        ]
    )
    project.makepyfile(test_nothing="def test_nothing(): pass")
    header = project.runpytest("--agentloop-provider=openai")
    header.stdout.fnmatch_lines(
        ["agentloop-tools: provider=openai, record-mode=none, default policy=none"]
    )


def test_the_plugin_imports_nothing_heavy_when_no_test_uses_it(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_plain="""
        import sys

        def test_nothing_heavy_is_imported():
            heavy = {"agentloop", "vcr", "yaml", "anthropic", "httpx2", "agentloop_tools.web",
                     "agentloop_tools.cassettes", "agentloop_tools.testing"}
            assert heavy.isdisjoint(sys.modules), sorted(heavy & set(sys.modules))
        """
    )
    result = project.runpytest_subprocess("-p", "no:recording")
    result.assert_outcomes(passed=1)


# What a run that does not use the plugin may import of ours: the entry module and the
# one module that decides whether the run uses it. Not the session, the gate, the
# configuration reader, the messages, the documentation links or the error tree.
PLAIN_RUN_IMPORTS = {
    "agentloop_tools",
    "agentloop_tools.pytest_plugin",
    "agentloop_tools._plugin",
    "agentloop_tools._plugin.scope",
}


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"pytest.ini": "[pytest]\nmarkers =\n    slow: slow tests\n"},
        {"pyproject.toml": '[project]\nname = "x"\n\n[tool.pytest.ini_options]\n'},
        {"pytest.ini": "[pytest]\n", "pyproject.toml": "not toml {{ at all\n"},
    ],
    ids=["no-config", "pytest.ini", "pyproject", "a-template-beside-pytest.ini"],
)
def test_a_run_that_does_not_use_the_plugin_imports_only_its_entry_and_scope(
    project: pytest.Pytester, files: dict[str, str]
) -> None:
    for name, text in files.items():
        (project.path / name).write_text(text)
    project.makepyfile(
        test_plain="""
        import sys

        def test_plain():
            print("LOADED", sorted(m for m in sys.modules if m.startswith("agentloop_tools")))
        """
    )
    # A fresh interpreter, with pytest-recording and every other installed plugin loaded.
    result = project.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    if "pyproject.toml" in files and "pytest.ini" in files and result.ret:
        return  # pytest 9 reads a rootdir pyproject.toml itself and stops on a bad one
    result.assert_outcomes(passed=1)
    [line] = [line for line in result.outlines if "LOADED [" in line]
    loaded = set(ast.literal_eval(line.partition("LOADED ")[2]))
    # (The probe of a pyproject.toml's bytes is loaded where there is one to probe.)
    assert loaded - {"agentloop_tools._config_probe"} == PLAIN_RUN_IMPORTS


def test_the_plugin_can_be_disabled(project: pytest.Pytester) -> None:
    project.makepyfile(test_agent="def test_it(agentloop_agent): pass")
    result = project.runpytest("-p", "no:agentloop_tools")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'agentloop_agent' not found*"])


def test_pyproject_sets_the_policy_the_command_line_uses_too(project: pytest.Pytester) -> None:
    project.makepyprojecttoml(
        '[tool.agentloop-tools]\nblock = ["wikipedia.org"]\n\n[tool.pytest.ini_options]\n'
    )
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: *default policy=block 1 domain(s) from pyproject.toml",
            "*(policy from pyproject.toml ?tool.agentloop-tools?)",
        ]
    )


UNSEEN_AGENT = """
import pytest
from agentloop import Agent
from agentloop_tools.testing import ScriptedProvider, anthropic_message, anthropic_text
from agentloop_tools.web import native_web_search

SCRIPT = [anthropic_message([anthropic_text("See https://en.wikipedia.org/wiki/Python.")])]
ENV = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "placeholder"}


@pytest.mark.domain_policy(allow=["python.org"]{option})
def test_own_agent_not_connected():
    http = ScriptedProvider("anthropic", SCRIPT).http_client()
    with Agent.from_env(ENV, [native_web_search()], http_client=http) as agent:
        agent.run("Tell me about Python")
"""


def test_a_marked_test_whose_agent_the_plugin_never_saw_fails(project: pytest.Pytester) -> None:
    project.makepyfile(test_agent=UNSEEN_AGENT.replace("{option}", ""))
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: test_agent.py::test_own_agent_not_connected is marked "
            "@pytest.mark.domain_policy, but no agent conversation reached the plugin, so "
            "nothing was audited.",
            "Connect the test's agent in one of two ways:",
            "  1. build it with the agentloop_agent fixture:",
            "  2. give your own agent the evidence observer:",
            "       Agent.from_env(env, tools, observer=agentloop_evidence.observer)",
        ]
    )


def test_opting_out_of_evidence_is_said_in_the_summary(project: pytest.Pytester) -> None:
    project.makepyfile(test_agent=UNSEEN_AGENT.replace("{option}", ", require_evidence=False"))
    for workers in ([], ["-n", "1"]):  # xdist: workers pass it to the controller's summary
        result = project.runpytest(*workers)
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines(
            [
                "*- agentloop-tools -*",
                "NOT AUDITED test_agent.py::test_own_agent_not_connected: "
                "domain_policy(require_evidence=False) and no agent conversation reached the "
                "plugin",
            ]
        )


def test_a_marked_test_with_its_own_live_client_never_leaves_the_machine(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_agent="""
        import pytest
        from agentloop import Agent
        from agentloop_tools.web import native_web_search

        ENV = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "sk-ant-not-a-real-key"}

        @pytest.mark.domain_policy(allow=["python.org"])
        def test_live_by_accident():
            with Agent.from_env(ENV, [native_web_search()]) as agent:
                agent.run("hello")

        @pytest.mark.domain_policy(allow=["python.org"])
        def test_live_openai_by_accident():
            env = {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-not-a-real-key"}
            with Agent.from_env(env, [native_web_search()]) as agent:
                agent.run("hello")
        """
    )
    result = project.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["agentloop-tools: this test builds an agent but has no cassette, so it would call*"]
    )
    result.stdout.no_fnmatch_line("*Connection error*")
    result.stdout.no_fnmatch_line("*ConnectError*")


def test_a_missing_provider_sdk_names_the_extra_to_install(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        import sys

        class NoAnthropicSdk:
            # As if the anthropic extra were not installed.
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("anthropic", "httpx2"):
                    raise ImportError(f"No module named {name!r}", name=name)
                return None

        for name in [n for n in sys.modules if n.split(".")[0] in ("anthropic", "httpx2")]:
            del sys.modules[name]
        sys.meta_path.insert(0, NoAnthropicSdk())
        """
    )
    project.makepyfile(
        test_agent="""
        import pytest
        from agentloop_tools.web import native_web_search

        @pytest.mark.vcr
        def test_agent(agentloop_agent):
            agentloop_agent([native_web_search()], provider="anthropic").run("hi")
        """
    )
    (project.path / "cassettes" / "test_agent").mkdir(parents=True)
    (project.path / "cassettes" / "test_agent" / "test_agent.yaml").write_text(
        "interactions: []\nversion: 1\n"
    )
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: provider 'anthropic' needs its SDK, which is not installed*",
            "Install it with: pip install 'based-models-agentloop-tools[testing,anthropic]'",
        ]
    )


CLIENT_SEARCH = """
import os
import time
import pytest
from agentloop_tools.testing import ScriptedSearch, brave_rate_limited, brave_results
from agentloop_tools.web import web_search
from agentloop_tools.web.backends import brave


@pytest.mark.vcr
def test_search_with_a_retry(agentloop_env):
    key = agentloop_env.get("BRAVE_API_KEY", "agentloop-tools-placeholder-BRAVE_API_KEY")
    scripted = None
    if not os.environ.get("EXPECT_REPLAY"):
        script = [brave_rate_limited(retry_after=2), brave_results([("https://a.example/", "T")])]
        scripted = ScriptedSearch("brave", script).http_client()
    tool = web_search(brave(key), http_client=scripted)
    started = time.monotonic()
    assert "https://a.example/" in tool.handler(None, query="python", count=None)
    if os.environ.get("EXPECT_REPLAY"):
        assert time.monotonic() - started < 1.0, "replay skips web_search's backoff"
"""


def test_replay_skips_web_searchs_backoff_and_scrubs_its_key(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "BSA" + "k" * 28)
    project.makepyfile(test_search=CLIENT_SEARCH)
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    cassette = (project.path / "cassettes/test_search/test_search_with_a_retry.yaml").read_text()
    assert "BSA" + "k" * 28 not in cassette
    monkeypatch.setenv("EXPECT_REPLAY", "1")
    project.runpytest().assert_outcomes(passed=1)


def test_a_search_api_is_never_called_live_without_a_cassette(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_search="""
        from agentloop_tools.web import web_search
        from agentloop_tools.web.backends import brave

        def test_live_search(agentloop_env):
            web_search(brave("BSA" + "x" * 28)).handler(None, query="python", count=None)
        """
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*this test builds an agent but has no cassette*"])


def test_a_conversation_the_plugin_never_saw_fails_under_the_project_policy(
    project: pytest.Pytester,
) -> None:
    project.makeini("[pytest]\nagentloop_block_domains = wikipedia.org\n")
    project.makepyfile(
        test_agent="""
        import pytest
        from agentloop import Agent
        from agentloop_tools.testing import ScriptedProvider, anthropic_message, anthropic_text
        from agentloop_tools.web import native_web_search

        SCRIPT = [anthropic_message([anthropic_text("See https://en.wikipedia.org/wiki/X.")])]

        @pytest.mark.vcr
        def test_own_agent(agentloop_env):
            env = dict(agentloop_env, LLM_PROVIDER="anthropic")
            http = ScriptedProvider("anthropic", SCRIPT).http_client()
            with Agent.from_env(env, [native_web_search()], http_client=http) as agent:
                agent.run("hello")
        """
    )
    for args in (["--record-mode=once"], []):  # recording, then replaying
        result = project.runpytest(*args)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "agentloop-tools: test_agent.py::test_own_agent sent 1 request(s) to a model "
                "provider (see its cassette), but no agent conversation reached the plugin, so "
                "the project's domain policy (from tox.ini) audited nothing.",
            ]
        )


def test_a_plain_vcr_test_with_model_traffic_fails_under_the_project_policy(
    project: pytest.Pytester,
) -> None:
    # Neither the plugin's fixtures nor its marker: the project's policy still applies.
    project.makeini("[pytest]\nagentloop_block_domains = wikipedia.org\n")
    project.makepyfile(
        test_agent="""
        import pytest
        from agentloop import Agent
        from agentloop_tools.testing import ScriptedProvider, anthropic_message, anthropic_text
        from agentloop_tools.web import native_web_search

        SCRIPT = [anthropic_message([anthropic_text("See https://en.wikipedia.org/wiki/X.")])]
        ENV = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "placeholder"}

        @pytest.mark.vcr
        def test_plain_vcr():
            http = ScriptedProvider("anthropic", SCRIPT).http_client()
            with Agent.from_env(ENV, [native_web_search()], http_client=http) as agent:
                agent.run("hello")

        @pytest.mark.vcr
        def test_no_model_traffic():
            pass
        """
    )
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        ["agentloop-tools: test_agent.py::test_plain_vcr sent 1 request(s) to a model provider*"]
    )
