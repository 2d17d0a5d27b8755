"""The field's file formats, one module per format, each with its reader and writer.

Modules: :mod:`~engine.formats.trec` (qrels and runs), :mod:`~engine.formats.beir`,
:mod:`~engine.formats.ranx`, :mod:`~engine.formats.squad`, :mod:`~engine.formats.questions`,
:mod:`~engine.formats.labels` (labels and verdicts CSV), :mod:`~engine.formats.docs` and
:mod:`~engine.formats.markdown` (corpora), :mod:`~engine.formats.tabular` (text, CSV and
JSONL records shared by all), :mod:`~engine.formats.ids` (the one id grammar),
:mod:`~engine.formats.errors` (:class:`IngestError`) and :mod:`~engine.formats.outfiles`
(atomic writes). Readers and writers never touch a workspace: :mod:`engine.ingest` loads
parsed records into one and :mod:`engine.export` writes one out.

Scores are written with ``%.17g`` (TREC) or Python's shortest exact ``repr`` (JSON): both
read back as the same double, and trec_eval re-ranks a run by its score column, so
rounding would create ties that change the metrics.

What each format holds (``gold`` is the resolved gold of :func:`engine.scoring.workspace_golds`:
the grade >= 1 documents of every question whose status is ``labeled``):

* ``trec-qrels``: ``qid 0 doc grade`` lines of the gold.
* ``trec-run``: ``qid Q0 doc rank score tag`` lines of cached rankings (tag = retriever).
* ``labels`` (or ``labels-csv``): every annotator's labels, ``question_id,doc_id,annotator,grade``.
* ``beir``: a folder with ``corpus.jsonl`` (``_id``, ``title``, ``text``, ``metadata`` = the
  document's fields), ``queries.jsonl`` (``_id``, ``text``, ``metadata`` = ``tags`` and
  ``no_answer``) and ``qrels/test.tsv`` (``query-id  corpus-id  score`` with that header).
* ``ranx``: a folder with ``qrels.json`` (``{qid: {doc: grade}}``) and one
  ``run-<retriever>.json`` (``{qid: {doc: score}}``) per retriever, for
  ``ranx.Qrels.from_file`` / ``ranx.Run.from_file``. See
  :func:`engine.formats.ranx.write_ranx` for the two things done so that ranx computes
  goldpan's numbers.
* ``questions-jsonl`` / ``questions-csv``: ``id``, ``text``, ``tags``, ``gold`` (``doc:grade``
  entries) and ``no_answer`` per question; ``goldpan import questions`` reads them back.
"""

from __future__ import annotations

from collections.abc import Sequence

EXPORT_FORMATS: Sequence[str] = (
    "trec-qrels",
    "trec-run",
    "labels",
    "labels-csv",
    "beir",
    "ranx",
    "questions-jsonl",
    "questions-csv",
    "sqlite",
)
"""Formats of ``goldpan export``; ``beir`` and ``ranx`` write a folder, ``sqlite`` a new
database (:mod:`engine.formats.sqlite_copy`), the others a file."""

FOLDER_FORMATS = frozenset({"beir", "ranx"})
