"""The ``goldpan`` console script: the engine's jobs from a terminal or a CI job.

Exit codes: 0 done; 1 a ``--fail-under`` floor was missed; 2 bad input or usage (the
message names the file, the line and what was expected; the workspace is unchanged).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from rich.text import Text

from engine import __version__
from engine.formats import EXPORT_FORMATS
from engine.ingest import (
    DOC_FORMATS,
    IngestError,
)
from engine.retrieve import DEFAULT_DEPTH, RetrieverError
from engine.types import VERDICTS
from engine.workspace import WorkspaceError
from tui.commands.common import DEMO_PATH, GateFailed, UsageError, err
from tui.commands.retriever_options import add_retriever_options, kinds_summary
from tui.commands.scores import (
    cmd_compare,
    cmd_failures,
    cmd_noanswer,
    cmd_overlap,
    cmd_score,
    cmd_sweep,
)
from tui.commands.team import (
    cmd_agreement,
    cmd_label,
    cmd_merge,
    cmd_queue,
    cmd_verdict,
)
from tui.commands.workspace import (
    cmd_demo,
    cmd_export,
    cmd_import,
    cmd_info,
    cmd_new,
    cmd_open,
    cmd_pool,
    cmd_retriever,
)
from tui.literal import literal


def _command(
    sub: Any,
    name: str,
    help_text: str,
    func: Callable[[argparse.Namespace], None],
    *,
    workspace: bool = True,
    json_flag: bool = False,
) -> argparse.ArgumentParser:
    """A subcommand that takes the workspace first and, optionally, ``--json``."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
    if workspace:
        parser.add_argument("workspace", metavar="WS")
    if json_flag:
        parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=func)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    p = argparse.ArgumentParser(
        prog="goldpan",
        description="Make retrieval test sets that are hard and honest, and score "
        "retrievers on them.",
    )
    p.add_argument("--version", action="version", version=f"goldpan {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = _command(sub, "new", "create a workspace with the default BM25 retrievers", cmd_new)

    imp = sub.add_parser(
        "import", help="import docs, questions, qrels, runs, labels, BEIR or SQuAD"
    )
    isub = imp.add_subparsers(dest="what", required=True, metavar="WHAT")
    s = isub.add_parser("docs", help="a Markdown folder, JSONL (BEIR corpus shape) or CSV")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s.add_argument("--format", choices=DOC_FORMATS, default="auto")
    s = isub.add_parser(
        "questions", help="JSONL or CSV: id, text, tags; optional gold (doc:grade ...), no_answer"
    )
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s.add_argument("--annotator", default="import", help="whose labels the gold becomes")
    s = isub.add_parser("run", help="a TREC run file as an external retriever's rankings")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="FILE")
    s.add_argument("--name", required=True, help="the retriever's name")
    s.add_argument("--replace", action="store_true", help="replace an imported run of that name")
    s = isub.add_parser("qrels", help="TREC qrels or a BEIR qrels TSV, as one annotator's labels")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s.add_argument("--annotator", default="import")
    s = isub.add_parser("labels", help="CSV question_id,doc_id,annotator,grade")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s = isub.add_parser("verdicts", help="CSV question_id,annotator,verdict,note")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s = isub.add_parser("beir", help="a BEIR folder: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="DIR")
    s.add_argument("--split", default="test")
    s.add_argument("--annotator", default="import")
    s = isub.add_parser("squad", help="SQuAD 1.1 JSON (e.g. KorQuAD); source doc = gold")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="FILE")
    s.add_argument("--level", choices=("article", "paragraph"), default="article")
    s.add_argument("--annotator", default="import")
    imp.set_defaults(func=cmd_import)

    s = _command(sub, "pool", "run retrievers over every question and cache rankings", cmd_pool)
    s.add_argument("--retriever", action="append", metavar="NAME", help="repeatable; default all")
    s.add_argument("--depth", type=int, default=DEFAULT_DEPTH)
    s.add_argument("--force", action="store_true", help="run again even when cached")
    s.add_argument("--quiet", action="store_true", help="no progress bar")

    r = sub.add_parser("retriever", help="add, list or remove retrievers")
    rsub = r.add_subparsers(dest="action", required=True, metavar="ACTION")
    s = rsub.add_parser("list", help="the configured retrievers")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("--json", action="store_true")
    s = rsub.add_parser(
        "add",
        help="add a retriever",
        description=kinds_summary() + " Imported run files are added by `goldpan import run`.",
    )
    s.add_argument("workspace", metavar="WS")
    s.add_argument("name", metavar="NAME")
    add_retriever_options(s)
    s = rsub.add_parser("remove", help="remove a retriever and its cached rankings")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("name", metavar="NAME")
    r.set_defaults(func=cmd_retriever)

    s = _command(
        sub, "score", "Hit@k, MRR, Recall@k, nDCG@10 per retriever", cmd_score, json_flag=True
    )
    s.add_argument("--k", default="1,3,5,10", help="cutoffs for Hit@k and Recall@k")
    s.add_argument("--tag", help="only questions with this tag")
    s.add_argument("--retriever", action="append", metavar="NAME", help="repeatable; default all")
    s.add_argument(
        "--fail-under",
        action="append",
        metavar="[RETRIEVER:]METRIC=VALUE",
        help="exit 1 when a metric is below VALUE (repeatable)",
    )
    s.add_argument("--no-pool", action="store_true", help="do not refresh stale rankings")
    s.add_argument("--quiet", action="store_true", help="no progress bar")

    s = _command(
        sub, "label", "grade a document for a question (0-3), as the judge keys do", cmd_label
    )
    s.add_argument("question", metavar="QID")
    s.add_argument("doc", metavar="DOC")
    s.add_argument("grade", type=int, metavar="GRADE")
    s.add_argument("--annotator", help="default: $GOLDPAN_ANNOTATOR or your login")

    s = _command(
        sub, "verdict", "answerable, no_answer, ambiguous or skip for a question", cmd_verdict
    )
    s.add_argument("question", metavar="QID")
    s.add_argument("verdict", choices=VERDICTS)
    s.add_argument("--note", default="")
    s.add_argument("--annotator", help="default: $GOLDPAN_ANNOTATOR or your login")

    s = sub.add_parser("merge", help="merge separately labeled workspaces (same corpus)")
    s.add_argument("out", metavar="OUT", help="the merged workspace (created when missing)")
    s.add_argument("inputs", nargs="+", metavar="IN")
    s.set_defaults(func=cmd_merge)

    s = _command(
        sub,
        "agreement",
        "inter-annotator agreement: kappa, alpha, verdicts",
        cmd_agreement,
        json_flag=True,
    )

    s = _command(
        sub, "queue", "what to judge next; coverage@k of each retriever", cmd_queue, json_flag=True
    )
    s.add_argument("--k", type=int, default=10, help="pool depth per retriever (default 10)")

    s = _command(
        sub,
        "compare",
        "paired comparison of two retrievers (bootstrap, p-value)",
        cmd_compare,
        json_flag=True,
    )
    s.add_argument("a", metavar="A")
    s.add_argument("b", metavar="B")
    s.add_argument("--metric", default="mrr", help="mrr, hit@k, recall@k, ndcg@k, p@k")
    s.add_argument("--samples", type=int, default=10_000)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--tag", help="only questions with this tag")

    s = _command(
        sub,
        "failures",
        "questions whose gold is not at rank 1, and what won",
        cmd_failures,
        json_flag=True,
    )
    s.add_argument("--retriever", required=True, metavar="NAME")
    s.add_argument("--tag", help="only questions with this tag")

    s = _command(
        sub,
        "noanswer",
        "calibrate a top-1 score threshold for no-answer",
        cmd_noanswer,
        json_flag=True,
    )
    s.add_argument("--retriever", required=True, metavar="NAME")

    s = _command(
        sub, "sweep", "a BM25 retriever's metric over a k1 x b grid", cmd_sweep, json_flag=True
    )
    s.add_argument("--retriever", required=True, metavar="NAME")
    s.add_argument("--k1", default="0.9,1.2,1.5,2.0", metavar="LIST")
    s.add_argument("--b", default="0.4,0.6,0.75,0.9", metavar="LIST")
    s.add_argument("--metric", default="mrr")
    s.add_argument("--tag", help="only questions with this tag")

    s = _command(
        sub,
        "overlap",
        "each question's overlap with titles and gold text",
        cmd_overlap,
        json_flag=True,
    )

    s = _command(
        sub, "export", "write TREC qrels/runs, labels, questions, a BEIR or ranx folder", cmd_export
    )
    s.add_argument("--format", required=True, choices=EXPORT_FORMATS)
    # OUT is optional but takes no nargs="?": argparse (3.11) would fill such a positional
    # with nothing before the options and then refuse `export WS --format F OUT`.
    s.add_argument("out_pos", metavar="OUT", help="optional: the same as --out").required = False
    s.add_argument("--out", metavar="PATH", help="a file, or a folder for beir and ranx")
    s.add_argument(
        "--retriever", metavar="NAME", help="trec-run, ranx: one retriever (default all)"
    )

    s = _command(sub, "info", "counts, annotators and schema version", cmd_info, json_flag=True)

    s = sub.add_parser("demo", help="build the demo workspace and open it")
    s.add_argument("--path", default=str(DEMO_PATH))
    s.add_argument("--force", action="store_true", help="rebuild it")
    s.add_argument("--no-open", action="store_true", help="print the scores instead of opening")
    s.add_argument("--annotator", help="your name on labels (default: $GOLDPAN_ANNOTATOR or login)")
    s.set_defaults(func=cmd_demo)

    s = _command(sub, "open", "open a workspace in the terminal UI", cmd_open)
    s.add_argument("--annotator", help="your name on labels (default: $GOLDPAN_ANNOTATOR or login)")
    s.add_argument(
        "--read-only",
        action="store_true",
        help="review only: nothing can be changed (automatic when the file or its folder "
        "is not writable)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except GateFailed as exc:
        err.print(literal(f"goldpan: {exc}"))
        return 1
    except (IngestError, WorkspaceError, RetrieverError, UsageError, ValueError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        err.print(literal(f"goldpan: error: {msg}"))
        return 2
    except KeyboardInterrupt:
        err.print(Text("goldpan: interrupted; the workspace keeps what was committed"))
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
