"""``goldpan compare``."""

from __future__ import annotations

import argparse

from tui.cli import values
from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
    from engine.analysis.compare import DEFAULT_SAMPLES
    from engine.ci.holes import DEFAULT_MIN_JUDGED
    from engine.metrics import DEFAULT_METRIC, METRIC_FAMILIES
    from engine.verdict import LEVEL

    s.add_argument("a", metavar="A", help="a retriever")
    s.add_argument("b", metavar="B", help="the retriever A is compared with")
    s.add_argument(
        "--metric",
        action="append",
        default=None,
        metavar="M[,M...]",
        help=f"{', '.join(METRIC_FAMILIES)}; several, comma-separated or repeated, "
        f"e.g. mrr,hit@1,hit@5 (default: {DEFAULT_METRIC})",
    )
    s.add_argument(
        "--level",
        type=values.level,
        default=LEVEL,
        help=f"the verdict's two-sided level (default: {LEVEL:g}, a 95%% interval)",
    )
    s.add_argument(
        "--samples",
        type=values.samples,
        default=DEFAULT_SAMPLES,
        help="bootstrap resamples and sign flips",
    )
    s.add_argument("--seed", type=values.seed, default=0, help="the resamples' seed")
    s.add_argument("--tag", help="only questions with this tag")
    s.add_argument(
        "--min-judged",
        type=values.finite(0, 1),
        default=DEFAULT_MIN_JUDGED,
        metavar="SHARE",
        help=f"warn when A's or B's Judged@10 is below SHARE (default {DEFAULT_MIN_JUDGED:g})",
    )
    s.add_argument("--refresh", action="store_true", help="rank A and B again even when cached")


COMMAND = CliCommand(
    "compare",
    "paired comparison of two retrievers (bootstrap, p-value, verdict)",
    "Per metric: win / tie / loss of A against B, both means, the difference with a paired "
    "bootstrap 95% interval (the same seeded resamples for every retriever and metric), a "
    "paired randomization p-value, and the verdict: real only when both tests agree at "
    "--level, and none at all when too few questions differ for any test to reach it (with "
    "k questions that differ no test goes below p = 2^(1-k)); and each one's Judged@10, the "
    "share of its top 10 a person judged, with a warning under --min-judged (its lower "
    "scores are unknown, not worse). --json prints one object per metric (a list for "
    'several): {"a", "b", "metric", "n", "mean_a", "mean_b", "diff", "ci95", "wins", "ties", '
    '"losses", "p_value", "verdict": {"status", "real", "higher", "level", "questions", '
    '"discordant", "least_p", "p_value", "interval", "says"}, "judged@10": {A, B}, '
    '"warnings": [...]}; status is real, not_shown, tests_disagree, too_few_discordant or '
    "no_questions. Refused (exit 2) when A or B has not ranked some scored question and "
    "cannot rank it now (not trusted on this machine, failed).",
    see="[Is a difference real?](numbers.md#is-a-difference-real)",
    run="scores:cmd_compare",
    options=_options,
    json=True,
)
