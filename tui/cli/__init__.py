"""The ``goldpan`` console script: the engine's jobs from a terminal or a CI job.

Exit codes (``goldpan --help`` and the README say the same): 0 done; 1 only for a missed
``--fail-under`` floor or a ``--fail-on-regression`` regression; 2 bad input, usage, or a
workspace that cannot be used (the message names the file and the line, or the table and
row; nothing is written); 3 an internal error (one line, the traceback in a log file). No
traceback ever reaches the terminal.

A command starts fast because it imports only what it uses: building the parser imports
no numpy, scipy, sqlite-utils or Textual; each subcommand is named ``"module:function"``
and its module (:mod:`tui.cli.commands`) is imported when it runs, and those modules
import the engine inside the command functions. ``tests/test_import_hygiene.py`` checks
it, ``benchmarks/bench_cli_start.py`` times it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from typing import Any

from rich.text import Text

from engine import __version__
from engine.errors import GoldpanError
from engine.grades import GRADE_RANGE
from engine.types import VERDICTS
from tui.cli import values
from tui.cli.commands.common import (
    DEMO_PATH,
    EXIT_CODES,
    GateFailed,
    Unusable,
    err,
    write_crash_log,
)
from tui.cli.help import ABOUT
from tui.literal import literal

Command = Callable[[argparse.Namespace], None] | str
"""A subcommand's function, or ``"module:function"`` in :mod:`tui.cli.commands`, imported
only when that subcommand runs (so one command never pays for another's imports)."""

Options = Callable[[argparse.ArgumentParser], None]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose options can be added on first use.

    Its description (what ``--help`` prints above the options) is the command's entry in
    :data:`tui.cli.help.ABOUT`. A subcommand whose options take their defaults or choices
    from the engine's heavier modules (retriever kinds, metrics) adds them in an
    ``options`` function: they are added when that subcommand parses or prints its help,
    so building the parser for any other command imports none of those modules.
    """

    def __init__(self, *args: Any, options: Options | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._options = options
        if self.description is None:
            self.description = ABOUT[self.prog.removeprefix("goldpan").strip()]

    def _add_options(self) -> None:
        if self._options is not None:
            options, self._options = self._options, None
            options(self)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        """Parse, after adding the deferred options."""
        self._add_options()
        return super().parse_known_args(*args, **kwargs)

    def format_usage(self) -> str:
        """The usage line, deferred options included."""
        self._add_options()
        return super().format_usage()

    def format_help(self) -> str:
        """The help text, deferred options included."""
        self._add_options()
        return super().format_help()


def _command(
    sub: Any,
    name: str,
    help_text: str,
    func: Command,
    *,
    workspace: bool = True,
    json_flag: bool = False,
    options: Options | None = None,
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """A subcommand that takes the workspace first and, optionally, ``--json``.

    ``kwargs`` go to the subcommand's parser (``usage``, ``formatter_class``).
    """
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, options=options, **kwargs
    )
    if workspace:
        parser.add_argument("workspace", metavar="WS", help="the workspace file (SQLite)")
    if json_flag:
        parser.add_argument("--json", action="store_true", help="JSON on stdout, not a table")
    parser.set_defaults(func=func)
    return parser


def _replace_labels_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--replace-labels",
        action="store_true",
        help="when a known question's text changed, delete the labels, verdicts and "
        "adjudication made for the old text (default: keep them, marked as needing "
        "re-check and left out of scores)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    p = _Parser(
        prog="goldpan", epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--version", action="version", version=f"goldpan {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = _command(
        sub, "new", "create a workspace with the default BM25 retrievers", "workspace:cmd_new"
    )

    imp = sub.add_parser(
        "import", help="import docs, questions, qrels, runs, labels, BEIR, SQuAD or a query log"
    )
    isub = imp.add_subparsers(dest="what", required=True, metavar="WHAT")
    s = isub.add_parser(
        "docs", help="a Markdown folder, JSONL (BEIR corpus shape) or CSV", options=_docs_options
    )
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s = isub.add_parser(
        "questions", help="JSONL or CSV: id, text, tags; optional gold (doc:grade ...), no_answer"
    )
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="PATH")
    s.add_argument("--annotator", default="import", help="whose labels the gold becomes")
    _replace_labels_flag(s)
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
    _replace_labels_flag(s)
    s = isub.add_parser(
        "squad",
        help="SQuAD 1.1 or 2.0 JSON (e.g. KorQuAD); source doc = gold, is_impossible = no answer",
    )
    s.add_argument("workspace", metavar="WS")
    s.add_argument("path", metavar="FILE")
    s.add_argument("--level", choices=("article", "paragraph"), default="article")
    s.add_argument("--annotator", default="import")
    _replace_labels_flag(s)
    s = isub.add_parser(
        "querylog",
        help="a query log (text, JSONL or CSV: query, count, timestamp): de-duplicate, "
        "sample by frequency band",
        options=_querylog_options,
    )
    s.set_defaults(func="snapshots:cmd_import_querylog")
    imp.set_defaults(func="workspace:cmd_import")

    s = _command(
        sub,
        "pool",
        "run retrievers over every question and cache rankings",
        "workspace:cmd_pool",
        options=_pool_options,
    )

    r = sub.add_parser("retriever", help="add, list or remove retrievers")
    rsub = r.add_subparsers(dest="action", required=True, metavar="ACTION")
    s = rsub.add_parser("list", help="the configured retrievers")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("--json", action="store_true")
    s = rsub.add_parser("add", help="add a retriever", options=_retriever_add_options)
    s = rsub.add_parser("remove", help="remove a retriever and its cached rankings")
    s.add_argument("workspace", metavar="WS")
    s.add_argument("name", metavar="NAME")
    r.set_defaults(func="workspace:cmd_retriever")

    s = _command(
        sub,
        "score",
        "Hit@k, MRR, Recall@k, nDCG@10 per retriever",
        "scores:cmd_score",
        json_flag=True,
        options=_score_options,
    )

    s = _command(
        sub,
        "label",
        f"grade a document for a question ({GRADE_RANGE}), as the judge keys do",
        "team:cmd_label",
    )
    s.add_argument("question", metavar="QID")
    s.add_argument("doc", metavar="DOC")
    s.add_argument("grade", type=int, metavar="GRADE", help=GRADE_RANGE)
    s.add_argument("--annotator", help="default: $GOLDPAN_ANNOTATOR or your login")

    s = _command(
        sub,
        "verdict",
        "answerable, no_answer, ambiguous or skip for a question",
        "team:cmd_verdict",
    )
    s.add_argument("question", metavar="QID")
    s.add_argument("verdict", choices=VERDICTS)
    s.add_argument("--note", default="")
    s.add_argument("--annotator", help="default: $GOLDPAN_ANNOTATOR or your login")

    s = sub.add_parser("merge", help="merge separately labeled workspaces (same corpus)")
    s.add_argument("out", metavar="OUT", help="the merged workspace (created when missing)")
    s.add_argument("inputs", nargs="+", metavar="IN")
    s.set_defaults(func="team:cmd_merge")

    s = _command(
        sub,
        "agreement",
        "inter-annotator agreement: kappa, alpha, verdicts",
        "team:cmd_agreement",
        json_flag=True,
    )

    s = _command(
        sub,
        "queue",
        "what to judge next; coverage@k of each retriever",
        "team:cmd_queue",
        json_flag=True,
        options=_queue_options,
    )

    _command(
        sub,
        "judge",
        "a local model (or your own command) grades the pooled candidates, never as gold",
        "judge:cmd_judge",
        options=_judge_options,
    )

    s = _command(
        sub,
        "compare",
        "paired comparison of two retrievers (bootstrap, p-value)",
        "scores:cmd_compare",
        json_flag=True,
        options=_compare_options,
    )

    s = _command(
        sub,
        "fidelity",
        "how alike two retrievers rank: top-1 agreement, rank correlation, ties",
        "fidelity:cmd_fidelity",
        json_flag=True,
        options=_fidelity_options,
    )

    s = _command(
        sub,
        "failures",
        "questions whose gold is not at rank 1, and what won",
        "scores:cmd_failures",
        json_flag=True,
    )
    s.add_argument("--retriever", required=True, metavar="NAME")
    s.add_argument("--tag", help="only questions with this tag")

    s = _command(
        sub,
        "noanswer",
        "calibrate a top-1 score threshold for no-answer",
        "scores:cmd_noanswer",
        json_flag=True,
    )
    s.add_argument("--retriever", required=True, metavar="NAME")

    s = _command(
        sub,
        "sweep",
        "a BM25 retriever's metric over a k1 x b grid, or a fusion's weights held out",
        "scores:cmd_sweep",
        json_flag=True,
        options=_sweep_options,
    )

    s = _command(
        sub,
        "overlap",
        "each question's overlap with titles and gold text",
        "scores:cmd_overlap",
        json_flag=True,
    )

    s = _command(
        sub,
        "export",
        "write TREC qrels/runs, labels, questions, a BEIR or ranx folder",
        "workspace:cmd_export",
        options=_export_options,
    )

    s = _command(
        sub, "info", "counts, annotators and schema version", "workspace:cmd_info", json_flag=True
    )

    _command(
        sub,
        "check",
        "check a workspace: integrity, foreign keys, schema and rows (exit 2 if damaged)",
        "check:cmd_check",
        json_flag=True,
    )
    _command(
        sub,
        "trust",
        "review what a workspace's retrievers run or send, and trust them",
        "trust:cmd_trust",
        options=_trust_options,
    )

    s = sub.add_parser("demo", help="build the demo workspace and open it")
    s.add_argument("--path", default=str(DEMO_PATH))
    s.add_argument("--force", action="store_true", help="rebuild it")
    s.add_argument("--no-open", action="store_true", help="print the scores instead of opening")
    s.add_argument("--annotator", help="your name on labels (default: $GOLDPAN_ANNOTATOR or login)")
    s.set_defaults(func="app:cmd_demo")

    s = _command(sub, "open", "open a workspace in the terminal UI", "app:cmd_open")
    s.add_argument("--annotator", help="your name on labels (default: $GOLDPAN_ANNOTATOR or login)")
    s.add_argument(
        "--read-only",
        action="store_true",
        help="review only: nothing can be changed (automatic when the file or its folder "
        "is not writable)",
    )

    _command(
        sub,
        "snapshot",
        "store the scores now, to diff against later (save, list, show, remove, export)",
        "snapshots:cmd_snapshot",
        workspace=False,
        options=_snapshot_options,
        usage="goldpan snapshot [save|list|show|remove|export] WS [NAME] [options]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _command(
        sub,
        "power",
        "how many questions are enough: detectable difference and questions needed",
        "snapshots:cmd_power",
        options=_power_options,
    )

    _command(
        sub,
        "serve",
        "serve the app to a team's browsers: one private link per annotator",
        "serve:cmd_serve",
        options=_serve_options,
    )
    return p


# -- options that read the engine's constants (added only when their command runs) -------


def _docs_options(s: argparse.ArgumentParser) -> None:
    from engine.formats.docs import DOC_FORMATS

    s.add_argument("--format", choices=DOC_FORMATS, default="auto")


def _snapshot_options(s: argparse.ArgumentParser) -> None:
    from tui.cli.commands.snapshots import SNAPSHOT_HELP, snapshot_options

    s.epilog = SNAPSHOT_HELP
    snapshot_options(s)


def _power_options(s: argparse.ArgumentParser) -> None:
    from tui.cli.commands.snapshots import power_options

    power_options(s)


def _querylog_options(s: argparse.ArgumentParser) -> None:
    from tui.cli.commands.snapshots import querylog_options

    querylog_options(s)


def _judge_options(s: argparse.ArgumentParser) -> None:
    from tui.cli.commands.judge import add_options

    add_options(s)


def _trust_options(s: argparse.ArgumentParser) -> None:
    from tui.cli.commands.trust import add_options

    add_options(s)


def _serve_options(s: argparse.ArgumentParser) -> None:
    from tui.cli.commands.serve import add_options

    add_options(s)


def _pool_options(s: argparse.ArgumentParser) -> None:
    from engine.pooling import DEFAULT_DEPTH  # not engine.retrieve: it loads numpy and scipy

    s.add_argument("--retriever", action="append", metavar="NAME", help="repeatable; default all")
    s.add_argument(
        "--depth",
        type=values.ranks,
        default=DEFAULT_DEPTH,
        help=f"ranks kept: 1 to {values.MAX_RANKS:,} (default {DEFAULT_DEPTH})",
    )
    s.add_argument("--force", "--refresh", action="store_true", help="run again even when cached")
    s.add_argument("--quiet", action="store_true", help="no progress bar")


def _retriever_add_options(s: argparse.ArgumentParser) -> None:
    # generated from each kind's declared parameters (engine.retrieve.KIND_PARAMS)
    from tui.cli.commands.retriever_options import add_retriever_options, kinds_summary

    s.description = f"{kinds_summary()} {s.description}"
    s.add_argument("workspace", metavar="WS", help="the workspace file (SQLite)")
    s.add_argument("name", metavar="NAME")
    add_retriever_options(s)


def _queue_options(s: argparse.ArgumentParser) -> None:
    from engine.names import MODEL_PREFIX
    from engine.queue import DEFAULT_K

    s.add_argument(
        "--k",
        type=values.ranks,
        default=DEFAULT_K,
        help=f"pool depth per retriever (default {DEFAULT_K})",
    )
    s.add_argument(
        "--model",
        metavar=f"{MODEL_PREFIX}NAME",
        help="also where that model judge and the people disagree most, and what it "
        "graded relevant that nobody judged",
    )


def _compare_options(s: argparse.ArgumentParser) -> None:
    from engine.compare import DEFAULT_SAMPLES
    from engine.metrics import DEFAULT_METRIC, METRIC_FAMILIES

    s.add_argument("a", metavar="A")
    s.add_argument("b", metavar="B")
    s.add_argument("--metric", default=DEFAULT_METRIC, help=", ".join(METRIC_FAMILIES))
    s.add_argument("--samples", type=values.samples, default=DEFAULT_SAMPLES)
    s.add_argument("--seed", type=values.seed, default=0)
    s.add_argument("--tag", help="only questions with this tag")
    s.add_argument("--refresh", action="store_true", help="rank A and B again even when cached")


def _fidelity_options(s: argparse.ArgumentParser) -> None:
    from engine.fidelity import DEFAULT_K

    s.add_argument("a", metavar="A")
    s.add_argument("b", metavar="B")
    s.add_argument(
        "--k", type=values.ranks, default=DEFAULT_K, help=f"top k compared (default {DEFAULT_K})"
    )
    s.add_argument("--tag", help="only questions with this tag")
    s.add_argument("--refresh", action="store_true", help="rank A and B again even when cached")


def _sweep_options(s: argparse.ArgumentParser) -> None:
    from engine.analysis import SWEEP_B, SWEEP_K1
    from engine.compare import DEFAULT_SAMPLES
    from engine.fusion_sweep import DEFAULT_FOLDS, DEFAULT_NORM, DEFAULT_WEIGHTS
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


def _score_options(s: argparse.ArgumentParser) -> None:
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
    s.add_argument("--no-pool", action="store_true", help="do not refresh stale rankings")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    from tui.cli.commands.gate import GATE_HELP, gate_options
    from tui.cli.commands.snapshots import score_against_options

    score_against_options(s)
    gate_options(s)
    s.epilog = GATE_HELP
    s.formatter_class = argparse.RawDescriptionHelpFormatter


def _export_options(s: argparse.ArgumentParser) -> None:
    from engine.formats import EXPORT_FORMATS

    s.add_argument("--format", required=True, choices=EXPORT_FORMATS)
    # OUT is optional but takes no nargs="?": argparse (3.11) would fill such a positional
    # with nothing before the options and then refuse `export WS --format F OUT`.
    s.add_argument("out_pos", metavar="OUT", help="optional: the same as --out").required = False
    s.add_argument("--out", metavar="PATH", help="a file, or a folder for beir and ranx")
    s.add_argument(
        "--retriever", metavar="NAME", help="trec-run, ranx: one retriever (default all)"
    )
    s.add_argument(
        "--force",
        action="store_true",
        help="replace an existing OUT (a folder only if it holds nothing but this format's "
        "files); without it an existing OUT is refused. Never the workspace or a database.",
    )


# -- running ------------------------------------------------------------------------------


def _resolve(func: Command) -> Callable[[argparse.Namespace], None]:
    """The subcommand's function; a ``"module:function"`` name is imported now."""
    if callable(func):
        return func
    module, _, name = func.partition(":")
    found: Callable[[argparse.Namespace], None] = getattr(
        importlib.import_module(f"tui.cli.commands.{module}"), name
    )
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (see ``EXIT_CODES``). Never shows a traceback.

    Only :class:`~engine.errors.GoldpanError` (and the few SQLite and OS conditions that
    :func:`_user_condition` recognises by their codes) is the user's to fix: exit 2 and its
    message. Every other exception is a bug, whatever its type: exit 3, one line, and the
    traceback in a crash log.
    """
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    for n, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # bytes the shell passed that are not UTF-8
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            err.print(literal(f"goldpan: error: argument {n} ({shown}) is not valid UTF-8"))
            return 2
    args = parser.parse_args(argv)
    try:
        _resolve(args.func)(args)
    except GateFailed as exc:
        err.print(literal(f"goldpan: {exc}"))
        return 1
    except Unusable:
        return 2
    except GoldpanError as exc:
        err.print(literal(f"goldpan: error: {exc}"))
        return 2
    except BrokenPipeError:  # `goldpan ... | head`: the reader left; say nothing more
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 2
    except KeyboardInterrupt:
        err.print(Text("goldpan: interrupted; the workspace keeps what was committed"))
        return 130
    except Exception as exc:
        known = _user_condition(args, exc)
        if known is not None:
            err.print(literal(f"goldpan: error: {known}"))
            return 2
        log = write_crash_log(exc, argv)  # a bug: one line here, the traceback in a log
        where = f"the full traceback is in {log}" if log else "no log file could be written"
        err.print(
            literal(
                f"goldpan: internal error ({type(exc).__name__}: {exc}); this is a bug in "
                f"goldpan, not in your data: {where}"
            )
        )
        return 3
    return 0


def _user_condition(args: argparse.Namespace, exc: Exception) -> str | None:
    """The message for an error that is the user's to fix though not goldpan's own type.

    An SQLite lock held too long, a full disk or a damaged file (by SQLite's result code,
    for a statement run outside :meth:`~engine.workspace.Workspace.transaction`, which
    translates them itself), and an operating-system error naming a file (unreadable,
    missing, a full disk). None for anything else: a bug.
    """
    from engine.errors import from_os_error, from_sqlite

    if isinstance(exc, sqlite3.Error):
        known = from_sqlite(exc, _workspace_named(args))
        return None if known is None else str(known)
    if isinstance(exc, OSError):
        full = from_os_error(exc)
        if full is not None:
            return str(full)
        if exc.filename is None:  # no file to name: not a condition the user can find
            return None
        return f"{exc.filename}: {exc.strerror or exc}"
    return None


def _workspace_named(args: argparse.Namespace) -> str:
    """The workspace (and other database files) the command line names."""
    names = [getattr(args, "workspace", None), getattr(args, "out", None)]
    names += getattr(args, "inputs", None) or []
    return ", ".join(str(n) for n in names if n) or "the workspace"


if __name__ == "__main__":
    sys.exit(main())
