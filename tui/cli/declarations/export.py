"""``goldpan export``."""

from __future__ import annotations

import argparse

from tui.cli.command import CliCommand


def _options(s: argparse.ArgumentParser) -> None:
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


COMMAND = CliCommand(
    "export",
    "write TREC qrels/runs, labels, questions, a BEIR or ranx folder",
    "Formats: trec-qrels (`qid 0 doc grade`: the scored questions' judgments, the resolved "
    "gold and 0 for every document judged not relevant, as bpref and trec_eval -J read "
    "them); trec-run (`qid Q0 doc rank "
    "score tag`: cached rankings, tag = retriever); labels or labels-csv (CSV "
    "question_id,doc_id,annotator,grade: every annotator's labels); questions-jsonl "
    '({"id", "text", "tags", "gold": ["doc:grade"], "no_answer"}) or questions-csv '
    "(id,text,tags,gold,no_answer), read back by `import questions`; beir (a folder: "
    "corpus.jsonl, queries.jsonl, qrels/test.tsv with the same judgments, read back by "
    "`import beir`); ranx (a folder: qrels.json, {qid: {doc: grade}} of the gold, and "
    "run-NAME.json, {qid: {doc: score}}, per "
    "retriever, for ranx.Qrels.from_file and ranx.Run.from_file; each run holds the qrels' "
    "questions, {} without a ranking, and tied scores are set apart by a few units in the "
    "last place so that ranx ranks them as trec_eval does). CSV cells that a spreadsheet "
    "would run as a formula get a leading '. The output is written to a temporary file (or "
    "folder) beside OUT and "
    "renamed into place, so a failed write leaves no partial file and an older OUT intact. "
    "An existing OUT is replaced only with --force.",
    run="workspace:cmd_export",
    options=_options,
    see="[What goldpan guarantees](guarantees.md)",
)
