"""Near-duplicate texts: normalization and all pairs above a Jaccard threshold, fast.

Texts are compared as sets of character 3-grams of their normalized form with spaces
removed (so ``감쇠보정`` and ``감쇠 보정`` match). Candidate pairs come from *prefix
filtering* (Chaudhuri, Ganti & Kaushik 2006, "A primitive operator for similarity joins
in data cleaning"; Bayardo, Ma & Srikant 2007, "Scaling up all pairs similarity search"):
with each set's 3-grams ordered rarest first, two sets with Jaccard >= t share one of
their first ``|s| - ceil(t |s|) + 1`` 3-grams, so one sparse product of those prefixes
finds every pair (rare 3-grams make small blocks) and the exact similarity is computed
for the candidates only, in vectorized chunks.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

NGRAM = 3
PAIR_CHUNK = 200_000


def normalize(text: str) -> str:
    """The de-duplication key: NFKC, case-folded, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(folded.split())


def char_ngrams(norm: str, n: int = NGRAM) -> set[str]:
    """Character n-grams of a normalized text with its spaces removed (short: itself)."""
    s = norm.replace(" ", "")
    if len(s) <= n:
        return {s}
    return {s[i : i + n] for i in range(len(s) - n + 1)}


def similar_pairs(
    sets: Sequence[set[str]], threshold: float
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Index pairs (i < j) whose Jaccard similarity is >= ``threshold``, and the values.

    Prefix filtering (see the module docstring) finds the candidates in one sparse
    product; the exact similarity is computed for them only.
    """
    vocab: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for i, s in enumerate(sets):
        for g in s:
            cols.append(vocab.setdefault(g, len(vocab)))
            rows.append(i)
    n = len(sets)
    empty = np.zeros(0, dtype=np.int64)
    if n < 2:
        return empty, empty, np.zeros(0)
    r = np.asarray(rows, dtype=np.int64)
    c = np.asarray(cols, dtype=np.int64)
    df = np.bincount(c, minlength=len(vocab))
    sizes = np.bincount(r, minlength=n)
    # order each set's grams rarest first (ties by gram id) and keep its prefix
    order = np.lexsort((c, df[c], r))
    r, c = r[order], c[order]
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    pos = np.arange(r.size) - starts[r]
    prefix = sizes - np.ceil(threshold * sizes - 1e-9).astype(np.int64) + 1
    keep = pos < prefix[r]
    ones = np.ones(int(keep.sum()), dtype=np.int32)
    p = sp.csr_matrix((ones, (r[keep], c[keep])), shape=(n, len(vocab)))
    cand = sp.triu(p @ p.T, k=1).tocoo()
    i, j = cand.row.astype(np.int64), cand.col.astype(np.int64)
    # a size filter: J >= t needs t |A| <= |B| <= |A| / t
    small, big = np.minimum(sizes[i], sizes[j]), np.maximum(sizes[i], sizes[j])
    ok = small >= threshold * big - 1e-9
    i, j = i[ok], j[ok]
    x = sp.csr_matrix((np.ones(r.size, dtype=np.int32), (r, c)), shape=(n, len(vocab)))
    keep_i, keep_j, keep_s = [], [], []
    for lo in range(0, i.size, PAIR_CHUNK):
        a, b = i[lo : lo + PAIR_CHUNK], j[lo : lo + PAIR_CHUNK]
        inter = np.asarray(x[a].multiply(x[b]).sum(axis=1)).ravel()
        sim = inter / (sizes[a] + sizes[b] - inter)
        hit = sim >= threshold - 1e-12
        keep_i.append(a[hit])
        keep_j.append(b[hit])
        keep_s.append(sim[hit])
    if not keep_i:
        return empty, empty, np.zeros(0)
    return np.concatenate(keep_i), np.concatenate(keep_j), np.concatenate(keep_s)
