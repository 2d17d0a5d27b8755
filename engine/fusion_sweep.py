"""An honest sweep of a two-retriever fusion's weight (and RRF's k).

Tuning hybrid weights on a few dozen questions overfits: the best cell of a grid is the
best partly by luck. This sweep therefore reports, beside each setting's metric,

* the paired bootstrap 95% interval of (setting − the better single retriever), on the
  same resamples for every setting (:func:`engine.compare.bootstrap_means`);
* a **held-out** figure: the questions are split into ``folds`` seeded folds; for each
  fold the setting (and the better single retriever) is picked on the other folds and
  scored on this one. Every question is thus scored by a setting chosen without it; the
  mean of those values is what tuning would really buy, and its paired interval against
  the single retriever picked the same way says whether it buys anything;
* a warning, in words, when the best setting is not reliably better than its neighbours
  in the grid (their paired interval includes 0): the peak is then noise.

Settings: weights ``(w, 1 − w)`` for the two bases, ``w`` from the grid; fused either as
a weighted sum of normalized scores (the ``fuse`` kind, ``--norm``) or, when RRF offsets
``k`` are given, as weighted RRF (the ``rrf`` kind). Nothing is stored: each setting
fuses the bases' cached rankings again.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from engine.compare import DEFAULT_SAMPLES, Comparison, bootstrap_means, compare
from engine.errors import BadInput
from engine.metrics import DEFAULT_METRIC, judge, mean, parse_metric, per_question
from engine.retrieve import DEFAULT_DEPTH, Ranking
from engine.retrieve.fusion import NORMS, FuseRetriever, RRFRetriever
from engine.retrieve.runner import select_retrievers
from engine.scoring import scored_set
from engine.types import RetrieverSpec
from engine.workspace import Workspace

DEFAULT_WEIGHTS = tuple(i / 10 for i in range(11))
"""The default grid of the first retriever's weight (the second's is 1 − w)."""
DEFAULT_FOLDS = 5
"""How many seeded folds the held-out figure uses."""

DEFAULT_NORM = "min-max"
"""How a score fusion's bases are normalized when no ``norm`` is named (:data:`NORMS`)."""


@dataclass(frozen=True)
class FusionSetting:
    """One setting of the grid and its metric on all the scored questions."""

    weights: tuple[float, float]
    k: float | None
    """RRF's rank offset (None: a weighted sum of normalized scores)."""
    value: float
    diff: float
    """value − the better single retriever's."""
    ci95: tuple[float, float]
    """Paired bootstrap 95% interval of ``diff``."""

    def label(self) -> str:
        """``w=0.7`` or ``w=0.7 k=60``."""
        return f"w={self.weights[0]:g}" + ("" if self.k is None else f" k={self.k:g}")


@dataclass(frozen=True)
class Neighbour:
    """The best setting against one of its neighbours in the grid."""

    setting: str
    diff: float
    """best − neighbour."""
    ci95: tuple[float, float]


@dataclass(frozen=True)
class FusionSweep:
    """A weight (x k) grid with its held-out figure (the ``sweep --fusion --json`` shape)."""

    bases: tuple[str, str]
    metric: str
    method: str
    """``wsum`` (with :attr:`norm`) or ``rrf``."""
    norm: str | None
    n: int
    """Scored questions."""
    single: str
    """The better of the two bases on all the questions."""
    single_value: float
    settings: list[FusionSetting]
    best: int
    """Index of the best setting on all the questions (the tuned figure)."""
    folds: int
    seed: int
    picks: list[str]
    """The setting each fold picked on the other folds."""
    held_out: float
    """Mean over the questions of the value of the setting picked without them."""
    held_out_single: float
    """The same for the single retriever picked on the other folds."""
    held_out_vs_single: Comparison
    neighbours: list[Neighbour] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def tuned(self) -> float:
        """The best setting's metric on the questions it was picked on (optimistic)."""
        return self.settings[self.best].value

    def to_json(self) -> dict[str, object]:
        """Plain JSON types."""
        out = asdict(self)
        out["settings"] = [
            {**asdict(s), "weights": list(s.weights), "ci95": list(s.ci95)} for s in self.settings
        ]
        out["bases"] = list(self.bases)
        out["tuned"] = self.tuned
        out["held_out_vs_single"] = self.held_out_vs_single.to_json()
        out["neighbours"] = [{**asdict(nb), "ci95": list(nb.ci95)} for nb in self.neighbours]
        return out


def _folds(n: int, folds: int, seed: int) -> np.ndarray:
    """Each question's fold: a seeded permutation dealt round-robin (sizes differ by <= 1)."""
    order = np.random.default_rng(seed).permutation(n)
    out = np.empty(n, dtype=np.int64)
    out[order] = np.arange(n) % folds
    return out


def _pick(values: np.ndarray, rows: np.ndarray) -> int:
    """The column with the highest mean over ``rows`` (the first of equals: grid order)."""
    means = [math.fsum(values[rows, c]) for c in range(values.shape[1])]
    return int(np.argmax(means))


def fusion_sweep(
    ws: Workspace,
    bases: Sequence[str],
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    ks: Sequence[float] | None = None,
    *,
    norm: str = DEFAULT_NORM,
    metric: str = DEFAULT_METRIC,
    tag: str | None = None,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    samples: int = DEFAULT_SAMPLES,
) -> FusionSweep:
    """Sweep the fusion of two retrievers' cached rankings over a weight (x k) grid.

    Raises:
        BadInput: not two retrievers, a weight outside [0, 1], a bad k, too few questions
            for the folds.
    """
    if len(bases) != 2 or bases[0] == bases[1]:
        raise BadInput("sweep --fusion names two different retrievers (A,B)")
    a, b = bases
    select_retrievers(ws, [a, b])
    if not weights or any(not (math.isfinite(w) and 0 <= w <= 1) for w in weights):
        raise BadInput("sweep --weights: the first retriever's weights, each between 0 and 1")
    if ks is not None and (not ks or any(not (math.isfinite(k) and k >= 0) for k in ks)):
        raise BadInput("sweep --k: RRF offsets, each a number >= 0")
    if norm not in NORMS:
        raise BadInput(f"sweep --norm {norm!r}: known values: {', '.join(NORMS)}")
    if folds < 2:
        raise BadInput("sweep --folds must be at least 2 (a held-out fold needs a tuning one)")
    m = parse_metric(metric)
    scope = scored_set(ws, [a, b], tag)
    golds, scored = scope.golds, scope.question_ids
    if len(scored) < folds:
        raise BadInput(
            f"{len(scored)} scored questions cannot make {folds} folds: label more or lower --folds"
        )
    runs = {name: ws.runs(name, scored) for name in (a, b)}
    base_rankings: list[Mapping[str, Ranking]] = [
        {
            name: (list(r.doc_ids), list(r.scores))
            for name in (a, b)
            if (r := runs[name].get(q)) is not None
        }
        for q in scored
    ]
    gold = [golds[q].qrels for q in scored]

    def values(rankings: Sequence[Sequence[str]]) -> np.ndarray:
        return np.asarray(per_question(judge(rankings, gold), m), dtype=np.float64)

    singles = np.column_stack(
        [values([list(br.get(name, ([], []))[0]) for br in base_rankings]) for name in (a, b)]
    )
    k_axis: list[float | None] = [None] if ks is None else [float(k) for k in ks]
    grid = [(float(w), k) for w in weights for k in k_axis]
    columns = []
    for w, k in grid:
        pair = [w, 1.0 - w]
        if k is None:
            params = {"of": [a, b], "method": "wsum", "norm": norm, "weights": pair}
            fuser: FuseRetriever | RRFRetriever = FuseRetriever(
                RetrieverSpec("sweep", "fuse", params)
            )
        else:
            fuser = RRFRetriever(
                RetrieverSpec("sweep", "rrf", {"of": [a, b], "k": k, "weights": pair})
            )
        columns.append(values([fuser.fuse(br, DEFAULT_DEPTH)[0] for br in base_rankings]))
    table = np.column_stack(columns)
    n = len(scored)
    every = np.arange(n)
    best_single = _pick(singles, every)
    single_name = (a, b)[best_single]
    means = bootstrap_means(table - singles[:, [best_single]], samples, seed)
    lo, hi = np.percentile(means, [2.5, 97.5], axis=0)
    settings = [
        FusionSetting(
            (w, 1.0 - w),
            k,
            mean(table[:, c]),
            mean(table[:, c] - singles[:, best_single]),
            (float(lo[c]), float(hi[c])),
        )
        for c, (w, k) in enumerate(grid)
    ]
    best = _pick(table, every)

    fold_of = _folds(n, folds, seed)
    held = np.empty(n)
    held_single = np.empty(n)
    picks = []
    for f in range(folds):
        test, train = every[fold_of == f], every[fold_of != f]
        chosen = _pick(table, train)
        picks.append(settings[chosen].label())
        held[test] = table[test, chosen]
        held_single[test] = singles[test, _pick(singles, train)]
    vs_single = compare(
        "tuned fusion (held out)",
        "single retriever (held out)",
        m.name,
        held,
        held_single,
        samples=samples,
        seed=seed,
    )

    # the best setting against its neighbours in the grid (weight and k axes)
    n_k = len(ks) if ks is not None else 1
    wi, ki = divmod(best, n_k)
    near = [
        (wi + dw) * n_k + (ki + dk)
        for dw, dk in ((-1, 0), (1, 0), (0, -1), (0, 1))
        if 0 <= wi + dw < len(weights) and 0 <= ki + dk < n_k
    ]
    neighbours: list[Neighbour] = []
    if near:
        diffs = table[:, [best]] - table[:, near]
        nb_means = bootstrap_means(diffs, samples, seed)
        nlo, nhi = np.percentile(nb_means, [2.5, 97.5], axis=0)
        for i, c in enumerate(near):
            neighbours.append(
                Neighbour(settings[c].label(), mean(diffs[:, i]), (float(nlo[i]), float(nhi[i])))
            )
    sweep = FusionSweep(
        bases=(a, b),
        metric=m.name,
        method="wsum" if ks is None else "rrf",
        norm=norm if ks is None else None,
        n=n,
        single=single_name,
        single_value=mean(singles[:, best_single]),
        settings=settings,
        best=best,
        folds=folds,
        seed=seed,
        picks=picks,
        held_out=mean(held),
        held_out_single=mean(held_single),
        held_out_vs_single=vs_single,
        neighbours=neighbours,
    )
    sweep.warnings.extend(_warnings(sweep))
    return sweep


def _ci(lo_hi: Sequence[float]) -> str:
    return f"95% CI {lo_hi[0]:+.3f} to {lo_hi[1]:+.3f}"


def _warnings(s: FusionSweep) -> list[str]:
    """What a reader must not conclude from the grid, in words."""
    out = []
    best = s.settings[s.best]
    close = [nb for nb in s.neighbours if nb.ci95[0] <= 0]
    if close:
        names = ", ".join(f"{nb.setting} ({nb.diff:+.3f}, {_ci(nb.ci95)})" for nb in close)
        out.append(
            f"the best setting ({best.label()}) is not reliably better than its "
            f"neighbour{'s' if len(close) > 1 else ''} {names} on {s.n} questions: the peak "
            "is within the noise; prefer a round setting in that range to the exact peak"
        )
    lo, hi = s.held_out_vs_single.ci95
    if lo <= 0:
        out.append(
            f"on held-out questions the tuned fusion is not reliably better than the single "
            f"retriever ({s.held_out_vs_single.diff:+.3f}, {_ci((lo, hi))})"
        )
    if len(set(s.picks)) > 1:
        out.append(
            f"the folds picked different settings ({', '.join(dict.fromkeys(s.picks))}): "
            "the best setting depends on which questions it is tuned on"
        )
    gap = s.tuned - s.held_out
    if gap > 0:
        out.append(
            f"the tuned figure ({s.tuned:.3f}) is {gap:.3f} above the held-out one "
            f"({s.held_out:.3f}): that much of it is the tuning fitting these questions"
        )
    return out
