"""The ``lucene-quantized`` BM25 variant: document lengths as Lucene's one-byte norms.

The length codec is checked against a line-by-line transliteration of Lucene's Java
``SmallFloat.intToByte4`` / ``byte4ToInt`` (written here, independently of goldpan's),
and the scores against the BM25 formula computed by hand on the decoded lengths.
"""

from __future__ import annotations

import math

import pytest

from engine.retrieve.bm25 import (
    BM25Index,
    BM25Params,
    canonical_scores,
    id_ranks,
    lucene_length,
    lucene_length_byte,
    top_k,
)
from tests.engine.retrieve.test_bm25_index import random_corpus

# -- Lucene's SmallFloat, as its Java source reads --------------------------------------


def number_of_leading_zeros_64(i: int) -> int:
    return 64 - i.bit_length()


def java_long_to_int4(i: int) -> int:
    num_bits = 64 - number_of_leading_zeros_64(i)
    if num_bits < 4:
        return i  # subnormal value
    shift = num_bits - 4
    encoded = i >> shift  # only keep the 5 most significant bits
    encoded &= 0x07  # clear the most significant bit, which is implicit
    encoded |= (shift + 1) << 3  # encode the shift, adding 1: 0 is for subnormal values
    return encoded


def java_int4_to_long(i: int) -> int:
    bits = i & 0x07
    shift = (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


JAVA_MAX_INT4 = java_long_to_int4(2**31 - 1)
JAVA_NUM_FREE_VALUES = 255 - JAVA_MAX_INT4


def java_int_to_byte4(i: int) -> int:
    if i < JAVA_NUM_FREE_VALUES:
        return i
    return JAVA_NUM_FREE_VALUES + java_long_to_int4(i - JAVA_NUM_FREE_VALUES)


def java_byte4_to_int(b: int) -> int:
    if b < JAVA_NUM_FREE_VALUES:
        return b
    return JAVA_NUM_FREE_VALUES + java_int4_to_long(b - JAVA_NUM_FREE_VALUES)


def test_the_length_codec_is_lucenes():
    assert JAVA_NUM_FREE_VALUES == 24
    lengths = [*range(5000), 12_345, 65_536, 1_000_000, 2**31 - 1]
    for n in lengths:
        assert lucene_length_byte(n) == java_int_to_byte4(n), n
        assert lucene_length(n) == java_byte4_to_int(java_int_to_byte4(n)), n
    decoded = [java_byte4_to_int(b) for b in range(256)]
    assert decoded == sorted(set(decoded))  # 256 distinct lengths, in order
    # hand values: exact to 40, then 4 significant bits (100 = 24 + 76, 76 -> 72)
    assert [lucene_length(n) for n in (23, 24, 40, 41, 47, 48, 100, 1000)] == [
        23,
        24,
        40,
        40,
        46,
        48,
        96,
        984,
    ]


def test_documents_whose_lengths_share_a_byte_tie():
    """Two documents of 97 and 100 tokens, one occurrence of the query term each: Lucene
    reads both as 96 tokens long, so they tie (and go in doc id order), where exact
    lengths put the shorter first."""
    filler = [f"f{i}" for i in range(120)]
    docs = [
        ["q", *filler[:96]],  # 97 tokens
        ["q", *filler[:99]],  # 100 tokens
        filler[:30],  # no q
    ]
    exact = BM25Index(docs, BM25Params(variant="lucene")).scores(["q"])
    quant = BM25Index(docs, BM25Params(variant="lucene-quantized")).scores(["q"])
    assert exact[0] > exact[1] > 0
    assert quant[0] == quant[1] > 0 and quant[2] == 0
    k1, b, n, df = 1.5, 0.75, 3, 2
    avgdl = (97 + 100 + 30) / 3  # exact: sumTotalTermFreq / docCount
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    want = idf * 1 / (1 + k1 * (1 - b + b * 96 / avgdl))
    assert quant[0] == pytest.approx(want, rel=1e-15)
    rank = id_ranks(["d0", "d1", "d2"])
    assert top_k(canonical_scores(quant), rank, 3).tolist() == [1, 0]  # tie: larger id first


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_short_documents_score_exactly_as_lucene(seed):
    docs, queries = random_corpus(seed)  # at most 12 tokens: lengths stored exactly
    exact = BM25Index(docs, BM25Params(variant="lucene"))
    quant = BM25Index(docs, BM25Params(variant="lucene-quantized"))
    for q in queries:
        assert quant.scores(q).tolist() == exact.scores(q).tolist()
