"""The HTML evidence page of a client-side conversation, built from its record."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from types import ModuleType

import pytest

from agentloop_tools._report import _records as _report
from agentloop_tools.web import DomainPolicy
from tests.testing.client_agent import research

POLICY = DomainPolicy.allow(["python.org"])


def _page() -> str:
    transcript = research(
        "See [notes](https://docs.python.org/3/whatsnew/3.13.html) and "
        '[x](https://x.example/) <img src="https://x.example/pixel.gif"> '
        "[js](javascript:alert(1)) <iframe src='https://x.example/'></iframe>",
        fetch=["https://evil.example/page"],
        policy=POLICY,
    )
    record = _report.test_record(
        "test_x.py::test_x", [transcript], POLICY, "a test", None, outcome="failed", failure=None
    )
    return _report.html_page([record])


def test_the_rendered_answer_loads_and_runs_nothing() -> None:
    page = _page()
    body = page.split("<details class='raw'>", 1)[0].split("class='answer rendered'", 1)[1]
    assert "<img" not in body
    assert "<iframe" not in body
    assert 'href="javascript' not in body  # shown as text, never a link
    assert "link-violating' title='https://x.example/'>x</a>" in body
    assert "<sup class='ok'>[consulted]</sup>" in body
    assert "Tool call 2: web_fetch" in page


def test_without_the_renderer_the_raw_text_is_shown_and_the_page_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "nh3", None)  # what an absent package looks like
    page = _page()
    assert "class='answer rendered'" not in page
    assert "<div class='answer raw'" in page
    assert "Install the testing extra (markdown-it-py, nh3)" in page


def test_a_renderer_that_will_not_load_is_named_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An extension built with an old PyO3 refuses a second initialisation in a process.
    real = importlib.import_module

    def refusing(name: str, package: str | None = None) -> ModuleType:
        if name == "nh3":
            raise ImportError("PyO3 modules may only be initialized once per interpreter")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", refusing)
    page = _page()
    assert "class='answer rendered'" not in page
    assert (
        "Answers are shown as raw text: nh3 is installed but did not load (PyO3 modules may "
        "only be initialized once per interpreter)."
    ) in page


def test_conversations_and_messages_are_numbered_as_every_other_output_numbers_them() -> None:
    clean = research("See [notes](https://docs.python.org/3/whatsnew/3.13.html).", policy=POLICY)
    breaching = research("Done.", fetch=["https://evil.example/page"], policy=POLICY)
    record = _report.test_record(
        "test_x.py::test_x", [clean, breaching], POLICY, "a test", None, outcome="failed",
        failure=None,
    )  # fmt: skip
    page = _report.html_page([record])
    [found] = [v for v in POLICY.audit(breaching) if v.where == "tool-call"]
    # What pytest's failure says of it: "conversation 2, message N tool-call: ...".
    said = str(dataclasses.replace(found, conversation=1))
    assert said.startswith(f"conversation 2, message {found.message_index} tool-call:")
    assert ">Conversation 2</h3>" in page
    assert f"<li>tool-call message index {found.message_index}: https://evil.example/page" in page
    assert f"<li>message index {found.message_index} tool-call" in page
    assert "Conversations are numbered from 1. Messages are named by their index" in page
    assert "transcript, counted from 0: message index 3 is its fourth message" in page
