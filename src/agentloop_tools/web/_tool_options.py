"""The options of both client tools and of the search backends, checked one way.

A number option is an int or a float, never a bool (``True`` is an int to Python); a
whole-number option is an int, never a bool. The reading of a value lives here once;
the wording stays each caller's, because the messages are part of the API:
``web_search`` and the backends say ``name(option=value) is not accepted; use ...``,
``web_fetch`` and ``fetch()`` say ``option must be ..., got value``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeGuard


def is_number(value: object) -> TypeGuard[int | float]:
    """An int or a float, not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_whole(value: object) -> TypeGuard[int]:
    """An int, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def whole_in(caller: str, label: str, value: object, low: int, high: int) -> int:
    """``value`` if a whole number from ``low`` to ``high``, else a ``ValueError``."""
    if not is_whole(value) or not low <= value <= high:
        raise ValueError(
            f"{caller}({label}={value!r}) is not accepted; use an integer from {low} to {high}."
        )
    return value


def number_in(
    caller: str, label: str, value: object, accepts: Callable[[float], bool], use: str
) -> float:
    """``value`` as a float if a number ``accepts`` takes, else a ``ValueError`` saying ``use``."""
    if not is_number(value) or not accepts(value):
        raise ValueError(f"{caller}({label}={value!r}) is not accepted; {use}.")
    return float(value)


def positive_int(value: object, name: str) -> int:
    """``value`` if a whole number above 0, else a ``ValueError`` naming ``name``."""
    if not is_whole(value) or value <= 0:
        raise ValueError(f"{name} must be a positive whole number, got {value!r}.")
    return value


def positive_seconds(value: object, name: str) -> float:
    """``value`` as a float if a number above 0, else a ``ValueError`` naming ``name``."""
    if not is_number(value) or not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}.")
    return float(value)


def non_negative_seconds(value: object, name: str) -> float:
    """``value`` as a float if a number from 0 up, else a ``ValueError`` naming ``name``."""
    if not is_number(value) or not value >= 0:
        raise ValueError(f"{name} must be zero or a positive number of seconds, got {value!r}.")
    return float(value)
