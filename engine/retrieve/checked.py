"""A ranking from outside goldpan, checked: the one rule for every answer an engine gives.

A search engine's answer (``http``, ``opensearch``, ``elasticsearch``), a database's rows
(``postgres``), a program's run (``command``) and a search function's results (the
Python API's :func:`goldpan.evaluate`) each become one question's ranking through
:func:`checked_ranking`: every document id is text (or a whole number, read as its
digits), every score a finite number, every document one the workspace has, none listed
twice; the ranking is then re-derived from the scores in trec_eval's order
(:func:`~engine.retrieve.order.trec_order`), whatever order the answer came in. The
first hit that breaks the rule is the error, naming where it is.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Container, Iterable
from decimal import Decimal
from typing import Any

from engine.errors import GoldpanError
from engine.retrieve.order import trec_order

Ranking = tuple[list[str], list[float]]

Hit = tuple[str, Any, Any]
"""``(where, document id, score)`` as the answer gave them; ``where`` names the hit in a
message (``hit 2``, ``row 3 for question 'q1'``, ``line 7``)."""


def doc_id_of(value: Any) -> str | None:
    """A hit's document id as goldpan's: non-empty text, or a whole number as its digits."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    return None


def score_of(value: Any) -> float | None:
    """A hit's score as a float when it is a finite number (never true or false), else None.

    A number too large for a float (an integer of 400 digits, ``Decimal('1e400')``) is
    not finite either.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real | Decimal):
        return None
    try:
        score = float(value)
    except OverflowError:
        return None
    return score if math.isfinite(score) else None


def checked_ranking(
    hits: Iterable[Hit],
    depth: int,
    known: Container[str] | None,
    problem: Callable[[str], GoldpanError],
) -> Ranking:
    """The best ``depth`` documents of one question's ``hits``, every hit checked.

    Args:
        hits: the answer's hits, in the order given.
        depth: how many documents the ranking keeps.
        known: the workspace's document ids (None: not checked).
        problem: makes the error for a hit that breaks the rule, from the words
            ``"hit 2: document 'x' is listed twice"`` (the caller adds who answered).

    Raises:
        GoldpanError: ``problem``'s error for the first bad hit.
    """
    scores: dict[str, float] = {}
    for where, raw_id, raw_score in hits:
        doc = doc_id_of(raw_id)
        if doc is None:
            raise problem(
                f"{where}: the document id {_shown(raw_id)} is not text or a whole number"
            )
        score = score_of(raw_score)
        if score is None:
            raise problem(
                f"{where}: the score {_shown(raw_score)} of document {_shown(doc)} is not a "
                "finite number"
            )
        if known is not None and doc not in known:
            raise problem(f"{where}: document {_shown(doc)} is not in the workspace")
        if doc in scores:
            raise problem(f"{where}: document {_shown(doc)} is listed twice")
        scores[doc] = score
    return trec_order(scores, depth)


def _shown(value: Any) -> str:
    """A value from the answer in a message: its ``repr``, cut to 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"
