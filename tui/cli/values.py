"""Every numeric command-line value, checked where argparse parses it.

An option's ``type=`` is one of these: a whole number or a finite number within the
range that makes sense for it. A bad value stops the command before anything is read
or written, with argparse's usage error (exit 2) naming the option and what it expects:
``--lease nan`` or ``--depth 9223372036854775808`` never reach the engine (where they
would serve blank tabs or overflow a 64-bit column).

Python's ``int()`` and ``float()`` take more than a user means by a number (``1_000``,
``nan``, ``inf``, Arabic-Indic digits): these take ASCII decimal notation only.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable

from engine.types import MAX_DEPTH

INT64_MAX = 2**63 - 1
"""The largest whole number SQLite and numpy's int64 hold."""

MAX_RANKS = MAX_DEPTH
"""The deepest ranking, cutoff or rank tolerance an option may ask for."""

MAX_SAMPLES = 1_000_000
"""The most bootstrap resamples (each is a row of means; 10,000 is the default)."""

MAX_LEASE_SECONDS = 86_400.0
"""The longest lease: a day."""

_WHOLE = re.compile(r"[+-]?[0-9]{1,30}")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?")


def _show(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _range(low: float | None, high: float | None, *, low_open: bool = False) -> str:
    lo = None if low is None else _show(low)
    hi = None if high is None else _show(high)
    if lo is not None and hi is not None:
        return f"above {lo}, at most {hi}" if low_open else f"from {lo} to {hi}"
    if lo is not None:
        return f"above {lo}" if low_open else f"at least {lo}"
    return "" if hi is None else f"at most {hi}"


def whole_value(raw: str, low: int, high: int) -> int:
    """``raw`` as a whole number in [low, high]; ValueError says what is expected."""
    expected = f"a whole number {_range(low, high)}"
    text = raw.strip()
    if not _WHOLE.fullmatch(text):
        raise ValueError(f"{raw!r} is not a whole number; expected {expected}")
    value = int(text)
    if not low <= value <= high:
        raise ValueError(f"{raw!r} is out of range; expected {expected}")
    return value


def finite_value(
    raw: str, low: float | None = None, high: float | None = None, *, low_open: bool = False
) -> float:
    """``raw`` as a finite number in the range; ValueError says what is expected."""
    bounds = _range(low, high, low_open=low_open)
    expected = f"a finite number {bounds}".rstrip()
    text = raw.strip()
    value = float(text) if _DECIMAL.fullmatch(text) else math.nan
    if not math.isfinite(value):
        raise ValueError(f"{raw!r} is not a finite number; expected {expected}")
    too_low = low is not None and (value <= low if low_open else value < low)
    if too_low or (high is not None and value > high):
        raise ValueError(f"{raw!r} is out of range; expected {expected}")
    return value


def whole(low: int = 0, high: int = INT64_MAX) -> Callable[[str], int]:
    """An argparse ``type``: a whole number in [low, high]."""

    def parse(raw: str) -> int:
        try:
            return whole_value(raw, low, high)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = "whole number"
    return parse


def finite(
    low: float | None = None, high: float | None = None, *, low_open: bool = False
) -> Callable[[str], float]:
    """An argparse ``type``: a finite number in the range (``low_open``: above ``low``)."""

    def parse(raw: str) -> float:
        try:
            return finite_value(raw, low, high, low_open=low_open)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = "number"
    return parse


def finite_list(raw: str) -> str:
    """An argparse ``type``: comma-separated finite numbers, kept as given.

    The engine reads the list; ``nan`` or ``inf`` among them never reaches it.
    """
    items = [x for x in raw.split(",") if x.strip()]
    try:
        for x in items:
            finite_value(x)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc}, separated by commas") from None
    if not items:
        raise argparse.ArgumentTypeError(f"{raw!r}: expected finite numbers separated by commas")
    return raw


ranks = whole(1, MAX_RANKS)
"""``--depth``, ``--k``, ``--per-question``-like counts of ranks: 1 to :data:`MAX_RANKS`."""

tolerance = whole(0, MAX_RANKS)
"""``--tolerance``: ranks allowed worse, 0 to :data:`MAX_RANKS`."""

samples = whole(1, MAX_SAMPLES)
"""``--samples``: bootstrap resamples."""

level = finite(0, 0.5, low_open=True)
"""``--level``: a verdict's two-sided level, above 0 and at most 0.5."""

seed = whole(0, INT64_MAX)
"""``--seed``: any non-negative 64-bit number."""

count = whole(1, INT64_MAX)
"""``--sample``, ``--min-count``: at least 1, within 64 bits."""

port = whole(1, 65_535)
"""``--port``."""

people_per_question = whole(1, 1_000)
"""``serve --per-question``."""

lease_seconds = finite(5, MAX_LEASE_SECONDS)
"""``serve --lease``: 5 seconds to a day."""

similarity = finite(0, 1, low_open=True)
"""``--similarity``: a Jaccard threshold in (0, 1]."""
