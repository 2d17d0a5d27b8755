"""Fusion of other retrievers' cached rankings: reciprocal rank fusion and score fusion.

Reciprocal rank fusion (the ``rrf`` kind):

``score(d) = sum_i w_i / (k + rank_i(d))`` over the fused rankings that contain ``d``
(Cormack, Clarke & Büttcher, SIGIR 2009; ranx ``fuse(method="rrf")`` with ``k = 60`` and
unit weights; trectools ``reciprocal_rank_fusion``). Ranks are 1-based positions in each
base's cached ranking, which is already in trec_eval order, so ties inside a base are
broken the trec_eval way before fusion. Each base is read to a fixed depth (``depth``,
100 by default) whatever the pool depth, so a fused ranking never depends on how deep its
bases happened to be cached. Fused scores are rounded like every ranking's
(:func:`engine.retrieve.order.canonical_scores`): documents at mirrored ranks tie exactly
and go in doc id descending order.

Score fusion (the ``fuse`` kind, :class:`FuseRetriever`) normalizes each base's scores and
combines them as ranx's ``fuse(norm=..., method="sum" | "mnz" | "wsum")`` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.errors import BadInput
from engine.pooling import DEFAULT_DEPTH
from engine.retrieve.base import PrepareEnv, Ranking, param_list
from engine.retrieve.order import canonical_scores, trec_order
from engine.retrieve.params import FLOATS, OF, Param, finite_at_least, resolve
from engine.types import MAX_DEPTH, Doc, Question, RetrieverSpec

FloatArray = npt.NDArray[np.float64]

DEFAULT_RRF_K = 60.0

MAX_WEIGHT = 1_000_000.0
"""The largest weight a fused retriever may give a base: any ratio people mean fits, and
the fused sums stay far from a float's limit (a weight of 1e308 overflowed RRF's sum)."""


def _weights_in_range(weights: list[float]) -> bool:
    return all(math.isfinite(w) and 0 <= w <= MAX_WEIGHT for w in weights)


WEIGHTS = Param(
    "weights",
    FLOATS,
    None,
    f"one weight per retriever, each from 0 to {MAX_WEIGHT:,.0f}",
    metavar="W1,W2",
    check=_weights_in_range,
    must=f"finite and >= 0, at most {MAX_WEIGHT:,.0f} each",
)
"""The fused retrievers' weights (rrf and fuse's wsum)."""
DEPTH = Param(
    "depth",
    int,
    DEFAULT_DEPTH,
    "how deep each base is read",
    cli=False,
    check=lambda v: 1 <= v <= MAX_DEPTH,
    must=f"a whole number from 1 to {MAX_DEPTH:,}",
)
"""How deep each base's ranking is read (stored, never given on the command line)."""

HUGE_EXPONENT = 500
"""Scores of a base beyond 2**500 are scaled down to it by a power of two when their
fusion overflowed (:func:`_excess`): the normalizations' sums, differences and squares
of such scores reach inf or nan."""


class _Fusion:
    """What every fusion kind shares: no index, one question's base rankings at a time."""

    batch_size = 1

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Nothing to index: fusion reads cached rankings."""

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Fuse each question's base rankings."""
        return [self.fuse(b, depth) for b in base]

    def fuse(self, rankings: Mapping[str, Ranking], depth: int) -> Ranking:
        """The fused ranking of one question."""
        raise NotImplementedError


class RRFRetriever(_Fusion):
    """Fuses the rankings of the retrievers in ``of``."""

    PARAMS: tuple[Param, ...] = (
        OF,
        Param(
            "k",
            float,
            DEFAULT_RRF_K,
            "the rank offset",
            check=finite_at_least(0),
            must="a number >= 0",
        ),
        WEIGHTS,
        DEPTH,
    )
    """The parameters of the ``rrf`` kind."""

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate ``of``, ``k`` and ``weights``."""
        self.spec = spec
        p = resolve(self.PARAMS, spec.params, "rrf")
        self.bases = tuple(param_list(p["of"], "rrf --of"))
        if len(set(self.bases)) != len(self.bases):
            raise BadInput("rrf --of names a retriever twice; use --weights to favour one")
        self.k: float = p["k"]
        self.fuse_depth: int = p["depth"]
        self.base_depth: int | None = self.fuse_depth
        weights = p["weights"]
        self.weights = tuple(weights) if weights is not None else (1.0,) * len(self.bases)
        if len(self.weights) != len(self.bases):
            raise BadInput(f"rrf has {len(self.bases)} retrievers but {len(self.weights)} weights")

    def fuse(self, rankings: Mapping[str, Ranking], depth: int) -> Ranking:
        """The fused ranking of one question."""
        parts: dict[str, list[float]] = {}
        for name, weight in zip(self.bases, self.weights, strict=True):
            ids, _ = rankings.get(name, ([], []))
            for rank, doc in enumerate(ids[: self.fuse_depth], start=1):
                parts.setdefault(doc, []).append(weight / (self.k + rank))
        if not parts:
            return [], []
        docs = list(parts)
        raw = np.array([math.fsum(parts[d]) for d in docs], dtype=np.float64)
        scores = canonical_scores(raw)
        return trec_order({d: float(s) for d, s in zip(docs, scores, strict=True) if s > 0}, depth)


# -- score fusion (ranx's normalizations and CombSUM / CombMNZ / weighted sum) ---------------


def _min_max(s: FloatArray) -> FloatArray:
    """``(s - min) / max(max - min, 1e-9)`` (ranx ``min-max``)."""
    lo = float(s.min())
    return (s - lo) / max(float(s.max()) - lo, 1e-9)


def _max(s: FloatArray) -> FloatArray:
    """``s / max(max, 1e-9)`` (ranx ``max``)."""
    return s / max(float(s.max()), 1e-9)


def _sum(s: FloatArray) -> FloatArray:
    """``(s - min) / max(sum - n * min, 1e-9)`` (ranx ``sum``: shifted to 0, summing to 1)."""
    lo = float(s.min())
    return (s - lo) / max(float(s.sum()) - lo * s.size, 1e-9)


def _zmuv(s: FloatArray) -> FloatArray:
    """``(s - mean) / max(std, 1e-9)``: the z-score (ranx ``zmuv``, zero mean unit variance).

    ``std`` is the population standard deviation (numpy's default, as in ranx).
    """
    return (s - float(np.mean(s))) / max(float(np.std(s)), 1e-9)


def _none(s: FloatArray) -> FloatArray:
    """The scores as they are (ranx ``norm=None``)."""
    return s


def _excess(scores: Sequence[float] | FloatArray) -> int:
    """By how many powers of two these scores must be scaled down (0 for most).

    The normalizations give the same values for scores scaled by a power of two (exact
    on a float; ``max`` of scores all below zero divides by its floor, 1e-9, and keeps
    their order), so a ranking whose scores pass 2**:data:`HUGE_EXPONENT` (±1.7e308 from
    an engine, say) fuses to the same ranking where its sums and squares overflowed.
    """
    if not len(scores):
        return 0
    biggest = float(np.max(np.abs(np.asarray(scores, dtype=np.float64))))
    return max(0, math.frexp(biggest)[1] - HUGE_EXPONENT) if math.isfinite(biggest) else 0


NORMS: dict[str, Callable[[FloatArray], FloatArray]] = {
    "min-max": _min_max,
    "max": _max,
    "sum": _sum,
    "zmuv": _zmuv,
    "none": _none,
}
"""Score normalizations, applied to each base's ranking of one question (its top
``depth`` documents) before fusion, as ranx defines them (``ranx/normalization``)."""

FUSE_METHODS = ("sum", "mnz", "wsum")
"""``sum``: CombSUM, Σ s_i(d); ``mnz``: CombMNZ, |{i : d in run i}| · Σ s_i(d) (Fox & Shaw,
TREC-2 1993); ``wsum``: Σ w_i s_i(d). A base that did not rank ``d`` adds 0 (ranx
``fusion/comb_sum.py``, ``comb_mnz.py``, ``wsum.py``)."""


class FuseRetriever(_Fusion):
    """Fuses the normalized scores of the retrievers in ``of`` (ranx ``fuse``).

    ``score(d) = M(d) · Σ_i w_i · norm_i(d)`` over the bases that ranked ``d``, where
    ``norm_i`` is the chosen normalization (:data:`NORMS`) of base i's scores for this
    question, ``w_i`` = 1 unless ``method`` is ``wsum``, and ``M(d)`` is the number of
    bases that ranked ``d`` for ``mnz`` (else 1). Every document some base ranked is a
    candidate, whatever its fused score (a z-score may be negative). Scores are rounded
    like every ranking's and ordered the trec_eval way (score descending, then doc id
    descending), so ``ranx.fuse(runs, norm, method)`` on the same cached rankings gives the
    same scores and, ties aside, the same order.
    """

    PARAMS: tuple[Param, ...] = (
        OF,
        Param(
            "method",
            str,
            "wsum",
            "how normalized scores are combined: sum (CombSUM), mnz (CombMNZ), wsum (weighted sum)",
            choices=FUSE_METHODS,
        ),
        Param(
            "norm",
            str,
            "min-max",
            "how each base's scores are normalized first (zmuv: the z-score)",
            choices=tuple(NORMS),
        ),
        WEIGHTS,
        DEPTH,
    )
    """The parameters of the ``fuse`` kind (``weights`` only with ``--method wsum``)."""

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the bases, method, normalization and weights."""
        self.spec = spec
        p = resolve(self.PARAMS, spec.params, "fuse")
        self.bases = tuple(param_list(p["of"], "fuse --of"))
        if len(self.bases) < 2:
            raise BadInput("fuse --of names at least two retrievers")
        if len(set(self.bases)) != len(self.bases):
            raise BadInput("fuse --of names a retriever twice; use --weights to favour one")
        self.method: str = p["method"]
        self.norm: Callable[[FloatArray], FloatArray] = NORMS[p["norm"]]
        self.fuse_depth: int = p["depth"]
        self.base_depth: int | None = self.fuse_depth
        weights = p["weights"]
        if weights is not None and self.method != "wsum":
            raise BadInput(f"fuse --weights go with --method wsum, not {self.method}")
        self.weights = tuple(weights) if weights is not None else (1.0,) * len(self.bases)
        if len(self.weights) != len(self.bases):
            raise BadInput(f"fuse has {len(self.bases)} retrievers but {len(self.weights)} weights")

    def fuse(self, rankings: Mapping[str, Ranking], depth: int) -> Ranking:
        """The fused ranking of one question.

        Computed as ranx computes it. Scores so large that a sum, a difference or a square
        overflows (±1.7e308 from an engine) are fused again with each base's scores scaled
        down by a power of two (:func:`_excess`), which the normalizations do not see
        (``none``'s scores are all scaled by one power): the ranking stays the one exact
        arithmetic gives, its scores finite.
        """
        read = [
            (weight, *rankings.get(name, ([], [])))
            for name, weight in zip(self.bases, self.weights, strict=True)
        ]
        with np.errstate(over="ignore", invalid="ignore"):
            docs, raw = self._combined(read, {})
            if not np.isfinite(raw).all():
                shifts = {
                    i: _excess(scores[: self.fuse_depth]) for i, (_, _, scores) in enumerate(read)
                }
                if self.norm is _none:  # summed as they are: one scale for every base
                    shifts = dict.fromkeys(shifts, max(shifts.values(), default=0))
                docs, raw = self._combined(read, shifts)
        if not docs:
            return [], []
        fused = canonical_scores(raw)
        return trec_order(dict(zip(docs, fused.tolist(), strict=True)), depth)

    def _combined(
        self, read: Sequence[tuple[float, Sequence[str], Sequence[float]]], shifts: dict[int, int]
    ) -> tuple[list[str], FloatArray]:
        """The documents and their fused scores, base i's scores scaled by 2**-shifts[i]."""
        total: dict[str, float] = {}
        hits: dict[str, int] = {}
        for i, (weight, ids_read, scores) in enumerate(read):
            ids = list(ids_read[: self.fuse_depth])
            if not ids:
                continue
            given = np.asarray(scores[: len(ids)], dtype=np.float64)
            shift = shifts.get(i, 0)
            normed = self.norm(np.ldexp(given, -shift) if shift else given)
            # summed base by base, as ranx does, so the float sums agree too
            for doc, s in zip(ids, normed.tolist(), strict=True):
                total[doc] = total.get(doc, 0.0) + weight * s
                hits[doc] = hits.get(doc, 0) + 1
        docs = list(total)
        raw = np.array([total[d] for d in docs], dtype=np.float64)
        if self.method == "mnz":
            raw *= np.array([hits[d] for d in docs], dtype=np.float64)
        return docs, raw
