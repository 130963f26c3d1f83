"""The one wording of a violation, shared by every place that shows one.

``Violation``, ``PageViolation``, the assertion helpers, the plugin's failures and
reports, and every ``agentloop-tools audit`` format word a verdict through here, so a
reader sees the same words wherever a breach is reported. A module of its own so the
policy and the page grouping can both import it without importing each other.
"""

from __future__ import annotations


def verdict(rule: str | None) -> str:
    """``blocked by 'rule'`` for a blocklist's rule (quoted as Python would), or
    ``not on the allowlist`` when no rule blocked it (``rule`` is None or empty)."""
    return f"blocked by {rule!r}" if rule else "not on the allowlist"
