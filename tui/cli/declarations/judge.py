"""``goldpan judge``."""

from __future__ import annotations

import argparse

from engine.grades import GRADE_RANGE
from engine.types import TIMEOUT_RANGE
from tui.cli import values
from tui.cli.command import CliCommand

KINDS = ("dense", "cross-encoder", "command")


def _options(s: argparse.ArgumentParser) -> None:
    from engine.names import MODEL_PREFIX  # not at import: engine.names loads difflib

    what = s.add_argument_group("the judge")
    what.add_argument(
        "--model",
        metavar="NAME_OR_PATH",
        help="a local sentence-transformers model: its folder, or a name already in the "
        "local cache (nothing is downloaded)",
    )
    what.add_argument(
        "--kind",
        choices=KINDS,
        help="dense: the cosine of a bi-encoder's embeddings (the default with --model); "
        "cross-encoder: a CrossEncoder's score; command: your own judge (--command)",
    )
    what.add_argument(
        "--command",
        metavar='"CMD"',
        help='your own judge: reads JSON lines {"question_id", "question", "doc_id", '
        f'"title", "text"}} on stdin, prints one grade {GRADE_RANGE} per line (or '
        '{"grade": N}), in order',
    )
    what.add_argument(
        "--annotator",
        metavar=f"{MODEL_PREFIX}NAME",
        help=f"the judge's name on its grades (default: {MODEL_PREFIX} and the model's folder "
        f"name, {MODEL_PREFIX}command for a command); alone, runs that stored judge again",
    )
    what.add_argument(
        "--fields",
        metavar="FIELDS",
        help="document fields a model reads: text, title or title,text (default title,text)",
    )
    what.add_argument(
        "--timeout",
        type=values.finite(*TIMEOUT_RANGE),
        metavar="SECONDS",
        help="a command judge's time for the whole run, from "
        f"{TIMEOUT_RANGE[0]:g} to {TIMEOUT_RANGE[1]:,.0f} seconds (default 3600)",
    )
    run = s.add_argument_group("what is judged, and how scores become grades")
    run.add_argument(
        "--questions", nargs="+", metavar="QID", help="only these questions (default: all)"
    )
    run.add_argument(
        "--thresholds",
        type=values.finite_list,
        metavar="T1,T2,T3",
        help="the least score of grades 1, 2 and 3, instead of calibrating on people's grades",
    )
    card = s.add_argument_group(
        "the report card (--report): can this judge's grades stand in for people's?"
    )
    card.add_argument(
        "--report",
        action="store_true",
        help="kappa against people (bootstrap interval, base rates), a command judge asked "
        "twice, the retrievers' ranking (Kendall tau) with the judge filling the holes, and "
        "a warning when the judge is a pooled retriever's model; of the judge --annotator "
        "names (default: the only one); nothing is written",
    )
    card.add_argument(
        "--keep",
        type=values.finite_list,
        metavar="PERCENTS",
        help="shares of people's judgments kept, the judge grading the rest "
        "(default 0,10,25,50,100)",
    )
    card.add_argument(
        "--repeats",
        type=values.whole(1, 1000),
        metavar="N",
        help="seeded draws of each share between 0 and 100%% (default 10)",
    )
    card.add_argument(
        "--samples",
        type=values.samples,
        metavar="N",
        help="kappa's bootstrap resamples (default 1000)",
    )
    card.add_argument("--seed", type=values.seed, default=0, help="draws and resamples (default 0)")
    card.add_argument(
        "--consistency",
        type=values.whole(0, 1_000_000),
        metavar="N",
        help="pairs a trusted command judge is asked twice (default 200; 0: not asked)",
    )
    other = s.add_argument_group("other actions")
    other.add_argument(
        "--remove",
        metavar=f"{MODEL_PREFIX}NAME",
        help="remove that model judge and every grade it gave",
    )
    other.add_argument("--list", action="store_true", help="the model judges and their calibration")
    run.add_argument(
        "--no-pool",
        action="store_true",
        help="judge the cached candidates as they are (default: stale rankings are pooled first)",
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar")


COMMAND = CliCommand(
    "judge",
    "a local model (or your own command) grades the pooled candidates, never as gold",
    "A model judge grades each question's candidates (every retriever's top 10 and what "
    "people graded) as its own annotator model:NAME: a local sentence-transformers model "
    "(dense or cross-encoder; nothing is downloaded), its scores turned into grades "
    f"{GRADE_RANGE} by thresholds fitted on the grades people gave (the table shows, per "
    "grade, the score range and how many of their grades agree; too few grades are refused "
    "unless --thresholds is given), or your own command (JSON lines in, a grade per line "
    "out; run only once trusted: typed here, it is). The grades never become gold by "
    "themselves: Adjudicate shows them beside the people, for a person to adopt. --json "
    'prints {"annotator", "kind", "model", "questions", "grades", "counts", "unpooled", '
    '"calibration": {"thresholds", "fitted", "items", "questions", "people", "kappa", '
    '"held_out_kappa", "folds", "grades": [{"grade", "low", "high", "never", "people", '
    '"agree"}]}}. --report prints the judge\'s report card instead (see the --report '
    'options; --json: {"annotator", "kind", "model", "kappa": {"value", "ci95", '
    '"items", "questions", "base_rate": {"people", "judge"}, "grades", "samples", "seed"}, '
    '"self_consistency": {"asked", "reason", "pairs", "same_grade", "kappa", "how"}, '
    '"scored_questions", "ranking": [{"metric", "people", "judge_alone", "kept": [{"kept", '
    '"repeats", "tau_mean", "tau_min", "tau_max", "taus"}]}], "circular": [{"retriever", '
    '"via", "metric", "rank_people", "rank_judge"}], "warnings"}).',
    run="judge:cmd_judge",
    options=_options,
    json=True,
    see="[Model judges](model-judges.md)",
)
