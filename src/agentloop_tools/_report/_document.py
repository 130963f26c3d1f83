"""The JSON document of a run's evidence records, credentials replaced."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from agentloop_tools._secrets import Cleaner, secret_values


def document(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    conversations = [c for record in records for c in record["conversations"]]
    return {
        "tests": list(records),
        "summary": {
            "tests_with_evidence": len(records),
            # A refused cassette fails at teardown: pytest calls that an error.
            "failed": sum(1 for r in records if r.get("outcome") in ("failed", "error")),
            "violations": sum(len(c["violations"]) for c in conversations),
            # Of which URLs web_fetch refused before requesting them (the policy held).
            "refused_attempts": sum(
                1 for c in conversations for v in c["violations"] if v.get("refused")
            ),
            "pages_with_violations": sum(len(c.get("pages", [])) for c in conversations),
        },
    }


def clean(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with every credential replaced, as cassettes are scrubbed.

    A model's answer can repeat a key it was shown: the environment's credentials
    become their placeholders, any other key shape ``[redacted]``.
    """
    cleaner = Cleaner(secret_values(os.environ))
    cleaned: list[dict[str, Any]] = cleaner.data(list(records))
    return cleaned
