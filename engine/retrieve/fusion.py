"""Reciprocal rank fusion of other retrievers' cached rankings.

``score(d) = sum_i w_i / (k + rank_i(d))`` over the fused rankings that contain ``d``
(Cormack, Clarke & Büttcher, SIGIR 2009; ranx ``fuse(method="rrf")`` with ``k = 60`` and
unit weights; trectools ``reciprocal_rank_fusion``). Ranks are 1-based positions in each
base's cached ranking, which is already in trec_eval order, so ties inside a base are
broken the trec_eval way before fusion. Each base is read to a fixed depth (``depth``,
100 by default) whatever the pool depth, so a fused ranking never depends on how deep its
bases happened to be cached. Fused scores are rounded like every ranking's
(:func:`engine.retrieve.bm25.canonical_scores`): documents at mirrored ranks tie exactly
and go in doc id descending order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engine.errors import BadInput
from engine.retrieve.base import DEFAULT_DEPTH, PrepareEnv, Ranking, param_list, trec_order
from engine.retrieve.bm25 import canonical_scores
from engine.retrieve.params import FLOATS, OF, Param, default_of
from engine.types import Doc, Question, RetrieverSpec

DEFAULT_RRF_K = 60.0


class RRFRetriever:
    """Fuses the rankings of the retrievers in ``of``."""

    PARAMS: tuple[Param, ...] = (
        OF,
        Param("k", float, DEFAULT_RRF_K, "the rank offset"),
        Param("weights", FLOATS, None, "one weight per retriever", metavar="W1,W2"),
        Param("depth", int, DEFAULT_DEPTH, "how deep each base is read", cli=False),
    )
    """The parameters of the ``rrf`` kind."""

    batch_size = 1

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
