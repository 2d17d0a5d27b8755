"""The paired bootstrap: 10,000 resamples of 5,000 questions for 8 retrievers at once.

Run from the repository root::

    python benchmarks/bench_compare.py
    python benchmarks/bench_compare.py --questions 5000 --retrievers 8 --samples 10000 --repeat 3

What is measured, on a ``questions x retrievers`` matrix of random per-question values
(uniform in [0, 1), seeded):

(a) goldpan: ``engine.analysis.compare.bootstrap_means(values, samples, seed=0)``, the means of
    every column over every resample (resamples drawn in chunks, turned into per-question
    counts, one matrix product per chunk).
(b) the naive reference, measured in the same run: one resample at a time, an index
    vector ``rng.integers(0, n, n)`` and a numpy gather ``values[idx].mean(axis=0)``
    (all retrievers of a resample in one gather; a different random stream). This is the
    textbook loop; scipy.stats.bootstrap is not used.

Each side runs ``--repeat`` times; the best time is reported. The two give different
resamples, so their 95% percentile intervals of each column agree only to Monte Carlo
error; the largest gap is printed as a sanity check. Target: goldpan under 1 s.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from engine.analysis.compare import CHUNK, bootstrap_means

TARGET_SECONDS = 1.0


def naive_bootstrap(values: np.ndarray, samples: int, seed: int) -> np.ndarray:
    """Index-gather per resample: the straightforward reference."""
    rng = np.random.default_rng(seed)
    n = values.shape[0]
    out = np.empty((samples, values.shape[1]))
    for i in range(samples):
        out[i] = values[rng.integers(0, n, size=n)].mean(axis=0)
    return out


def best_of(repeat: int, fn, *args) -> tuple[float, np.ndarray]:
    times = []
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn(*args)
        times.append(time.perf_counter() - t0)
    assert result is not None
    return min(times), result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--questions", type=int, default=5000)
    p.add_argument("--retrievers", type=int, default=8)
    p.add_argument("--samples", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()

    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"{platform.machine()} ({platform.processor() or 'unknown cpu'})"
    )
    print(
        f"{args.samples:,} resamples x {args.questions:,} questions x {args.retrievers} "
        f"retrievers (chunks of {CHUNK}), best of {args.repeat}"
    )
    values = np.random.default_rng(42).random((args.questions, args.retrievers))

    bootstrap_means(values[:50], 10, 0)  # warm up imports and BLAS threads
    fast, got = best_of(args.repeat, bootstrap_means, values, args.samples, 0)
    slow, ref = best_of(args.repeat, naive_bootstrap, values, args.samples, 1)

    lo_g, hi_g = np.percentile(got, [2.5, 97.5], axis=0)
    lo_r, hi_r = np.percentile(ref, [2.5, 97.5], axis=0)
    gap = float(max(np.abs(lo_g - lo_r).max(), np.abs(hi_g - hi_r).max()))
    width = float(np.mean(hi_g - lo_g))

    print(f"goldpan bootstrap_means:        {fast:8.3f} s")
    print(f"naive index-gather per resample: {slow:8.3f} s")
    print(f"ratio (naive / goldpan):         {slow / fast:8.1f} x")
    print(
        f"95% intervals: mean width {width:.5f}, largest endpoint gap between the two "
        f"{gap:.5f} (Monte Carlo error only)"
    )
    met = "met" if fast < TARGET_SECONDS else "NOT met"
    print(f"target goldpan < {TARGET_SECONDS:g} s: {met}")


if __name__ == "__main__":
    main()
