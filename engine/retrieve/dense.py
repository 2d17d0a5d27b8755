"""Dense retrieval and cross-encoder reranking, on the optional sentence-transformers extra.

``dense``: documents are embedded once (normalised, so the dot product is the cosine)
and the vectors are kept in the workspace, keyed by model and document hash
(:mod:`engine.retrieve.embeddings`): a re-pool embeds only new or changed documents.
Scores are cosines computed in float64 from the stored float32 vectors and rounded like
every ranking's, so ties go to the larger doc id. Every document is ranked, whatever the
sign of its cosine. The ``e5`` kind (:mod:`engine.retrieve.e5`) ranks the same way with a
model bundled in a package.

``rerank``: a CrossEncoder scores (question, document) pairs for the ``top`` documents of
a base retriever's ranking and orders them by that score; it ranks only those documents.

Neither kind imports torch or sentence-transformers until it is used; without the extra,
building one raises :class:`~engine.retrieve.base.RetrieverError` saying what to install.
A model name loads from a local folder, the hub off, unless the owner trusted it
(:mod:`engine.retrieve.models`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engine.errors import BadInput
from engine.retrieve.base import (
    PrepareEnv,
    Ranking,
    check_fields,
    doc_fields,
    doc_text,
    one_base,
)
from engine.retrieve.embeddings import EMBED_BATCH, Vector, document_vectors
from engine.retrieve.models import load_model, require_extra
from engine.retrieve.order import canonical_scores, id_ranks, top_k, trec_order
from engine.retrieve.params import LIST, OF, Param, default_of
from engine.types import Doc, Question, RetrieverSpec


def _model_name(params: Mapping[str, Any], kind: str) -> str:
    model = str(params.get("model") or "").strip()
    if not model:
        raise BadInput(f"a {kind} retriever needs --model NAME_OR_PATH")
    return model


MODEL = Param(
    "model", str, None, "a sentence-transformers model", required=True, metavar="NAME_OR_PATH"
)
"""The model of the dense and rerank kinds (a name, or a folder holding one)."""

FIELDS = Param(
    "fields",
    LIST,
    ("title", "text"),
    "document fields read: text, title or title,text",
    lookup=check_fields,
    metavar="FIELDS",
)
"""The document fields the dense and rerank kinds read (the title as well by default)."""


class EmbeddingRetriever(ABC):
    """Ranks by the cosine of a bi-encoder's vectors (the ``dense`` and ``e5`` kinds).

    A kind says how its model loads and embeds (:meth:`load`, :meth:`embed_documents`,
    :meth:`embed_queries`) and what its stored vectors depend on (:attr:`store_key`);
    this class keeps the vectors (:func:`~engine.retrieve.embeddings.document_vectors`)
    and ranks.
    """

    spec: RetrieverSpec
    fields: tuple[str, ...]
    bases: tuple[str, ...] = ()
    base_depth: int | None = None
    batch_size = 64

    def __init__(self, spec: RetrieverSpec) -> None:
        """Start unprepared (a kind's own constructor checks its parameters first)."""
        self.spec = spec
        self._model: Any = None
        self._matrix: np.ndarray[Any, np.dtype[np.float64]] | None = None
        self._doc_ids: list[str] = []
        self._id_rank: Any = None

    @property
    @abstractmethod
    def store_key(self) -> str:
        """The embeddings-table key: what the stored vectors depend on besides the text."""
        raise NotImplementedError

    @abstractmethod
    def load(self, cache: dict[Any, Any], env: PrepareEnv) -> None:
        """Load the model (once per pool's ``cache``)."""
        raise NotImplementedError

    @abstractmethod
    def embed_documents(self, texts: list[str]) -> Vector:
        """Documents' vectors, normalised (the dot product is the cosine)."""
        raise NotImplementedError

    @abstractmethod
    def embed_queries(self, texts: list[str]) -> Vector:
        """Questions' vectors, normalised."""
        raise NotImplementedError

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Load the model, embed the documents the store lacks, and stack every vector."""
        env = env or PrepareEnv()
        if env.progress:
            env.progress(f"{self.spec.name}: loading the model", 0, 1)
        self.load(cache, env)
        vectors = document_vectors(
            docs,
            self.store_key,
            lambda d: doc_text(d, self.fields),
            self.embed_documents,
            env.store,
            progress=env.progress,
            label=f"{self.spec.name}: embedding documents",
        )
        self._matrix = (
            np.vstack([vectors[d.id] for d in docs]).astype(np.float64)
            if docs
            else np.zeros((0, 0))
        )
        self._doc_ids = [d.id for d in docs]
        key = ("id_ranks",)
        if key not in cache:
            cache[key] = id_ranks(self._doc_ids)
        self._id_rank = cache[key]

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Embed the questions in one batch and rank the corpus for each."""
        if self._matrix is None:
            raise RuntimeError("prepare() must be called before rank()")
        if not questions:
            return []
        queries = self.embed_queries([q.text for q in questions])
        sims = self._matrix @ queries.astype(np.float64).T
        out: list[Ranking] = []
        for j in range(len(questions)):
            scores = canonical_scores(np.ascontiguousarray(sims[:, j]))
            best = top_k(scores, self._id_rank, depth, positive_only=False)
            out.append(([self._doc_ids[i] for i in best], scores[best].tolist()))
        return out


class DenseRetriever(EmbeddingRetriever):
    """Cosine similarity between sentence-transformers embeddings."""

    PARAMS: tuple[Param, ...] = (
        MODEL,
        FIELDS,
        Param("query_prefix", str, "", "text put before each question"),
        Param("doc_prefix", str, "", "text put before each document"),
    )
    """The parameters of the ``dense`` kind."""

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the parameters and check that the extra is installed."""
        super().__init__(spec)
        p = spec.params
        self.model_name = _model_name(p, "dense")
        self.fields = doc_fields(p, default_of(self.PARAMS, "fields"))
        self.query_prefix = str(p.get("query_prefix", default_of(self.PARAMS, "query_prefix")))
        self.doc_prefix = str(p.get("doc_prefix", default_of(self.PARAMS, "doc_prefix")))
        require_extra()

    @property
    def store_key(self) -> str:
        """The model's name, the fields read and the document prefix."""
        return f"{self.model_name}|{','.join(self.fields)}|{self.doc_prefix}"

    def load(self, cache: dict[Any, Any], env: PrepareEnv) -> None:
        """Load the model, from the hub only when its name is trusted."""
        self._model = load_model(self.model_name, cache, online=self.model_name in env.hub_models)

    def embed_documents(self, texts: list[str]) -> Vector:
        """Documents' vectors, with the document prefix."""
        return encode(self._model, [self.doc_prefix + t for t in texts])

    def embed_queries(self, texts: list[str]) -> Vector:
        """Questions' vectors, with the query prefix."""
        return encode(self._model, [self.query_prefix + t for t in texts])


def encode(model: Any, texts: Sequence[str]) -> Vector:
    """A sentence-transformers model's normalised float32 vectors of ``texts``."""
    out = model.encode(
        list(texts),
        batch_size=EMBED_BATCH,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(out, dtype=np.float32)


class RerankRetriever:
    """A CrossEncoder over the top of a base retriever's ranking."""

    PARAMS: tuple[Param, ...] = (
        MODEL,
        OF,
        Param("top", int, 50, "how many base results are reranked"),
        FIELDS,
    )
    """The parameters of the ``rerank`` kind."""

    bases: tuple[str, ...]
    batch_size = 1

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the parameters and check that the extra is installed."""
        self.spec = spec
        p = spec.params
        self.model_name = _model_name(p, "rerank")
        self.bases = one_base(p, "rerank")
        self.top = int(p.get("top", default_of(self.PARAMS, "top")))
        if self.top < 1:
            raise BadInput("rerank --top must be at least 1")
        self.base_depth: int | None = self.top
        self.fields = doc_fields(p, default_of(self.PARAMS, "fields"))
        require_extra()
        self._model: Any = None
        self._texts: dict[str, str] = {}

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Load the cross-encoder and keep each document's passage."""
        env = env or PrepareEnv()
        online = self.model_name in env.hub_models
        self._model = load_model(self.model_name, cache, cross=True, online=online)
        self._texts = {d.id: doc_text(d, self.fields) for d in docs}

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Score each question's top base documents with the cross-encoder."""
        out: list[Ranking] = []
        for q, b in zip(questions, base, strict=True):
            ids = [d for d in b.get(self.bases[0], ([], []))[0][: self.top] if d in self._texts]
            if not ids:
                out.append(([], []))
                continue
            pairs = [(q.text, self._texts[d]) for d in ids]
            raw = np.asarray(
                self._model.predict(pairs, show_progress_bar=False), dtype=np.float64
            ).reshape(-1)
            scores = canonical_scores(raw)
            out.append(trec_order(dict(zip(ids, scores.tolist(), strict=True)), depth))
        return out
