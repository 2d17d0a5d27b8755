"""Retrievers: one protocol (:mod:`engine.retrieve.base`), a registry of kinds, BM25.

Kinds: ``bm25`` (here), ``dense`` and ``rerank`` (:mod:`engine.retrieve.dense`, the
optional sentence-transformers extra), ``rrf`` (:mod:`engine.retrieve.fusion`),
``idboost`` (:mod:`engine.retrieve.idboost`), ``command`` (:mod:`engine.retrieve.command`)
and ``external``: an imported run file, stored and never run again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.retrieve.base import (
    DEFAULT_DEPTH,
    STORED_KINDS,
    PrepareEnv,
    Ranking,
    Retriever,
    RetrieverError,
    doc_fields,
    doc_text,
    param_list,
    trec_order,
)
from engine.retrieve.bm25 import (
    VARIANTS,
    BM25Index,
    BM25Params,
    canonical_scores,
    check_variant,
    id_ranks,
    top_k,
)
from engine.retrieve.command import CommandRetriever
from engine.retrieve.dense import DenseRetriever, RerankRetriever
from engine.retrieve.fusion import RRFRetriever
from engine.retrieve.idboost import IdBoostRetriever
from engine.tokenize import TOKENIZERS, Tokenizer, get_tokenizer, token_counts
from engine.types import RETRIEVER_KIND_NAMES, Doc, Question, RetrieverSpec


class BM25Retriever:
    """BM25 (any variant) over one tokenizer's tokens of the chosen document fields."""

    bases: tuple[str, ...] = ()
    base_depth: int | None = None
    batch_size = 1

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the parameters; nothing is indexed yet."""
        self.spec = spec
        p = dict(spec.params)
        self.tokenizer_name = str(p.get("tokenizer", "word"))
        if self.tokenizer_name not in TOKENIZERS:
            get_tokenizer(self.tokenizer_name)  # raises with the list of known names
        self.fields = doc_fields(p, ["text"])
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

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Tokenize the documents (shared through ``cache``) and build the index."""
        self._tokenizer = get_tokenizer(self.tokenizer_name)
        key = ("token counts", self.tokenizer_name, self.fields)
        tokens = cache.get(key)
        if tokens is None:
            # counts, not token lists: one entry per distinct term keeps the memory a
            # small multiple of the largest document (token_counts)
            tokens = token_counts(self._tokenizer, [doc_text(d, self.fields) for d in docs])
            cache[key] = tokens
        ranks_key = ("id_ranks",)
        if ranks_key not in cache:
            cache[ranks_key] = id_ranks([d.id for d in docs])
        self._id_rank = cache[ranks_key]
        self._doc_ids = [d.id for d in docs]
        self._index = BM25Index(tokens, self.params)

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Rank the corpus for each question."""
        return [self.search(q.text, depth) for q in questions]

    def search(self, text: str, depth: int) -> Ranking:
        """Rank the corpus for one question."""
        if self._index is None or self._tokenizer is None:
            raise RuntimeError("prepare() must be called before search()")
        scores = canonical_scores(self._index.scores(self._tokenizer(text)))
        best = top_k(scores, self._id_rank, depth)
        ids = self._doc_ids
        return [ids[i] for i in best], scores[best].tolist()


RETRIEVER_KINDS: dict[str, Callable[[RetrieverSpec], Retriever]] = {
    "bm25": BM25Retriever,
    "dense": DenseRetriever,
    "rerank": RerankRetriever,
    "rrf": RRFRetriever,
    "idboost": IdBoostRetriever,
    "command": CommandRetriever,
}
"""The retriever registry: kind -> constructor."""
assert set(RETRIEVER_KINDS) | STORED_KINDS == set(RETRIEVER_KIND_NAMES), "engine.types names"


def build_retriever(spec: RetrieverSpec) -> Retriever:
    """A retriever for ``spec``.

    Raises:
        ValueError: unknown kind (the message lists the known kinds) or bad parameters.
    """
    try:
        factory = RETRIEVER_KINDS[spec.kind]
    except KeyError:
        known = ", ".join(sorted(RETRIEVER_KINDS))
        if spec.kind in STORED_KINDS:
            raise ValueError(f"{spec.name} is an imported run; it cannot be run") from None
        raise ValueError(
            f"retriever {spec.name!r} (table retrievers): unknown kind {spec.kind!r}; "
            f"known kinds: {known}"
        ) from None
    try:
        return factory(spec)
    except (TypeError, AttributeError) as exc:  # params of the wrong JSON types
        raise ValueError(
            f"retriever {spec.name!r} (table retrievers): parameters of the wrong type ({exc})"
        ) from None


def bases_of(spec: RetrieverSpec) -> tuple[str, ...]:
    """The retrievers whose rankings ``spec`` reads (its ``of`` parameter)."""
    of = spec.params.get("of")
    return tuple(param_list(of, "of")) if of else ()


def dependents(specs: Sequence[RetrieverSpec], name: str) -> list[str]:
    """Names of the retrievers that read ``name``'s rankings."""
    return [s.name for s in specs if name in bases_of(s)]


def check_spec(spec: RetrieverSpec, existing: Sequence[RetrieverSpec]) -> None:
    """Validate a new retriever against the workspace's: parameters, and bases that exist.

    Raises:
        ValueError: bad parameters, an unknown base, or a base that is the retriever itself.
    """
    build_retriever(spec)
    names = {s.name for s in existing}
    for base in bases_of(spec):
        if base == spec.name:
            raise ValueError(f"{spec.name} cannot read its own rankings")
        if base not in names:
            known = ", ".join(sorted(names)) or "none"
            raise ValueError(f"unknown base retriever {base!r}; this workspace has: {known}")


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
    "PrepareEnv",
    "Ranking",
    "RetrieverError",
    "bases_of",
    "check_spec",
    "dependents",
    "trec_order",
    "DEFAULT_RETRIEVERS",
    "RETRIEVER_KINDS",
    "STORED_KINDS",
    "VARIANTS",
    "BM25Retriever",
    "Retriever",
    "bm25_spec",
    "build_retriever",
    "param_list",
    "doc_text",
]
