"""An honest sweep of a two-retriever fusion's weight (and RRF's k).

Tuning hybrid weights on a few dozen questions overfits: the best cell of a grid is the
best partly by luck. This sweep therefore reports, beside each setting's metric,

* the paired bootstrap 95% interval of (setting − the better single retriever), and the
  verdict of :mod:`engine.verdict` on it, on the same resamples and sign flips for every
  setting (:func:`engine.analysis.compare.paired_tests`);
* a **held-out** figure: the questions are split into ``folds`` seeded folds; for each
  fold the setting (and the better single retriever) is picked on the other folds and
  scored on this one. Every question is thus scored by a setting chosen without it; the
  mean of those values is what tuning would really buy, and its verdict against the
  single retriever picked the same way says whether it buys anything;
* a warning, in words, when the best setting is not really better than its neighbours
  in the grid (the verdict does not call the difference real): the peak is then noise.

The best setting is a fitted number: it is named (``best``, ``tuned``) only with
:data:`engine.evidence.FUSION_PER_FOLD` scored questions per fold
(:func:`engine.evidence.fusion_setting`); below that the grid and the held-out figure are
shown and a warning says how many more questions are needed.

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

from engine.analysis.compare import DEFAULT_SAMPLES, Comparison, compare, paired_tests
from engine.errors import BadInput
from engine.evidence import Evidence, fusion_setting
from engine.metrics import DEFAULT_METRIC, judge, mean, parse_metric, per_question
from engine.retrieve import DEFAULT_DEPTH, Ranking
from engine.retrieve.fusion import NORMS, FuseRetriever, RRFRetriever
from engine.retrieve.runner import select_retrievers
from engine.scoring import not_scored, scored_set
from engine.types import RetrieverSpec
from engine.verdict import LEVEL, Verdict, check_level
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
    verdict: Verdict
    """Whether the setting differs from the single retriever for real."""

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
    verdict: Verdict
    """Whether the best setting is better than this neighbour for real."""


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
    best: int | None
    """Index of the best setting on all the questions (the tuned figure); None when too
    few questions establish it (:attr:`evidence`)."""
    evidence: Evidence
    """Whether there are enough scored questions to name a tuned setting."""
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
    def tuned(self) -> float | None:
        """The best setting's metric on the questions it was picked on (optimistic)."""
        return None if self.best is None else self.settings[self.best].value

    def to_json(self) -> dict[str, object]:
        """Plain JSON types."""
        out = asdict(self)
        out["settings"] = [
            {
                **asdict(s),
                "weights": list(s.weights),
                "ci95": list(s.ci95),
                "verdict": s.verdict.to_json(s.label(), self.single),
            }
            for s in self.settings
        ]
        out["bases"] = list(self.bases)
        out["tuned"] = self.tuned
        evidence = self.evidence.to_json()
        del out["evidence"]
        out["established"] = evidence["established"]
        out["needs"] = evidence["needs"]
        out["held_out_vs_single"] = self.held_out_vs_single.to_json()
        best = "best" if self.best is None else self.settings[self.best].label()
        out["neighbours"] = [
            {**asdict(nb), "ci95": list(nb.ci95), "verdict": nb.verdict.to_json(best, nb.setting)}
            for nb in self.neighbours
        ]
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
        NotScored: A or B has not ranked some scored question and cannot rank it now.
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
    check_level(LEVEL, samples)
    m = parse_metric(metric)
    scope = scored_set(ws, [a, b], tag)
    golds, scored = scope.golds, scope.question_ids
    for name in (a, b):
        if lacks := scope.lacks(name):
            raise not_scored(name, lacks, "a fusion with it would fuse rankings it never made")
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
    single = np.repeat(singles[:, [best_single]], len(grid), axis=1)
    vs_single_tests = paired_tests(table, single, samples=samples, seed=seed)
    settings = [
        FusionSetting(
            (w, 1.0 - w),
            k,
            mean(table[:, c]),
            mean(table[:, c] - singles[:, best_single]),
            vs_single_tests.interval(c),
            vs_single_tests.verdict(c),
        )
        for c, (w, k) in enumerate(grid)
    ]
    evidence = fusion_setting(folds).check({"scored": n})
    best = _pick(table, every) if evidence.established else None

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

    neighbours = (
        []
        if best is None
        else _neighbours(table, best, settings, len(ks) if ks else 1, samples, seed)
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
        evidence=evidence,
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


def _neighbours(
    table: np.ndarray,
    best: int,
    settings: Sequence[FusionSetting],
    n_k: int,
    samples: int,
    seed: int,
) -> list[Neighbour]:
    """The best setting against its neighbours in the grid (weight and k axes)."""
    wi, ki = divmod(best, n_k)
    n_w = len(settings) // n_k
    near = [
        (wi + dw) * n_k + (ki + dk)
        for dw, dk in ((-1, 0), (1, 0), (0, -1), (0, 1))
        if 0 <= wi + dw < n_w and 0 <= ki + dk < n_k
    ]
    if not near:
        return []
    peak = np.repeat(table[:, [best]], len(near), axis=1)
    tests = paired_tests(peak, table[:, near], samples=samples, seed=seed)
    return [
        Neighbour(
            settings[c].label(),
            mean(table[:, best] - table[:, c]),
            tests.interval(i),
            tests.verdict(i),
        )
        for i, c in enumerate(near)
    ]


def _warnings(s: FusionSweep) -> list[str]:
    """What a reader must not conclude from the grid, in words."""
    out = []
    if s.best is None:
        out.append(f"no tuned setting is named: {s.evidence.says()}")
    else:
        best = s.settings[s.best]
        close = [nb for nb in s.neighbours if not nb.verdict.real]
        if close:
            names = ", ".join(
                f"{nb.setting} ({nb.diff:+.3f}, {nb.verdict.short()})" for nb in close
            )
            out.append(
                f"the best setting ({best.label()}) is not really better than its "
                f"neighbour{'s' if len(close) > 1 else ''} {names} on {s.n} questions: the "
                "peak is within the noise; prefer a round setting in that range to the exact "
                "peak"
            )
    held = s.held_out_vs_single
    if held.verdict.higher != "a":
        said = held.verdict.says("the tuned fusion", "the single retriever")
        out.append(
            "on held-out questions the tuned fusion is not really better than the single "
            f"retriever ({held.diff:+.3f}): {said}"
        )
    if len(set(s.picks)) > 1:
        out.append(
            f"the folds picked different settings ({', '.join(dict.fromkeys(s.picks))}): "
            "the best setting depends on which questions it is tuned on"
        )
    gap = None if s.tuned is None else s.tuned - s.held_out
    if gap is not None and gap > 0:
        out.append(
            f"the tuned figure ({s.tuned:.3f}) is {gap:.3f} above the held-out one "
            f"({s.held_out:.3f}): that much of it is the tuning fitting these questions"
        )
    return out
