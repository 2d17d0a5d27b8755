"""Circularity: the pooled retrievers built on a judge's own model or command.

A judge grading the rankings of its own model favours them; :func:`circular_retrievers`
finds the retrievers that use the judge's model or command (themselves, or through a
base they read), and :class:`Circular` is the report card's line for one of them
(:mod:`engine.judges.report`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.judges.run import default_annotator
from engine.retrieve import bases_of
from engine.trust import COMMAND_KIND
from engine.types import ModelJudge, RetrieverSpec

MODEL_PARAMS = ("model", "embed_model")
"""A retriever's parameters that name a model."""


@dataclass(frozen=True)
class Circular:
    """A pooled retriever built on the judge's own model."""

    retriever: str
    via: str
    """The retriever that uses the model (itself, or a base it reads)."""
    metric: str
    rank_people: int
    """Its place among the retrievers under people's judgments (1 = best)."""
    rank_judge: int
    """Its place under the judge's grades alone."""

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape."""
        return {
            "retriever": self.retriever,
            "via": self.via,
            "metric": self.metric,
            "rank_people": self.rank_people,
            "rank_judge": self.rank_judge,
        }


def model_key(model: str) -> str:
    """A model's name for comparing: its folder's name (as judges are named), lowercased."""
    return default_annotator("dense", model).removeprefix("model:").lower()


def circular_retrievers(judge: ModelJudge, specs: Sequence[RetrieverSpec]) -> dict[str, str]:
    """Retriever -> the retriever through which it uses the judge's own model or command."""
    by_name = {s.name: s for s in specs}

    def own(spec: RetrieverSpec) -> bool:
        if judge.kind == COMMAND_KIND:
            return spec.kind == COMMAND_KIND and spec.params.get("command") == judge.model
        names = [str(spec.params[p]) for p in MODEL_PARAMS if spec.params.get(p)]
        same_path = any(_same_path(n, judge.model) for n in names)
        return same_path or any(model_key(n) == model_key(judge.model) for n in names)

    def via(name: str, seen: frozenset[str]) -> str | None:
        spec = by_name.get(name)
        if spec is None or name in seen:
            return None
        if own(spec):
            return name
        for base in bases_of(spec):
            found = via(base, seen | {name})
            if found is not None:
                return found
        return None

    out = {}
    for s in specs:
        found = via(s.name, frozenset())
        if found is not None:
            out[s.name] = found
    return out


def _same_path(a: str, b: str) -> bool:
    pa, pb = Path(a), Path(b)
    try:
        return pa.exists() and pb.exists() and pa.resolve() == pb.resolve()
    except OSError:
        return False
