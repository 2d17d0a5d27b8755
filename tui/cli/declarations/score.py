"""``goldpan score``, with its regression gate (``--against``) and CI options."""

from __future__ import annotations

import argparse

from tui.cli import values
from tui.cli.command import CliCommand

GATE_HELP = """\
which rankings a gate scores:
  A command retriever runs the team's own code, which can change while its inputs do not:
  its rankings are made again on every score unless it was added with --cache-key-files
  PATH... or --cache-key-command CMD (then cached while those are unchanged). Built-in
  retrievers are cached while their inputs (corpus, question, parameters) are unchanged;
  --refresh ranks every retriever again. score says on stderr, per retriever, which it
  was: "mysearch: ranked now (command, no cache key)", "bm25-word: cached, inputs
  unchanged" (--json: the "rankings" key).
  A gate (--fail-under, --fail-on-regression) never passes on what it did not compare:
  it exits 2, naming why, when it covers a retriever which did not run here (its command
  is not trusted on this machine; a read-only workspace or --no-pool, for code that can
  change): trust it in the job (`goldpan trust WS --yes`) or give the code on the
  command line with --run / --run-command. A question not ranked yet for its inputs now
  is left out of every score and not compared. It exits 2
  too over no scored question (--fail-under), for a retriever with no question scored
  both in the snapshot and now, a snapshot retriever the workspace no longer has, and a
  name (--run/--run-command NAME, --retriever, a floor's) with nothing to compare. A
  fusion of a ranking --run replaces is fused again from it; a reranker of one exits 2.
"""


def _options(s: argparse.ArgumentParser) -> None:
    from engine.analysis.compare import DEFAULT_SAMPLES
    from engine.ci.holes import DEFAULT_MIN_JUDGED
    from engine.metrics import METRIC_FAMILIES
    from engine.scoring import DEFAULT_KS

    s.add_argument(
        "--k",
        default=",".join(str(k) for k in DEFAULT_KS),
        help="cutoffs for Hit@k and Recall@k",
    )
    s.add_argument(
        "--metric",
        action="append",
        metavar="M",
        help=f"also report M (repeatable): {', '.join(METRIC_FAMILIES)}, e.g. p@5 or mrr@10",
    )
    s.add_argument("--tag", help="only questions with this tag")
    s.add_argument("--retriever", action="append", metavar="NAME", help="repeatable; default all")
    s.add_argument(
        "--fail-under",
        action="append",
        metavar="[RETRIEVER:]METRIC=VALUE",
        help="exit 1 when a metric is below VALUE (repeatable)",
    )
    s.add_argument(
        "--min-judged",
        type=values.finite(0, 1),
        default=DEFAULT_MIN_JUDGED,
        metavar="SHARE",
        help='warn (stderr, and --json "warnings") when a retriever\'s Judged@10, the '
        "share of its top 10 a person judged, is below SHARE on the compared questions: "
        f"its scores are unknown, not worse (default {DEFAULT_MIN_JUDGED:g}; 0: never)",
    )
    s.add_argument("--no-pool", action="store_true", help="do not refresh stale rankings")
    s.add_argument("--quiet", action="store_true", help="no progress bar")

    g = s.add_argument_group("regression gate")
    g.add_argument(
        "--against",
        metavar="NAME_OR_FILE",
        help="compare with a snapshot (its name in WS, or a file from `snapshot export`)",
    )
    g.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="with --against: exit 1 when a question's first-gold rank got worse",
    )
    g.add_argument(
        "--tolerance",
        type=values.tolerance,
        metavar="RANKS",
        help="with --fail-on-regression: allow this many ranks worse (default 0); a lost "
        "gold is always a regression",
    )
    g.add_argument(
        "--samples",
        type=values.samples,
        default=DEFAULT_SAMPLES,
        help="bootstrap resamples and sign flips (--against)",
    )

    g = s.add_argument_group("the code under test (stored nowhere; the workspace is only read)")
    g.add_argument(
        "--run",
        action="append",
        metavar="FILE[=NAME]",
        help="score a TREC run file made by the CI job, as retriever NAME (default: the "
        "file's stem); repeatable. With --run or --run-command only these (and the "
        "--retriever ones) are scored; a NAME the workspace has is replaced for this score",
    )
    g.add_argument(
        "--run-command",
        action="append",
        metavar='"CMD"[=NAME]',
        help="run CMD now as a command retriever would be (JSON lines in, a TREC run out; "
        "trusted because you typed it), as retriever NAME (default: command); repeatable. "
        "The text after the last '=' is the name when it has no spaces: a command that "
        "ends in an =VALUE argument needs an explicit =NAME",
    )
    g.add_argument(
        "--refresh",
        action="store_true",
        help="rank every question again with every retriever, cached or not",
    )
    r = s.add_argument_group("CI reports")
    r.add_argument(
        "--junit-xml",
        metavar="PATH",
        help="JUnit XML, one test case per question and retriever that ran "
        "(RETRIEVER::QUESTION_ID), failed when it regressed against --against (else: no "
        "gold in the top --k), skipped when not compared; a case per floor; a refused gate "
        "is an error case (goldpan::gate)",
    )
    r.add_argument(
        "--markdown",
        metavar="PATH",
        help="a Markdown summary (metric table, failed questions); '-' for stdout "
        "(instead of the table), e.g. >> $GITHUB_STEP_SUMMARY",
    )
    r.add_argument(
        "--force",
        action="store_true",
        help="replace an existing --junit-xml or --markdown file (a symbolic link there is "
        "replaced itself, never written through)",
    )


COMMAND = CliCommand(
    "score",
    "Hit@k, MRR, Recall@k, nDCG@10 per retriever",
    "Score every retriever on the resolved gold: Hit@k, MRR, Recall@k, nDCG@10 (and any "
    "--metric), the time of one question ranked alone (ms p50, ms p95) and the pool's "
    "throughput (q/s), with the counts of scored, not ranked yet, no-answer, disputed, need "
    "re-check and unlabeled questions; then how complete the gold is under each retriever: "
    "Judged@10 (the share of its top 10 a person judged), bpref, and MRR and nDCG@10 over "
    "the judged documents only (judged:mrr, judged:ndcg@10), with a warning when Judged@10 "
    "is under --min-judged. A question a retriever will rank (goldpan pool) but has not yet "
    "is left out of every retriever's means; a retriever that cannot rank now (never ranked "
    "here, not trusted on this machine, failed) holds none out and has no means (-) while "
    "it lacks a scored question. --metric adds any metric goldpan knows (an unknown one is "
    "refused, exit 2) to the table and the JSON, and --fail-under can gate on it. --json "
    'prints {"questions": {"scored", "not_ranked", "no_answer", "disputed", "recheck", '
    '"unlabeled"}, "retrievers": {NAME: {METRIC: mean, "not_ranked", "ms_p50", "ms_p95", '
    '"ms_max", "timed_alone", "questions_per_s"}}, "warnings": [{"warning": "unjudged", '
    '"retriever", "judged@10", "min_judged", "questions", "scores": "unknown", "message"}]} '
    "(null: not measured, or no means; --against has the same warnings). Exit 1 when a "
    "--fail-under floor is missed (a warning never fails); 2 when it covers a retriever "
    "without means. With --against: per "
    "retriever, each metric then / now / difference with a paired bootstrap 95% interval, "
    "a randomization p-value and the verdict (the same rule as compare's), and the "
    "questions whose first-gold rank got worse or better (both ranks, the document that now "
    "ranks first, and whether the retriever or the labels changed).",
    run="scores:cmd_score",
    options=_options,
    json=True,
    epilog=GATE_HELP,
    see="[Latency](numbers.md#latency), [Use goldpan in CI](ci.md), "
    "[Judged metrics](judged-metrics.md)",
)
