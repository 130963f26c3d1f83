"""Typed web tools for agentloop agents.

Tool families are explicit imports (``from agentloop_tools.web import ...``); the
package root re-exports nothing, so importing it costs nothing.
"""

__version__ = "0.2.0.dev0"

__all__ = ["__version__"]
