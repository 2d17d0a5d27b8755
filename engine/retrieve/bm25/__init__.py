"""BM25 over a sparse term-by-document weight matrix, and the ``bm25`` retriever kind.

One module per idea:

* :mod:`~engine.retrieve.bm25.variants`: the formulas (each variant's idf and term
  weight, :data:`VARIANTS`) and :class:`BM25Params`;
* :mod:`~engine.retrieve.bm25.counts`: a corpus's term counts (:class:`TermCounts`) and
  how an index store keeps them;
* :mod:`~engine.retrieve.bm25.index`: the scoring kernel (:class:`BM25Index`,
  :func:`~engine.retrieve.bm25.index.score_block`) and the threads that rank a batch;
* :mod:`~engine.retrieve.bm25.retriever`: the ``bm25`` kind (:class:`BM25Retriever`).

The names other modules use are importable from here.
"""

from engine.retrieve.bm25.counts import TermCounts, TermRows, counts_key
from engine.retrieve.bm25.index import BM25Index, QueryTerms, rank_rows
from engine.retrieve.bm25.retriever import BM25Retriever
from engine.retrieve.bm25.variants import (
    MAX_BM25_PARAM,
    VARIANTS,
    BM25Params,
    Variant,
    get_variant,
    lucene_length,
    lucene_length_byte,
    lucene_lengths,
)
from engine.retrieve.order import canonical_scores, id_ranks, top_k

__all__ = [
    "MAX_BM25_PARAM",
    "VARIANTS",
    "BM25Index",
    "BM25Params",
    "BM25Retriever",
    "QueryTerms",
    "TermCounts",
    "TermRows",
    "Variant",
    "canonical_scores",
    "counts_key",
    "get_variant",
    "id_ranks",
    "lucene_length",
    "lucene_length_byte",
    "lucene_lengths",
    "rank_rows",
    "top_k",
]
