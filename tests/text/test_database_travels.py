"""A blocklist that has compiled its Hyperscan database sends it with its pickle.

``--jobs`` workers receive the policy pickled: a worker must load the database it
carries (``hyperscan.dumpb``/``loadb``), not compile it again (seconds for 100,000
rules), and judge exactly as the policy that compiled it.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from agentloop import Transcript
from agentloop.transcript import TextPart

from agentloop_tools.web import DomainPolicy, Violation
from agentloop_tools.web._text import _literal_search
from agentloop_tools.web._text._literal_search import ENGINE_VARIABLE, LiteralSearch

pytestmark = [
    pytest.mark.core,
    pytest.mark.skipif(
        _literal_search.hyperscan_module() is None, reason="the speed extra is not installed"
    ),
]

RULES = ["evil.com", "bad.example", "xn--e-ufa.com", "tracker.net/pixel"]
TEXT = (
    "See https://EVIL.com/x, bad.example。 and [a](https://tracker.net/pixel?id=1); "
    "東京 https://evil.com/ja/1。 also evil[.]com, https://good.org/ and é.com"
)
ROOT = Path(__file__).resolve().parents[2]


def transcript(text: str) -> Transcript:
    answer = Transcript()
    answer.add_user_message("question")
    answer.add_assistant_message([TextPart(text=text)])
    return answer


def compiled_policy(monkeypatch: pytest.MonkeyPatch) -> tuple[DomainPolicy, list[Violation]]:
    monkeypatch.setenv(ENGINE_VARIABLE, "hyperscan")
    monkeypatch.setattr(_literal_search, "_COMPILED", {})
    policy = DomainPolicy.block(RULES)
    found = list(policy.audit(transcript(TEXT)))
    assert found
    return policy, found


def counting_compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    compiles: list[int] = []
    compile_once = LiteralSearch._compile

    def counted(search: LiteralSearch) -> None:
        compiles.append(1)
        compile_once(search)

    monkeypatch.setattr(LiteralSearch, "_compile", counted)
    return compiles


def test_an_unpickled_policy_loads_the_database_and_judges_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy, found = compiled_policy(monkeypatch)
    pickled = pickle.dumps(policy)
    monkeypatch.setattr(_literal_search, "_COMPILED", {})  # as in a fresh worker
    compiles = counting_compiles(monkeypatch)
    copied = pickle.loads(pickled)
    assert copied == policy
    assert list(copied.audit(transcript(TEXT))) == found
    assert compiles == []
    # and it passes the database on: a worker's worker loads it too
    assert pickle.loads(pickle.dumps(copied)).audit(transcript(TEXT)) == found
    assert compiles == []


def test_a_worker_process_audits_without_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    policy, found = compiled_policy(monkeypatch)
    worker = (
        "import pickle, sys, json\n"
        "from agentloop_tools.web._text._literal_search import LiteralSearch\n"
        "from tests.text.test_database_travels import TEXT, transcript\n"
        "compiles = []\n"
        "compile_once = LiteralSearch._compile\n"
        "LiteralSearch._compile = lambda s: (compiles.append(1), compile_once(s))[1]\n"
        "policy = pickle.load(sys.stdin.buffer)\n"
        "found = [repr(v) for v in policy.audit(transcript(TEXT))]\n"
        "print(json.dumps([len(compiles), found]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", worker],
        input=pickle.dumps(policy),
        capture_output=True,
        cwd=ROOT,
        check=True,
        env={**os.environ, ENGINE_VARIABLE: "hyperscan"},
    )
    compiles, worker_found = json.loads(done.stdout)
    assert compiles == 0
    assert worker_found == [repr(violation) for violation in found]


def test_a_policy_that_never_compiled_sends_no_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENGINE_VARIABLE, "aho-corasick")
    policy = DomainPolicy.block(RULES)
    found = list(policy.audit(transcript(TEXT)))
    assert policy.__reduce__()[1][3] is None
    monkeypatch.setenv(ENGINE_VARIABLE, "hyperscan")
    assert list(pickle.loads(pickle.dumps(policy)).audit(transcript(TEXT))) == found


def test_a_worker_forced_to_aho_corasick_ignores_the_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policy, found = compiled_policy(monkeypatch)
    pickled = pickle.dumps(policy)
    monkeypatch.setattr(_literal_search, "_COMPILED", {})
    monkeypatch.setenv(ENGINE_VARIABLE, "aho-corasick")
    compiles = counting_compiles(monkeypatch)
    copied = pickle.loads(pickled)
    assert list(copied.audit(transcript(TEXT))) == found
    assert compiles == []
    assert _literal_search._COMPILED == {}  # never loaded


def test_an_unpickled_search_still_finds_unseen_characters_in_the_same_pass() -> None:
    search = LiteralSearch(["b.com"], engine="hyperscan", seen="!-~")
    assert search.starts("x") == []
    restored = pickle.loads(pickle.dumps(search))
    # before, the class was lost on the way: the caller had to scan for it again
    assert restored.starts_and_unseen("a b.com é".encode(), 9) == [2, 1, 7, 8]
