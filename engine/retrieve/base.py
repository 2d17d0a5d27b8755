"""What every retriever kind shares: the protocol, the errors, the document fields.

A retriever is built from a :class:`~engine.types.RetrieverSpec`, indexes the corpus once
with :meth:`Retriever.prepare`, then ranks questions with :meth:`Retriever.rank`. Kinds
that read other retrievers' rankings (fusion, rerank, id boost) name them in ``bases``;
the runner brings those up to date first and hands their rankings over.

Ranking order is trec_eval's everywhere (:mod:`engine.retrieve.order`): score descending,
then doc id descending by code point, so an exported run re-sorted by trec_eval gives the
same order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from engine.errors import BadInput, GoldpanError
from engine.names import param_list as param_list  # its home is engine.names
from engine.types import EXTERNAL_KIND as EXTERNAL_KIND  # their home is engine.types
from engine.types import STORED_KINDS as STORED_KINDS
from engine.types import Doc, Question, RankedBatch, RetrieverSpec

Ranking = tuple[list[str], list[float]]
"""Doc ids and their scores, in ranking order."""

Progress = Callable[[str, int, int], None]
"""progress(what, done, total)."""


class RetrieverError(GoldpanError):
    """A retriever cannot run as configured (missing extra, bad command output, ...)."""


class EmbeddingStore(Protocol):
    """Where dense retrievers keep document vectors (the workspace)."""

    readonly: bool
    """Vectors can be read but not stored (they are then computed for this run only)."""

    def embeddings(self, model: str) -> dict[str, tuple[str, bytes]]:
        """Doc id -> (doc hash, float32 little-endian vector)."""
        ...

    def write_embeddings(self, model: str, rows: Iterable[tuple[str, str, Sequence[float]]]) -> int:
        """Store vectors: ``(doc id, doc hash, vector)`` rows."""
        ...


class IndexStore(Protocol):
    """Where BM25 keeps a corpus's term counts between runs (the workspace)."""

    readonly: bool

    def term_counts(self, key: str, corpus_hash: str) -> dict[str, Any] | None:
        """The record stored under ``key`` for this corpus, or None."""
        ...

    def write_term_counts(self, key: str, corpus_hash: str, record: dict[str, Any]) -> None:
        """Store a record under ``key`` (replacing that of an older corpus)."""
        ...


@dataclass(frozen=True)
class PrepareEnv:
    """What some kinds need beyond the documents while indexing."""

    store: EmbeddingStore | None = None
    progress: Progress | None = None
    index_store: IndexStore | None = None
    """Where term counts are kept between runs (None: built in memory each time)."""
    corpus_hash: str | None = None
    """The hash of the documents handed to ``prepare`` (what a stored index must match)."""
    hub_models: frozenset[str] = frozenset()
    """Model names the owner trusted for this workspace: they may load from the hub
    (:meth:`engine.trust.TrustStore.hub_models`); any other loads from a local folder."""


class Retriever(Protocol):
    """Indexes a corpus once, then ranks documents for questions."""

    spec: RetrieverSpec
    bases: tuple[str, ...]
    """Retrievers whose cached rankings :meth:`rank` reads (empty for first-stage kinds)."""
    base_depth: int | None
    """How deep those rankings must be cached (None: as deep as this retriever's)."""

    @property
    def batch_size(self) -> int:
        """Questions per :meth:`rank` call (1 keeps per-question latency exact)."""
        ...

    def prepare(self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv) -> None:
        """Index the corpus. ``cache`` is shared by retrievers in one pool run."""
        ...

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """The best ``depth`` documents of each question.

        ``base[i]`` holds question i's rankings by each retriever in :attr:`bases`.
        """
        ...


@runtime_checkable
class OutsideRetriever(Protocol):
    """A retriever whose output depends on something outside the workspace.

    The team's program (``command``), a search engine behind a URL (``opensearch``,
    ``http``): their rankings can change while the corpus, the questions and the
    retriever's parameters stay the same. The runner asks :meth:`cache_key` before each
    pool; a key joins the cached rankings' input hash, None makes every ranking new.
    """

    key_words: str
    """What the key is, for people: ``cache key``, ``index identity``."""

    def cache_key(self) -> str | None:
        """A hash of what the output depends on now (None: it cannot be vouched for).

        Raises:
            RetrieverError: what the key is read from cannot be read (naming the retriever).
        """
        ...


@runtime_checkable
class HasWarnings(Protocol):
    """A retriever with something to say on every run (TLS not checked, say)."""

    warnings: tuple[str, ...]
    """Whole sentences, each naming the retriever."""


@runtime_checkable
class BatchRanker(Protocol):
    """A first-stage retriever that can hand a batch's rankings over as arrays.

    The runner stores them without building a list per ranking (BM25 ranks thousands
    of questions with one sparse product).
    """

    @property
    def batch_size(self) -> int:
        """Questions per :meth:`rank_batch` call."""
        ...

    def rank_batch(self, questions: Sequence[Question], depth: int) -> RankedBatch:
        """The best ``depth`` documents of each question, as arrays."""
        ...


DOC_FIELDS = ("title", "text")


def doc_fields(params: Mapping[str, Any], default: Sequence[str]) -> tuple[str, ...]:
    """The document fields a retriever reads (its ``fields`` parameter), checked."""
    return check_fields(params.get("fields", list(default)))


def check_fields(value: Any) -> tuple[str, ...]:
    """Document field names, checked against :data:`DOC_FIELDS`."""
    fields = tuple(value)
    bad = [f for f in fields if f not in DOC_FIELDS]
    if bad or not fields:
        raise BadInput(f"unknown document fields {bad}; choose from {DOC_FIELDS}")
    return fields


def doc_text(doc: Doc, fields: Sequence[str]) -> str:
    """The text a retriever reads for a document: the chosen fields, one per line."""
    return "\n".join(doc.title if f == "title" else doc.text for f in fields)


def one_base(params: Mapping[str, Any], kind: str) -> tuple[str]:
    """The single retriever a re-ranking kind reads (its ``of`` parameter)."""
    bases = param_list(params.get("of"), f"{kind} --of")
    if len(bases) != 1:
        raise BadInput(f"{kind} reads exactly one base retriever (--of NAME)")
    return (bases[0],)
