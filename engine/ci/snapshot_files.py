"""A snapshot file: its format, reading it, and refusing one of the wrong shape.

``goldpan snapshot export`` writes the document :mod:`engine.ci.snapshots` takes;
:func:`load_snapshot_file` reads one back and :func:`check_snapshot` checks its shape,
naming the field (and the line) of the first value that does not fit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.formats.errors import IngestError
from engine.formats.jsontext import load_json
from engine.grades import GRADE_RANGE, MAX_GRADE, MIN_GRADE
from engine.workspace import WorkspaceError

FORMAT = 1
"""The version of the snapshot document."""


class SnapshotError(WorkspaceError):
    """A snapshot file or name that cannot be used; the message says which and why."""


MAX_RANK = 2**32 - 1
"""The largest first-gold rank a snapshot may hold (a ranking numbers its documents in
32 bits); larger would overflow the arrays a diff is computed in."""


def _line_of(text: str | None, keys: Sequence[str]) -> int | None:
    """The line where the nested ``keys`` (object keys, outermost first) appear in ``text``.

    Found by looking for each ``"key":`` after the one before, as ``snapshot export``
    writes them; None when ``text`` is unknown or a key is not found.
    """
    if text is None:
        return None
    at = 0
    for key in keys:
        found = text.find(json.dumps(key, ensure_ascii=False) + ":", at)
        if found < 0:
            found = text.find(json.dumps(key) + ":", at)
        if found < 0:
            return None
        at = found + 1
    return text.count("\n", 0, at) + 1


def _is_whole(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


def _is_metric_value(value: Any) -> bool:
    """A number from 0 to 1, as every metric goldpan reports is (never NaN or infinite).

    Compared, never converted: ``float(10**400)`` overflows where ``10**400 <= 1`` is False.
    """
    return type(value) in (int, float) and 0 <= value <= 1


def check_snapshot(data: Any, where: str, text: str | None = None) -> dict[str, Any]:
    """``data`` when it has the snapshot document's shape; else :class:`SnapshotError`.

    The error names the field (``retrievers.R.questions.Q.rank``) and, when ``text`` (the
    file's JSON) is given, the line. A rank is a whole number from 0 to :data:`MAX_RANK`,
    a grade one of 0-3, a metric value a number from 0 to 1 (every metric goldpan reports
    is): a value out of range is refused here, never left to overflow the scoring later.
    """

    def bad(what: str, *keys: str) -> SnapshotError:
        line = _line_of(text, keys) if keys else None
        head = f"{where}:{line}" if line is not None else where
        field = f"field {'.'.join(keys)}: " if keys else ""
        return SnapshotError(f"{head}: not a goldpan snapshot ({field}{what})")

    if not isinstance(data, dict) or data.get("goldpan_snapshot") is None:
        raise bad("expected a JSON object with a goldpan_snapshot key")
    if data["goldpan_snapshot"] != FORMAT:
        raise bad(f"format {data['goldpan_snapshot']!r}; this goldpan reads format {FORMAT}")
    metrics = data.get("metrics")
    golds = data.get("golds")
    rets = data.get("retrievers")
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise bad("`metrics` must be a list of metric names", "metrics")
    if not isinstance(golds, dict):
        raise bad("`golds` must map question ids to {doc: grade}", "golds")
    for q, g in golds.items():
        if not isinstance(g, dict):
            raise bad("`golds` must map question ids to {doc: grade}", "golds", q)
        for doc, grade in g.items():
            if not _is_whole(grade, MIN_GRADE, MAX_GRADE):
                raise bad(f"grade {grade!r}; expected {GRADE_RANGE}", "golds", q, doc)
    if not isinstance(rets, dict):
        raise bad("`retrievers` must be an object", "retrievers")
    for r, body in rets.items():
        qs = body.get("questions") if isinstance(body, dict) else None
        if not isinstance(qs, dict):
            raise bad(f"retriever {r!r} has no `questions` object", "retrievers", r)
        lacked = body.get("not_ranked", [])
        if not isinstance(lacked, list) or not all(
            isinstance(q, str) and q in golds and q not in qs for q in lacked
        ):
            raise bad(
                f"retriever {r!r}: `not_ranked` must list questions of `golds` it has no "
                "values for",
                "retrievers",
                r,
                "not_ranked",
            )
        for q, row in qs.items():
            keys = ("retrievers", r, "questions", q)
            ok = (
                isinstance(row, dict)
                and (row.get("top") is None or isinstance(row.get("top"), str))
                and isinstance(row.get("values"), dict)
                and q in golds
            )
            if not ok:
                raise bad(
                    f"retriever {r!r}, question {q!r}: expected rank, top and a value per "
                    "metric, and the question's gold",
                    *keys,
                )
            rank = row.get("rank")
            if not _is_whole(rank, 0, MAX_RANK):
                raise bad(
                    f"{rank!r}; expected a whole number from 0 to {MAX_RANK:,}", *keys, "rank"
                )
            for m in metrics:
                value = row["values"].get(m)
                if not _is_metric_value(value):
                    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
                    raise bad(f"{shown}; expected a number from 0 to 1", *keys, "values", m)
    return data


def load_snapshot_file(path: Path) -> dict[str, Any]:
    """Read a snapshot written by ``goldpan snapshot export``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SnapshotError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"{path}: cannot be read ({exc})") from None
    try:
        data = load_json(text, path, hint="; expected a goldpan snapshot")
    except IngestError as exc:  # too long a number, too deep, malformed: file and line
        raise SnapshotError(str(exc)) from None
    return check_snapshot(data, str(path), text)
