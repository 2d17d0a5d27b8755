"""Is retriever A really better than B on these questions? Paired statistics.

On a few dozen questions a difference of means alone misleads. For two retrievers scored
on the same questions (one value per question and metric) this module gives:

* **win / tie / loss**: questions where A's value is higher / equal (up to rounding,
  :data:`engine.verdict.TIE`) / lower than B's; wins and losses are the
  **discordant** questions;
* a **paired bootstrap** 95% percentile interval of mean(A) - mean(B) (Efron & Tibshirani
  1993): questions are resampled with replacement, ``samples`` times, with a seeded
  :class:`numpy.random.Generator`. The resamples depend only on the number of questions
  and the seed, so every retriever and metric is resampled the same way;
* a **paired randomization test** (Fisher's sign-flip test, Smucker et al. 2007): each
  question's difference is kept or negated at random; the two-sided p-value is
  ``(#{|mean flipped| >= |observed|} + 1) / (samples + 1)``, never 0. The flips, too,
  are the same for every column tested together;
* the **verdict** (:mod:`engine.verdict`): real only when both tests agree, and no
  verdict at all on too few discordant questions.

Resamples are drawn in chunks and turned into counts per question, so a chunk's means
are one matrix product: 10,000 resamples of 5,000 questions take a fraction of a second.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from engine.errors import BadInput
from engine.metrics import mean
from engine.verdict import LEVEL, TIE, Verdict, check_level, decide

FloatArray = npt.NDArray[np.float64]

DEFAULT_SAMPLES = 10_000
CHUNK = 500


@dataclass(frozen=True)
class Comparison:
    """A paired comparison of two retrievers on one metric (the ``--json`` shape)."""

    a: str
    b: str
    metric: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci95: tuple[float, float]
    wins: int
    ties: int
    losses: int
    p_value: float
    verdict: Verdict
    """Whether the difference is real (:mod:`engine.verdict`), at its own level."""

    def to_json(self) -> dict[str, object]:
        """Plain JSON types (the interval as a list, the verdict under its stable names)."""
        out: dict[str, object] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["ci95"] = list(self.ci95)
        out["verdict"] = self.verdict.to_json(self.a, self.b)
        return out


def _resample_counts(rng: np.random.Generator, rows: int, n: int) -> FloatArray:
    """``rows`` bootstrap resamples of ``n`` questions, as draw counts per question."""
    idx = rng.integers(0, n, size=(rows, n))
    idx += (np.arange(rows) * n)[:, None]
    counts = np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n)
    return counts.astype(np.float64)


def bootstrap_means(
    values: FloatArray, samples: int = DEFAULT_SAMPLES, seed: int = 0
) -> FloatArray:
    """Means of every column of ``values`` (questions x columns) over bootstrap resamples.

    Returns a ``samples x columns`` matrix. Resample ``i`` is the same for every column
    and depends only on the seed and the number of questions.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        v = v[:, None]
    n = v.shape[0]
    out = np.empty((samples, v.shape[1]))
    if n == 0:
        out.fill(0.0)
        return out
    rng = np.random.default_rng(seed)
    done = 0
    while done < samples:
        rows = min(CHUNK, samples - done)
        counts = _resample_counts(rng, rows, n)
        out[done : done + rows] = counts @ v / n
        done += rows
    return out


def percentile_interval(means: FloatArray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval covering ``level`` (numpy's default linear interpolation)."""
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


def randomization_ps(
    diffs: FloatArray, samples: int = DEFAULT_SAMPLES, seed: int = 0
) -> FloatArray:
    """Two-sided paired sign-flip p-values of the mean of every column of ``diffs``.

    Flip ``i`` is the same for every column and depends only on the seed and the number
    of questions (as the bootstrap's resamples). A chunk's flips are random bytes
    (``rng.integers(0, 256, size=(rows, ceil(n / 8)), dtype=uint8)``) unpacked into bits,
    big-endian: bit ``j`` of a row keeps question ``j``'s difference (1) or negates it
    (0). A flipped sum is ``2 * (kept differences) - (all differences)``: a third of the
    time of drawing a whole integer per sign and multiplying by ±1.
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    n = d.shape[0]
    if n == 0:
        return np.ones(d.shape[1])
    observed = np.abs(d.mean(axis=0))
    # a tolerance so that flips reproducing the observed mean exactly count as extreme
    floor = observed - 1e-12 * np.maximum(1.0, observed)
    total = d.sum(axis=0)
    rng = np.random.default_rng(seed)
    extreme = np.zeros(d.shape[1], dtype=np.int64)
    done = 0
    while done < samples:
        rows = min(CHUNK, samples - done)
        packed = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
        kept = np.unpackbits(packed, axis=1, count=n).astype(np.float64)
        stats = np.abs((2 * (kept @ d) - total) / n)
        extreme += (stats >= floor).sum(axis=0)
        done += rows
    return (extreme + 1) / (samples + 1)


def question_wins(
    question_ids: Sequence[str], a: FloatArray, b: FloatArray
) -> tuple[list[str], list[str]]:
    """The questions A wins and the questions B wins (higher by more than rounding)."""
    up, down = _signs(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    a_wins = [q for q, w in zip(question_ids, up, strict=True) if w]
    b_wins = [q for q, w in zip(question_ids, down, strict=True) if w]
    return a_wins, b_wins


def discordant(a: npt.ArrayLike, b: npt.ArrayLike) -> int:
    """How many questions A and B differ on (more than rounding: :data:`TIE`)."""
    up, down = _signs(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return int((up | down).sum())


def _signs(a: FloatArray, b: FloatArray) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Where A is higher and where B is higher, ties (:data:`TIE`) in neither."""
    d = a - b
    tie = np.abs(d) <= TIE * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return (d > 0) & ~tie, (d < 0) & ~tie


@dataclass(frozen=True)
class PairedTests:
    """Both paired tests of several columns of A − B, on shared resamples and flips."""

    n: int
    """Paired questions."""
    means: FloatArray
    """Bootstrap means of A − B, ``samples x columns``."""
    p_values: FloatArray
    """The sign-flip test's p-value per column."""
    discordant: npt.NDArray[np.int64]
    """Questions where A and B differ, per column."""

    def interval(self, column: int, level: float = LEVEL) -> tuple[float, float]:
        """The ``1 - level`` percentile interval of the column's mean difference."""
        if self.n == 0:
            return (0.0, 0.0)
        return percentile_interval(self.means[:, column], 1 - level)

    def verdict(self, column: int, level: float = LEVEL) -> Verdict:
        """The column's verdict at ``level`` (:func:`engine.verdict.decide`)."""
        return decide(
            self.n,
            int(self.discordant[column]),
            float(self.p_values[column]),
            self.interval(column, level),
            level,
        )


def _columns(values: npt.ArrayLike, side: str) -> FloatArray:
    v = np.asarray(values, dtype=np.float64)
    v = v[:, None] if v.ndim == 1 else v
    bad = np.argwhere(~np.isfinite(v))
    if bad.size:
        row = int(bad[0][0])
        raise BadInput(
            f"{side}'s value of question #{row + 1} is {float(v[tuple(bad[0])])!r}: paired "
            "values must be finite numbers"
        )
    with np.errstate(over="ignore"):
        total = np.abs(v).sum(axis=0)
    if not np.isfinite(total).all():
        raise BadInput(
            f"{side}'s values are so large that their sum is beyond a float's range: paired "
            "values must have a finite mean"
        )
    return v


def paired_tests(
    a: npt.ArrayLike, b: npt.ArrayLike, *, samples: int = DEFAULT_SAMPLES, seed: int = 0
) -> PairedTests:
    """Bootstrap and sign-flip tests of A − B, per column (same questions, same order).

    ``a`` and ``b`` are one value per question, or questions x columns; every column is
    resampled and flipped the same way. Values of any finite size are tested (differences
    past 1 are scaled by a power of two, which is exact, so that no resampled sum
    overflows).

    Raises:
        BadInput: a value or a difference that is not a finite number.
    """
    va, vb = _columns(a, "A"), _columns(b, "B")
    if va.shape != vb.shape:
        raise ValueError("A and B must be scored on the same questions")
    with np.errstate(over="ignore", invalid="ignore"):
        d = va - vb
        total = np.abs(d).sum(axis=0)
    if not np.isfinite(total).all():
        raise BadInput(
            "A − B is too large: a difference, or their sum, is beyond a float's range; "
            "paired values must differ by a finite mean"
        )
    up, down = _signs(va, vb)
    largest = float(np.abs(d).max()) if d.size else 0.0
    # a power of two: |d / scale| < 2 (2 ** ceil(log2) of a value past 2 ** 1023 overflows)
    scale = 1.0 if largest <= 1.0 else math.ldexp(1.0, math.frexp(largest)[1] - 1)
    return PairedTests(
        n=int(d.shape[0]),
        means=bootstrap_means(d / scale, samples, seed) * scale,
        p_values=randomization_ps(d / scale, samples, seed),
        discordant=(up | down).sum(axis=0),
    )


def verdict_of(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    level: float = LEVEL,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
) -> Verdict:
    """Whether A's and B's paired values (same questions, same order) differ for real.

    The one call for any front end that has two lists of values: ``verdict_of(a, b).real``.

    Raises:
        BadInput: a level outside (0, 1), too few resamples to reach it, or values that
            are not finite numbers.
    """
    check_level(level, samples)
    return paired_tests(a, b, samples=samples, seed=seed).verdict(0, level)


def compare(
    a_name: str,
    b_name: str,
    metric: str,
    a: FloatArray,
    b: FloatArray,
    *,
    level: float = LEVEL,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
) -> Comparison:
    """Compare per-question values of A and B (same questions, same order).

    Raises:
        BadInput: as :func:`verdict_of`.
    """
    check_level(level, samples)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    tests = paired_tests(a, b, samples=samples, seed=seed)
    up, down = _signs(a, b)
    return Comparison(
        a=a_name,
        b=b_name,
        metric=metric,
        n=int(a.size),
        mean_a=mean(a),
        mean_b=mean(b),
        diff=mean(a - b),
        ci95=tests.interval(0),
        wins=int(up.sum()),
        ties=int(a.size - up.sum() - down.sum()),
        losses=int(down.sum()),
        p_value=float(tests.p_values[0]),
        verdict=tests.verdict(0, level),
    )


def paired_diffs(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """A − B per question (the same questions, in the same order)."""
    va = np.asarray(a, dtype=np.float64)
    vb = np.asarray(b, dtype=np.float64)
    if va.shape != vb.shape:
        raise ValueError("A and B must be scored on the same questions")
    return va - vb
