"""``goldpan sweep``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from tui.cli import values
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    from engine.analysis.analyses import SWEEP_B, SWEEP_K1
    from engine.analysis.compare import DEFAULT_SAMPLES
    from engine.analysis.fusion_sweep import DEFAULT_FOLDS, DEFAULT_NORM, DEFAULT_WEIGHTS
    from engine.metrics import DEFAULT_METRIC, METRIC_FAMILIES
    from engine.retrieve.fusion import NORMS

    def listed(grid: Sequence[float]) -> str:
        return ",".join(str(v) for v in grid)

    weights = f"{DEFAULT_WEIGHTS[0]:g},{DEFAULT_WEIGHTS[1]:g},...,{DEFAULT_WEIGHTS[-1]:g}"
    s.add_argument("--retriever", metavar="NAME", help="the BM25 retriever of a k1 x b grid")
    s.add_argument("--k1", metavar="LIST", help=f"k1 values (default: {listed(SWEEP_K1)})")
    s.add_argument("--b", metavar="LIST", help=f"b values (default: {listed(SWEEP_B)})")
    s.add_argument(
        "--fusion",
        metavar="A,B",
        help="sweep the fusion of these two retrievers instead (weights w and 1 - w)",
    )
    s.add_argument(
        "--weights", metavar="GRID", help=f"--fusion: A's weights in [0, 1] (default: {weights})"
    )
    s.add_argument(
        "--k", metavar="GRID", help="--fusion: RRF offsets; fuse by weighted RRF, not by score"
    )
    s.add_argument(
        "--norm",
        choices=list(NORMS),
        help=f"--fusion without --k: how scores are normalized (default: {DEFAULT_NORM})",
    )
    s.add_argument(
        "--folds",
        type=values.whole(2, 1_000),
        default=DEFAULT_FOLDS,
        help="--fusion: seeded folds; each is scored by the setting picked on the others",
    )
    s.add_argument(
        "--samples", type=values.samples, default=DEFAULT_SAMPLES, help="--fusion: resamples"
    )
    s.add_argument("--seed", type=values.seed, default=0, help="--fusion: folds and resamples")
    s.add_argument("--metric", default=DEFAULT_METRIC, help=", ".join(METRIC_FAMILIES))
    s.add_argument("--tag", help="only questions with this tag")


COMMAND = CliCommand(
    "sweep",
    "a BM25 retriever's metric over a k1 x b grid, or a fusion's weights held out",
    "A BM25 retriever's metric over a k1 x b grid (--retriever); the cell at its own "
    "parameters equals `goldpan score` (a check: the best cell on a few questions overfits). "
    "Or, with --fusion A,B, the fusion of two retrievers over A's weight w (B's is 1 - w; a "
    "weighted sum of normalized scores, or weighted RRF over --k): each setting's metric with"
    " its paired bootstrap interval and verdict against the better single retriever, a "
    "held-out figure and warnings in words; the best setting is named only with 5 scored "
    'questions per fold. --json prints {"retriever", "metric", "grid": [{"k1", "b", '
    '"value"}], "note"}.',
    see="[Tuning a hybrid honestly](retrievers.md#tuning-a-hybrid-honestly)",
    run="scores:cmd_sweep",
    options=_options,
    json=True,
)
