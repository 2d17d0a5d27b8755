"""Pooling memory stays a small multiple of the largest document (issue 12).

Documents are counted piece by piece (``engine.tokenize.token_counts``) into one entry per
distinct term, instead of one Python string per token: the counts must equal the
tokenizer's own tokens, and the index built from them must score exactly as before.
``benchmarks/bench_pool_memory.py`` measures a whole ``goldpan pool`` on a 50 MB document.
"""

from __future__ import annotations

import tracemalloc
from collections import Counter

import numpy as np
import pytest

import engine.tokenize as tokenize_module
from engine.retrieve.bm25 import BM25Index, BM25Params
from engine.tokenize import get_tokenizer, text_pieces, token_counts

TEXTS = [
    "ΟΔΟΣ ΟΔΟΣ\tΣΟΦΟΣ. 감쇠 보정은 CT로 어떻게 하나?\n금속 인공물 2024-0137 TD-0137\n" * 7,
    "İstanbul straße ǅemal ﬁne Ⅻ " * 11,
    "nospaceatallbutlongerthanonepiece" * 5,
    "",
    "  \n  ",
]


@pytest.mark.parametrize("name", ["word", "bigram", "word+bigram"])
def test_counts_piece_by_piece_equal_the_tokens(name, monkeypatch):
    monkeypatch.setattr(tokenize_module, "_CHUNK", 7)  # many pieces, cut mid-text
    tok = get_tokenizer(name)
    for text, counts in zip(TEXTS, token_counts(tok, TEXTS), strict=True):
        expected = Counter(tok(text))
        assert counts == expected
        assert list(counts) == list(expected)  # first-occurrence order: the index's term ids


def test_pieces_cut_after_whitespace_and_cover_the_text(monkeypatch):
    text = "ab cd\tef\ngh " * 50
    pieces = list(text_pieces(text, 5))
    assert "".join(pieces) == text and len(pieces) > 10
    assert all(p[-1].isspace() for p in pieces[:-1])


def test_an_index_from_counts_scores_as_one_from_tokens():
    tok = get_tokenizer("word+bigram")
    docs = [t for t in TEXTS if t.strip()] + ["감쇠 보정 원리", "보정 보정 CT"]
    queries = [tok("보정은 CT"), tok("ΟΔΟΣ straße"), tok("2024")]
    for variant in ("lucene", "okapi", "bm25l", "bm25plus"):
        params = BM25Params(variant=variant)
        old = BM25Index(tok.tokenize_many(docs), params)
        new = BM25Index(token_counts(tok, docs), params)
        assert new.vocab == old.vocab and new.avgdl == old.avgdl
        for q in queries:
            assert np.array_equal(new.scores(q), old.scores(q)), variant


def test_counting_and_indexing_a_large_document_needs_under_three_times_its_size():
    rng = np.random.default_rng(0)
    vocab = [f"w{i:x}" for i in range(20_000)]
    ranks = (np.minimum(rng.zipf(1.2, 400_000), len(vocab)) - 1).tolist()
    text = " ".join(vocab[r] for r in ranks)  # ~1.6 MB of ASCII: one byte per character
    size = len(text)
    tok = get_tokenizer("word")
    tracemalloc.start()
    try:
        counts = token_counts(tok, [text, "a small one"])
        index = BM25Index(counts, BM25Params())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert index.n_docs == 2 and index.doc_len[0] == 400_000
    # with the document itself, pooling holds at most 4x its size (token lists, as the
    # index was built before, took ~17x here)
    assert peak < 3 * size, f"peak {peak / size:.2f}x the document"
