"""Retrievers: one protocol, a registry of kinds, and the BM25 kind.

A retriever is built from a :class:`~engine.types.RetrieverSpec` (name, kind, params),
indexes the corpus once with :meth:`Retriever.prepare`, then answers questions with
:meth:`Retriever.search`, a ranking in trec_eval's order (score descending, then doc id
descending; no document with a score <= 0).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from engine.retrieve.bm25 import (
    VARIANTS,
    BM25Index,
    BM25Params,
    canonical_scores,
    check_variant,
    id_ranks,
    top_k,
)
from engine.tokenize import TOKENIZERS, Tokenizer, get_tokenizer
from engine.types import Doc, RetrieverSpec

DEFAULT_DEPTH = 100
"""How deep each retriever's ranking is cached."""

DOC_FIELDS = ("title", "text")


class Retriever(Protocol):
    """Indexes a corpus once, then ranks documents for questions."""

    spec: RetrieverSpec

    def prepare(self, docs: Sequence[Doc], cache: dict[Any, Any]) -> None:
        """Index the corpus. ``cache`` is shared by retrievers in one pool run."""
        ...

    def search(self, text: str, depth: int) -> tuple[list[str], list[float]]:
        """Doc ids and scores of the best ``depth`` documents, in ranking order."""
        ...


def doc_text(doc: Doc, fields: Sequence[str]) -> str:
    """The text a retriever indexes for a document: the chosen fields, one per line."""
    return "\n".join(doc.title if f == "title" else doc.text for f in fields)


class BM25Retriever:
    """BM25 (any variant) over one tokenizer's tokens of the chosen document fields."""

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the parameters; nothing is indexed yet."""
        self.spec = spec
        p = dict(spec.params)
        self.tokenizer_name = str(p.get("tokenizer", "word"))
        if self.tokenizer_name not in TOKENIZERS:
            get_tokenizer(self.tokenizer_name)  # raises with the list of known names
        self.fields = tuple(p.get("fields", ["text"]))
        bad = [f for f in self.fields if f not in DOC_FIELDS]
        if bad or not self.fields:
            raise ValueError(f"unknown document fields {bad}; choose from {DOC_FIELDS}")
        variant = str(p.get("variant", "lucene"))
        check_variant(variant)
        self.params = BM25Params(
            variant=variant,
            k1=float(p.get("k1", 1.5)),
            b=float(p.get("b", 0.75)),
            epsilon=float(p.get("epsilon", 0.25)),
            delta=None if p.get("delta") is None else float(p["delta"]),
        )
        self._tokenizer: Tokenizer | None = None
        self._index: BM25Index | None = None
        self._doc_ids: list[str] = []

    def prepare(self, docs: Sequence[Doc], cache: dict[Any, Any]) -> None:
        """Tokenize the documents (shared through ``cache``) and build the index."""
        self._tokenizer = get_tokenizer(self.tokenizer_name)
        key = ("tokens", self.tokenizer_name, self.fields)
        tokens = cache.get(key)
        if tokens is None:
            tokens = self._tokenizer.tokenize_many([doc_text(d, self.fields) for d in docs])
            cache[key] = tokens
        ranks_key = ("id_ranks",)
        if ranks_key not in cache:
            cache[ranks_key] = id_ranks([d.id for d in docs])
        self._id_rank = cache[ranks_key]
        self._doc_ids = [d.id for d in docs]
        self._index = BM25Index(tokens, self.params)

    def search(self, text: str, depth: int) -> tuple[list[str], list[float]]:
        """Rank the corpus for one question."""
        if self._index is None or self._tokenizer is None:
            raise RuntimeError("prepare() must be called before search()")
        scores = canonical_scores(self._index.scores(self._tokenizer(text)))
        best = top_k(scores, self._id_rank, depth)
        ids = self._doc_ids
        return [ids[i] for i in best], scores[best].tolist()


RETRIEVER_KINDS: dict[str, Callable[[RetrieverSpec], Retriever]] = {
    "bm25": BM25Retriever,
}
"""The retriever registry: kind -> constructor."""

STORED_KINDS = frozenset({"external"})
"""Kinds whose rankings come from outside (an imported run file): never run again."""


def build_retriever(spec: RetrieverSpec) -> Retriever:
    """A retriever for ``spec``.

    Raises:
        ValueError: unknown kind (the message lists the known kinds) or bad parameters.
    """
    try:
        factory = RETRIEVER_KINDS[spec.kind]
    except KeyError:
        known = ", ".join(sorted(RETRIEVER_KINDS))
        raise ValueError(f"unknown retriever kind {spec.kind!r}; known kinds: {known}") from None
    return factory(spec)


def bm25_spec(
    name: str,
    tokenizer: str,
    variant: str = "lucene",
    k1: float = 1.5,
    b: float = 0.75,
    fields: Sequence[str] = ("text",),
    extra: Mapping[str, Any] | None = None,
) -> RetrieverSpec:
    """A BM25 retriever spec with its parameters checked."""
    params: dict[str, Any] = {
        "tokenizer": tokenizer,
        "variant": variant,
        "k1": k1,
        "b": b,
        "fields": list(fields),
    }
    params.update(extra or {})
    spec = RetrieverSpec(name, "bm25", params)
    BM25Retriever(spec)  # validates
    return spec


DEFAULT_RETRIEVERS: tuple[RetrieverSpec, ...] = tuple(
    bm25_spec(f"bm25-{tok}", tok) for tok in ("word", "bigram", "word+bigram", "kiwi")
)
"""The retrievers a new workspace starts with (Lucene BM25, k1 1.5, b 0.75)."""

__all__ = [
    "DEFAULT_DEPTH",
    "DEFAULT_RETRIEVERS",
    "RETRIEVER_KINDS",
    "STORED_KINDS",
    "VARIANTS",
    "BM25Retriever",
    "Retriever",
    "bm25_spec",
    "build_retriever",
    "doc_text",
]
