"""Typed web tools for agentloop agents.

Tool families are explicit imports (``from agentloop_tools.web import ...``); the
package root re-exports only the base of every exception it raises, loaded when first
asked for: the pytest plugin imports this package in every pytest run of the
environment, and a run that does not use it must not pay for it.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentloop_tools._errors import AgentloopToolsError

__version__ = "0.2.0.dev0"

__all__ = ["AgentloopToolsError", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "AgentloopToolsError":
        from agentloop_tools._errors import AgentloopToolsError

        return AgentloopToolsError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
