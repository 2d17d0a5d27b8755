"""Is retriever A really better than B on these questions? Paired statistics.

On a few dozen questions a difference of means alone misleads. For two retrievers scored
on the same questions (one value per question and metric) this module gives:

* **win / tie / loss**: questions where A's value is higher / equal / lower than B's;
* a **paired bootstrap** 95% percentile interval of mean(A) - mean(B) (Efron & Tibshirani
  1993): questions are resampled with replacement, ``samples`` times, with a seeded
  :class:`numpy.random.Generator`. The resamples depend only on the number of questions
  and the seed, so every retriever and metric is resampled the same way;
* a **paired randomization test** (Fisher's sign-flip test, Smucker et al. 2007): each
  question's difference is kept or negated at random; the two-sided p-value is
  ``(#{|mean flipped| >= |observed|} + 1) / (samples + 1)``, never 0.

Resamples are drawn in chunks and turned into counts per question, so a chunk's means
are one matrix product: 10,000 resamples of 5,000 questions take a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt

from engine.metrics import mean

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

    def to_json(self) -> dict[str, object]:
        """Plain JSON types (the interval as a list)."""
        out = asdict(self)
        out["ci95"] = list(self.ci95)
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
    """The percentile interval (numpy's default linear interpolation)."""
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


def randomization_p(diffs: FloatArray, samples: int = DEFAULT_SAMPLES, seed: int = 0) -> float:
    """Two-sided paired sign-flip p-value of the mean difference."""
    d = np.asarray(diffs, dtype=np.float64)
    n = d.size
    if n == 0:
        return 1.0
    observed = abs(float(d.mean()))
    rng = np.random.default_rng(seed)
    extreme = 0
    done = 0
    # a tolerance so that flips reproducing the observed mean exactly count as extreme
    tol = 1e-12 * max(1.0, observed)
    while done < samples:
        rows = min(CHUNK, samples - done)
        signs = rng.integers(0, 2, size=(rows, n)).astype(np.float64) * 2 - 1
        stats = np.abs(signs @ d / n)
        extreme += int((stats >= observed - tol).sum())
        done += rows
    return (extreme + 1) / (samples + 1)


def question_wins(
    question_ids: Sequence[str], a: FloatArray, b: FloatArray
) -> tuple[list[str], list[str]]:
    """The questions A wins and the questions B wins (strictly higher value)."""
    a_wins = [q for q, x, y in zip(question_ids, a, b, strict=True) if x > y]
    b_wins = [q for q, x, y in zip(question_ids, a, b, strict=True) if y > x]
    return a_wins, b_wins


def compare(
    a_name: str,
    b_name: str,
    metric: str,
    a: FloatArray,
    b: FloatArray,
    *,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
) -> Comparison:
    """Compare per-question values of A and B (same questions, same order)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    diffs = paired_diffs(a, b)
    means = bootstrap_means(diffs, samples, seed)[:, 0]
    lo, hi = percentile_interval(means) if a.size else (0.0, 0.0)
    return Comparison(
        a=a_name,
        b=b_name,
        metric=metric,
        n=int(a.size),
        mean_a=mean(a),
        mean_b=mean(b),
        diff=mean(diffs),
        ci95=(lo, hi),
        wins=int((a > b).sum()),
        ties=int((a == b).sum()),
        losses=int((a < b).sum()),
        p_value=randomization_p(diffs, samples, seed),
    )


def paired_diffs(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """A − B per question (the same questions, in the same order)."""
    va = np.asarray(a, dtype=np.float64)
    vb = np.asarray(b, dtype=np.float64)
    if va.shape != vb.shape:
        raise ValueError("A and B must be scored on the same questions")
    return va - vb
