"""The plugin's own failures, each carrying its kind: reports sort by it, never by wording.

A failure is ``pytest.fail``'s exception (what ``xfail(raises=pytest.fail.Exception)``
names) with a ``failure_kind`` attribute; the kinds are ``_report._entries.FAILURE_KINDS``.
"""

from __future__ import annotations

from typing import NoReturn

import pytest

KIND_ATTRIBUTE = "failure_kind"


def fail(message: str, kind: str | None = None) -> NoReturn:
    """``pytest.fail(message, pytrace=False)``, the exception carrying ``kind``."""
    __tracebackhide__ = True
    error = pytest.fail.Exception(message, pytrace=False)
    if kind is not None:
        setattr(error, KIND_ATTRIBUTE, kind)
    raise error


def kind_of(error: BaseException | None) -> str | None:
    """The kind a failure carries (an ``EvidenceAssertionError`` too), if any."""
    kind = getattr(error, KIND_ATTRIBUTE, None)
    return kind if isinstance(kind, str) else None
