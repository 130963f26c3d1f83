"""Typed web tools for agentloop agents.

Tool families are explicit imports (``from agentloop_tools.web import ...``); the
package root re-exports only the base of every exception it raises, so importing it
costs nothing.
"""

from agentloop_tools._errors import AgentloopToolsError

__version__ = "0.2.0.dev0"

__all__ = ["AgentloopToolsError", "__version__"]
