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
from engine.retrieve.params import FLOATS, OF, Param, default_of, resolve
from engine.types import Doc, Question, RetrieverSpec

FloatArray = npt.NDArray[np.float64]

DEFAULT_RRF_K = 60.0


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
        Param("k", float, DEFAULT_RRF_K, "the rank offset"),
        Param("weights", FLOATS, None, "one weight per retriever", metavar="W1,W2"),
        Param("depth", int, DEFAULT_DEPTH, "how deep each base is read", cli=False),
    )
    """The parameters of the ``rrf`` kind."""

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate ``of``, ``k`` and ``weights``."""
        self.spec = spec
        p = spec.params
        self.bases = tuple(param_list(p.get("of"), "rrf --of"))
        if len(set(self.bases)) != len(self.bases):
            raise BadInput("rrf --of names a retriever twice; use --weights to favour one")
        self.k = float(p.get("k", default_of(self.PARAMS, "k")))
        if not math.isfinite(self.k) or self.k < 0:
            raise BadInput(f"rrf k must be a number >= 0, not {p.get('k')!r}")
        self.fuse_depth = int(p.get("depth", default_of(self.PARAMS, "depth")))
        if self.fuse_depth < 1:
            raise BadInput("rrf depth (how deep each base is read) must be at least 1")
        self.base_depth: int | None = self.fuse_depth
        weights = p.get("weights")
        if weights is None:
            self.weights = tuple(1.0 for _ in self.bases)
        else:
            try:
                self.weights = tuple(float(w) for w in weights)
            except (TypeError, ValueError):
                raise BadInput(f"rrf weights must be numbers, not {weights!r}") from None
            if len(self.weights) != len(self.bases):
                raise BadInput(
                    f"rrf has {len(self.bases)} retrievers but {len(self.weights)} weights"
                )
            if any(not math.isfinite(w) or w < 0 for w in self.weights):
                raise BadInput("rrf weights must be finite and >= 0")

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
        Param("weights", FLOATS, None, "one weight per retriever", metavar="W1,W2"),
        Param("depth", int, DEFAULT_DEPTH, "how deep each base is read", cli=False),
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
        if self.fuse_depth < 1:
            raise BadInput("fuse depth (how deep each base is read) must be at least 1")
        self.base_depth: int | None = self.fuse_depth
        weights = p["weights"]
        if weights is not None and self.method != "wsum":
            raise BadInput(f"fuse --weights go with --method wsum, not {self.method}")
        self.weights = tuple(weights) if weights is not None else (1.0,) * len(self.bases)
        if len(self.weights) != len(self.bases):
            raise BadInput(f"fuse has {len(self.bases)} retrievers but {len(self.weights)} weights")
        if any(not math.isfinite(w) or w < 0 for w in self.weights):
            raise BadInput("fuse weights must be finite and >= 0")

    def fuse(self, rankings: Mapping[str, Ranking], depth: int) -> Ranking:
        """The fused ranking of one question."""
        total: dict[str, float] = {}
        hits: dict[str, int] = {}
        for name, weight in zip(self.bases, self.weights, strict=True):
            ids, scores = rankings.get(name, ([], []))
            ids = list(ids[: self.fuse_depth])
            if not ids:
                continue
            normed = self.norm(np.asarray(scores[: len(ids)], dtype=np.float64))
            # summed base by base, as ranx does, so the float sums agree too
            for doc, s in zip(ids, normed.tolist(), strict=True):
                total[doc] = total.get(doc, 0.0) + weight * s
                hits[doc] = hits.get(doc, 0) + 1
        if not total:
            return [], []
        docs = list(total)
        raw = np.array([total[d] for d in docs], dtype=np.float64)
        if self.method == "mnz":
            raw *= np.array([hits[d] for d in docs], dtype=np.float64)
        fused = canonical_scores(raw)
        return trec_order(dict(zip(docs, fused.tolist(), strict=True)), depth)
