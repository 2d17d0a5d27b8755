"""``goldpan import docs|questions|run|qrels|labels|verdicts|beir|squad|querylog``.

One family in one module: each reads one file into the workspace in one transaction, and
all but ``querylog`` run in ``tui.cli.commands.workspace.cmd_import``.
"""

from __future__ import annotations

import argparse

from engine.grades import GRADE_RANGE, RELEVANT
from engine.types import VERDICTS
from tui.cli import values
from tui.cli.command import CliCommand

RUN = "workspace:cmd_import"


def _replace_labels(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--replace-labels",
        action="store_true",
        help="when a known question's text changed, delete the labels, verdicts and "
        "adjudication made for the old text (default: keep them, marked as needing "
        "re-check and left out of scores)",
    )


def _docs(s: argparse.ArgumentParser) -> None:
    from engine.formats.docs import DOC_FORMATS

    s.add_argument("path", metavar="PATH")
    s.add_argument(
        "--format",
        choices=DOC_FORMATS,
        default="auto",
        help="the corpus format (default: told by the name)",
    )


def _questions(s: argparse.ArgumentParser) -> None:
    s.add_argument("path", metavar="PATH")
    s.add_argument("--annotator", default="import", help="whose labels the gold becomes")
    _replace_labels(s)


def _run(s: argparse.ArgumentParser) -> None:
    s.add_argument("path", metavar="FILE")
    s.add_argument("--name", required=True, help="the retriever's name")
    s.add_argument("--replace", action="store_true", help="replace an imported run of that name")


def _annotator(s: argparse.ArgumentParser) -> None:
    s.add_argument("--annotator", default="import", help="whose labels the grades become")


def _qrels(s: argparse.ArgumentParser) -> None:
    s.add_argument("path", metavar="PATH")
    _annotator(s)


def _path(s: argparse.ArgumentParser) -> None:
    s.add_argument("path", metavar="PATH")


def _beir(s: argparse.ArgumentParser) -> None:
    s.add_argument("path", metavar="DIR")
    s.add_argument("--split", default="test", help="the qrels file read: qrels/SPLIT.tsv")
    _annotator(s)
    _replace_labels(s)


def _squad(s: argparse.ArgumentParser) -> None:
    s.add_argument("path", metavar="FILE")
    s.add_argument(
        "--level",
        choices=("article", "paragraph"),
        default="article",
        help="what becomes a document",
    )
    s.add_argument(
        "--onto",
        action="store_true",
        help="import no document: attach each article's questions to the workspace's "
        "document of the article's title (_ read as a space, case ignored); refused, with "
        "nothing imported, when an article has no such document or several",
    )
    _annotator(s)
    _replace_labels(s)


def _querylog(s: argparse.ArgumentParser) -> None:
    s.add_argument("path", metavar="FILE")
    s.add_argument("--sample", type=values.count, metavar="N", help="draw N groups as questions")
    s.add_argument("--seed", type=values.seed, default=0, help="the sample's seed (default 0)")
    s.add_argument(
        "--min-count", type=values.count, default=1, metavar="K", help="skip rarer queries"
    )
    s.add_argument(
        "--similarity",
        type=values.similarity,
        default=None,
        metavar="J",
        help="near-duplicate threshold: Jaccard of character 3-grams (default 0.7)",
    )
    s.add_argument(
        "--format",
        choices=("auto", "text", "jsonl", "csv"),
        default="auto",
        help="the log's format (default: told by the file name)",
    )


COMMAND = CliCommand(
    "import",
    "import docs, questions, qrels, runs, labels, BEIR, SQuAD or a query log",
    "Import one file into a workspace, in one transaction: a bad line is refused with its "
    "file and line number, and the workspace is left as it was.",
    workspace=False,
    dest="what",
    subcommands=(
        CliCommand(
            "docs",
            "a Markdown folder, JSONL (BEIR corpus shape) or CSV",
            "PATH is one of: a folder of Markdown files (.md; optional YAML front matter with"
            " `title`, `id` and any other keys, kept as fields); a JSONL file, one document "
            'per line ({"_id" or "id", "title", "text", other keys kept as fields}: the BEIR '
            "corpus shape); a CSV (or TSV) file with a header row id,title,text[,other "
            "columns kept as fields]; `title` may be left out, `text` may not (a file "
            "without it is refused: its bodies would be read as empty texts). UTF-8; the "
            "format is told by the name (a folder, "
            ".jsonl/.json/.ndjson, .csv/.tsv, .md) unless --format says it. A folder scan "
            "skips, with a warning on stderr, symbolic links that lead outside the folder and "
            "anything that is not a regular file (a FIFO named x.md).",
            run=RUN,
            options=_docs,
        ),
        CliCommand(
            "questions",
            "JSONL or CSV: id, text, tags; optional gold (doc:grade ...), no_answer",
            'PATH is JSONL, one question per line: {"_id" or "id", "text", "tags": [..] or '
            '"a,b", "gold": ["doc:grade", ..], "no_answer": true}; or CSV (TSV) with a header'
            " row id,text[,tags][,gold][,no_answer] (tags comma-separated, gold "
            f"space-separated doc:grade entries, grade {GRADE_RANGE}). The gold becomes labels"
            " of --annotator, a true no_answer their no-answer verdict. A known question "
            "whose text changed keeps the old text in its history, and the judgments made for "
            "the old text need re-check.",
            run=RUN,
            options=_questions,
            see="[Re-imported questions](workspace.md#re-imported-questions)",
        ),
        CliCommand(
            "run",
            "a TREC run file as an external retriever's rankings",
            "FILE is a TREC run: one ranked document per line, `qid Q0 doc rank score tag` "
            "separated by spaces or tabs; `#` comment lines and blank lines are skipped. Each"
            " question's ranking is the score descending, then the doc id descending, as "
            "trec_eval does (the rank column is ignored); a document listed twice for a "
            "question is refused, and so are ids the workspace does not know (with file and "
            "line). The run becomes an `external` retriever: questions it lacks score as "
            "misses, and `goldpan pool` never runs it.",
            run=RUN,
            options=_run,
        ),
        CliCommand(
            "qrels",
            "TREC qrels or a BEIR qrels TSV, as one annotator's labels",
            "PATH is TREC qrels, `qid iter doc grade` per line, or a BEIR qrels TSV with the "
            f"header query-id, corpus-id, score. Grades are {GRADE_RANGE}; grade -1 lines "
            "(TREC: pooled, unjudged) are skipped.",
            run=RUN,
            options=_qrels,
        ),
        CliCommand(
            "labels",
            "CSV question_id,doc_id,annotator,grade",
            "PATH is a CSV file with the header row question_id,doc_id,annotator,grade (grade"
            f" {GRADE_RANGE}), as `goldpan export --format labels` writes it.",
            run=RUN,
            options=_path,
        ),
        CliCommand(
            "verdicts",
            "CSV question_id,annotator,verdict,note",
            "PATH is a CSV file with the header row question_id,annotator,verdict,note "
            f"(verdict: {', '.join(VERDICTS)}; note may be empty).",
            run=RUN,
            options=_path,
        ),
        CliCommand(
            "beir",
            "a BEIR folder: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv",
            'DIR is a BEIR dataset: corpus.jsonl ({"_id", "title", "text", "metadata"}), '
            'queries.jsonl ({"_id", "text", "metadata"}; metadata may give "tags" and '
            '"no_answer") and qrels/SPLIT.tsv (query-id, corpus-id, score). A document\'s '
            "metadata becomes its fields; queries without qrels stay unlabeled.",
            run=RUN,
            options=_beir,
        ),
        CliCommand(
            "squad",
            "SQuAD 1.1 or 2.0 JSON (e.g. KorQuAD); source doc = gold, is_impossible = no answer",
            'FILE is SQuAD 1.1 JSON (e.g. KorQuAD 1.0): {"data": [{"title", "paragraphs": '
            '[{"context", "qas": [{"id", "question"}]}]}]}. Each article (--level article) or'
            " paragraph (--level paragraph) becomes a document, and it is the gold (grade "
            f"{RELEVANT}) of the questions asked on it. SQuAD 2.0 (KorQuAD 2.0's shape too): "
            'a question marked "is_impossible": true, or with no "answers" beside '
            '"plausible_answers", gets a no_answer verdict of --annotator and no gold, and '
            "`score` counts it as no answer. With --onto no article is imported: its "
            "questions are attached to the workspace's documents by title.",
            run=RUN,
            options=_squad,
            see="[docs/analysis.md](analysis.md#questions-onto-your-own-corpus-goldpan-import-squad---onto)",
        ),
        CliCommand(
            "querylog",
            "a query log (text, JSONL or CSV: query, count, timestamp): de-duplicate, "
            "sample by frequency band",
            'FILE is a query log: plain text (one query a line), JSONL ({"query", optional '
            '"count", "timestamp"}) or CSV with a header row query[,count][,timestamp]. '
            "Queries are de-duplicated (NFKC, whitespace collapsed, case-folded), "
            "near-duplicates grouped, and either sampled by frequency band (--sample N: "
            "questions tagged from-log and head/torso/tail) or stored for the Write screen's "
            "ctrl+n.",
            run="querylog:cmd_import_querylog",
            options=_querylog,
            json=True,
            see="[Questions from a query log](query-log.md)",
        ),
    ),
)
