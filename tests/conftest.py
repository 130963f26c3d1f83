"""Shared test configuration: pytester, and the heavy dependencies imported once.

In-process pytester runs then reuse them.

pytester restores ``sys.modules`` after each inner run, so a module first imported
inside one is imported again by the next (over a second for the provider SDKs).
"""

import agentloop
import agentloop.providers.anthropic
import agentloop.providers.openai
import anthropic
import httpx
import httpx2
import pytest_recording.plugin
import vcr
import yaml

import agentloop_tools.cassettes
import agentloop_tools.pytest_plugin
import agentloop_tools.testing

PRELOADED = (
    agentloop,
    agentloop.providers.anthropic,
    agentloop.providers.openai,
    anthropic,
    httpx,
    httpx2,
    pytest_recording.plugin,
    vcr,
    yaml,
    agentloop_tools.cassettes,
    agentloop_tools.pytest_plugin,
    agentloop_tools.testing,
)

pytest_plugins = ["pytester"]
