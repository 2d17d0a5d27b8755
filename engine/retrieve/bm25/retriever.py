"""The ``bm25`` retriever kind: :class:`BM25Retriever` and its parameters."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import accumulate, chain
from typing import Any

import numpy as np

from engine.retrieve.base import PrepareEnv, Ranking, check_fields, doc_text
from engine.retrieve.bm25.counts import TermCounts, counts_key
from engine.retrieve.bm25.index import RANK_CELLS, RANK_THREADS, BM25Index
from engine.retrieve.bm25.variants import (
    MAX_BM25_PARAM,
    VARIANTS,
    BM25Params,
    IntArray,
    get_variant,
)
from engine.retrieve.order import canonical_scores, id_ranks, top_k
from engine.retrieve.params import LIST, Param, resolve
from engine.tokenize import (
    COMPOSED,
    TOKENIZERS,
    WORD_MAPS,
    Tokenizer,
    get_tokenizer,
    token_counts,
)
from engine.types import Doc, Question, RankedBatch, RetrieverSpec


def get_tokenizer_factory(name: str) -> object:
    """The tokenizer factory registered as ``name`` (the tokenizer is not built).

    Raises:
        UnknownName: naming every registered tokenizer.
    """
    if name not in TOKENIZERS:
        get_tokenizer(name)  # raises with the list of known names
    return TOKENIZERS[name]


class BM25Retriever:
    """BM25 (any variant) over one tokenizer's tokens of the chosen document fields."""

    PARAMS: tuple[Param, ...] = (
        Param(
            "tokenizer",
            str,
            "word",
            "how text becomes terms",
            choices=tuple(sorted(TOKENIZERS)),
            lookup=get_tokenizer_factory,
        ),
        Param(
            "variant",
            str,
            "lucene",
            "the BM25 formula",
            choices=tuple(VARIANTS),
            lookup=get_variant,
        ),
        Param(
            "k1",
            float,
            1.5,
            "term frequency saturation",
            check=lambda v: math.isfinite(v) and 0 <= v <= MAX_BM25_PARAM,
            must=f"from 0 to {MAX_BM25_PARAM:,}",
        ),
        Param(
            "b",
            float,
            0.75,
            "document length normalization",
            check=lambda v: 0 <= v <= 1,
            must="between 0 and 1",
        ),
        Param(
            "epsilon",
            float,
            None,
            "okapi: the idf floor is epsilon x mean idf (default 0.25)",
            check=lambda v: math.isfinite(v) and -MAX_BM25_PARAM <= v <= MAX_BM25_PARAM,
            must=f"from -{MAX_BM25_PARAM:,} to {MAX_BM25_PARAM:,}",
        ),
        Param(
            "delta",
            float,
            None,
            "bm25l and bm25plus: the lower bound (default 0.5 and 1)",
            check=lambda v: math.isfinite(v) and 0 <= v <= MAX_BM25_PARAM,
            must=f"from 0 to {MAX_BM25_PARAM:,}",
        ),
        Param(
            "fields",
            LIST,
            ("text",),
            "document fields read: text, title or title,text",
            lookup=check_fields,
            metavar="FIELDS",
        ),
    )
    """The parameters of the ``bm25`` kind."""

    bases: tuple[str, ...] = ()
    base_depth: int | None = None

    @property
    def batch_size(self) -> int:
        """Questions per :meth:`rank_batch`, a progress report after each.

        Enough for every ranking thread to have a few chunks of :data:`RANK_CELLS` scores.
        """
        n_docs = max(1, len(self._doc_ids))
        return max(256, min(8192, 4 * RANK_THREADS * RANK_CELLS // n_docs))

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the parameters; nothing is indexed yet."""
        self.spec = spec
        p = resolve(self.PARAMS, spec.params, "bm25")
        self.tokenizer_name = str(p["tokenizer"])
        self.fields = tuple(p["fields"])
        self.params = BM25Params(
            variant=p["variant"], k1=p["k1"], b=p["b"], epsilon=p["epsilon"], delta=p["delta"]
        )
        self._tokenizer: Tokenizer | None = None
        self._cache: dict[Any, Any] = {}
        self._index: BM25Index | None = None
        self._doc_ids: Sequence[str] = []
        self._id_rank: IntArray = np.zeros(0, dtype=np.int64)

    @property
    def counts_key(self) -> str:
        """What the term counts depend on besides the corpus: tokenizer and fields."""
        return counts_key(self.tokenizer_name, self.fields)

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Count terms (shared through ``cache``, and kept in the index store) and weigh them.

        With a store in ``env`` whose term counts match the corpus, the documents are not
        read at all; otherwise they are tokenized, and the counts are stored for next time.
        """
        env = env or PrepareEnv()
        self._tokenizer = get_tokenizer(self.tokenizer_name)
        self._cache = cache
        key = ("counts", self.tokenizer_name, self.fields)
        entry = cache.get(key)
        if entry is None:
            entry = self._load_counts(env, self.tokenizer_name)
        if entry is None:
            entry = self._counted(self.tokenizer_name, docs, cache, env)
            store = env.index_store
            if store is not None and env.corpus_hash is not None and not store.readonly:
                record = entry[1].to_record(entry[0])
                store.write_term_counts(self.counts_key, env.corpus_hash, record)
        cache[key] = entry
        doc_ids, counts = entry
        ranks_key = ("id_ranks", len(doc_ids), doc_ids[0] if doc_ids else "")
        if ranks_key not in cache:
            cache[ranks_key] = id_ranks(doc_ids)
        self._id_rank = cache[ranks_key]
        self._doc_ids = doc_ids
        self._index = BM25Index(None, self.params, counts=counts)
        # ready to rank: a tokenizer's model loads here, not in the first question's time
        # (counts read from the store did not need it; a question ranked alone is timed)
        self._tokenizer.ready()

    def _counted(
        self, name: str, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv
    ) -> tuple[Sequence[str], TermCounts]:
        """(doc ids, term counts) of tokenizer ``name`` over the corpus, shared through ``cache``.

        Documents are counted, not kept as token lists: one entry per distinct term keeps
        the memory a small multiple of the largest document
        (:func:`engine.tokenize.token_counts`). Only ``word`` (and Kiwi) read the
        documents: ``bigram`` maps each distinct word of the ``word`` counts
        (:meth:`TermCounts.mapped`), and ``word+bigram`` joins its parts' counts
        (:meth:`TermCounts.joined`), each part taken from this run or the store when it
        is there already.
        """
        key = ("counts", name, self.fields)
        entry: tuple[Sequence[str], TermCounts] | None = cache.get(key)
        if entry is None and name != self.tokenizer_name:
            entry = self._load_counts(env, name)
        if entry is None:
            parts = COMPOSED.get(name)
            if parts:
                each = [self._counted(part, docs, cache, env) for part in parts]
                entry = (each[0][0], TermCounts.joined([counts for _, counts in each]))
            elif name in WORD_MAPS:
                ids, words = self._counted("word", docs, cache, env)
                entry = (ids, words.mapped(WORD_MAPS[name]))
            else:
                texts = [doc_text(d, self.fields) for d in docs]
                counts = TermCounts.from_counts(token_counts(get_tokenizer(name), texts))
                entry = ([d.id for d in docs], counts)
            cache[key] = entry
        return entry

    def _question_tokens(self, name: str, texts: Sequence[str]) -> list[list[str]]:
        """Each question's tokens by tokenizer ``name``, remembered for this run."""
        memo: dict[str, list[str]] = self._cache.setdefault(("question tokens", name), {})
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing:
            parts = COMPOSED.get(name)
            if parts:
                lists = [self._question_tokens(part, missing) for part in parts]
                made = [list(chain.from_iterable(each)) for each in zip(*lists, strict=True)]
            elif name in WORD_MAPS:
                words = self._question_tokens("word", missing)
                flat, sizes = WORD_MAPS[name](list(chain.from_iterable(words)))
                ends = [0, *accumulate(sizes)]  # where each word's tokens end in flat
                made, at = [], 0
                for question in words:
                    made.append(flat[ends[at] : ends[at + len(question)]])
                    at += len(question)
            else:
                made = get_tokenizer(name).tokenize_many(missing)
            memo.update(zip(missing, made, strict=True))
        return [memo[t] for t in texts]

    def _load_counts(self, env: PrepareEnv, name: str) -> tuple[Sequence[str], TermCounts] | None:
        store = env.index_store
        if store is None or env.corpus_hash is None:
            return None
        record = store.term_counts(counts_key(name, self.fields), env.corpus_hash)
        return None if record is None else TermCounts.from_record(record)

    def _ready(self) -> tuple[BM25Index, Tokenizer]:
        if self._index is None or self._tokenizer is None:
            raise RuntimeError("prepare() must be called before ranking")
        return self._index, self._tokenizer

    def term_counts(self) -> tuple[Sequence[str], TermCounts]:
        """(doc ids, term counts) of the prepared corpus (what relevance feedback reads)."""
        self._ready()
        entry: tuple[Sequence[str], TermCounts] = self._cache[
            ("counts", self.tokenizer_name, self.fields)
        ]
        return entry

    def question_terms(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text's terms, as a question's are made."""
        self._ready()
        return self._question_tokens(self.tokenizer_name, texts)

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Rank the corpus for each question (the batch scored at once)."""
        return self.rank_batch(questions, depth).rankings()

    def rank_batch(self, questions: Sequence[Question], depth: int) -> RankedBatch:
        """:meth:`rank`'s rankings as arrays, for the runner to store as they are."""
        index, _ = self._ready()
        tokens = self._question_tokens(self.tokenizer_name, [q.text for q in questions])
        cols, vals, ends = index.rank_flat(tokens, self._id_rank, depth)
        return RankedBatch(self._doc_ids, cols, vals, ends)

    def search(self, text: str, depth: int) -> Ranking:
        """Rank the corpus for one question."""
        index, tokenizer = self._ready()
        scores = canonical_scores(index.scores(tokenizer(text)))
        best = top_k(scores, self._id_rank, depth)
        ids = self._doc_ids
        return [ids[i] for i in best.tolist()], scores[best].tolist()
