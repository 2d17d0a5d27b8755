"""Writers for the field's file formats: TREC qrels and runs, goldpan's labels CSV.

Scores are written with ``%.17g`` (a float's shortest exact form) because trec_eval
re-ranks a run by its score column: rounding would create ties that change the metrics.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from typing import TextIO

from engine.types import CachedRun, Label


def write_trec_qrels(out: TextIO, gold: Mapping[str, Mapping[str, int]]) -> int:
    """``qid 0 doc grade`` lines, questions and documents in code-point order."""
    n = 0
    for qid in sorted(gold):
        for doc, grade in sorted(gold[qid].items()):
            out.write(f"{qid} 0 {doc} {grade}\n")
            n += 1
    return n


def write_trec_run(out: TextIO, runs: Iterable[CachedRun], tag: str | None = None) -> int:
    """``qid Q0 doc rank score tag`` lines; the tag defaults to the retriever name."""
    n = 0
    for run in sorted(runs, key=lambda r: (r.retriever, r.question_id)):
        name = tag or run.retriever
        for rank, (doc, score) in enumerate(zip(run.doc_ids, run.scores, strict=True), 1):
            out.write(f"{run.question_id} Q0 {doc} {rank} {score:.17g} {name}\n")
            n += 1
    return n


LABEL_COLUMNS: Sequence[str] = ("question_id", "doc_id", "annotator", "grade")


def write_labels_csv(out: TextIO, labels: Iterable[Label]) -> int:
    """Every annotator's labels as CSV ``question_id,doc_id,annotator,grade``."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(LABEL_COLUMNS)
    n = 0
    for lab in labels:
        writer.writerow((lab.question_id, lab.doc_id, lab.annotator, lab.grade))
        n += 1
    return n
