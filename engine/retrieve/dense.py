"""Dense retrieval and cross-encoder reranking, on the optional sentence-transformers extra.

``dense``: documents are embedded once (normalised, so the dot product is the cosine)
and the vectors are kept in the workspace, keyed by model and document hash: a re-pool
embeds only new or changed documents. Scores are cosines computed in float64 from the
stored float32 vectors and rounded like every ranking's, so ties go to the larger doc id.
Every document is ranked, whatever the sign of its cosine.

``rerank``: a CrossEncoder scores (question, document) pairs for the ``top`` documents of
a base retriever's ranking and orders them by that score; it ranks only those documents.

Neither kind imports torch or sentence-transformers until it is used; without the extra,
building one raises :class:`~engine.retrieve.base.RetrieverError` saying what to install.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engine.errors import BadInput
from engine.retrieve.base import (
    PrepareEnv,
    Ranking,
    RetrieverError,
    check_fields,
    doc_fields,
    doc_text,
    one_base,
)
from engine.retrieve.order import canonical_scores, id_ranks, top_k, trec_order
from engine.retrieve.params import LIST, OF, Param, default_of
from engine.types import Doc, Question, RetrieverSpec

INSTALL_HINT = (
    "dense and rerank retrievers need the optional extra: "
    "pip install torch 'goldpan[dense]' (on a CPU-only machine, a CPU build of torch)"
)
EMBED_BATCH = 64


def require_extra() -> None:
    """Raise :class:`RetrieverError` with the install command when the extra is missing."""
    if importlib.util.find_spec("sentence_transformers") is None:
        raise RetrieverError(INSTALL_HINT)


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


class DenseRetriever:
    """Cosine similarity between sentence-transformers embeddings."""

    PARAMS: tuple[Param, ...] = (
        MODEL,
        FIELDS,
        Param("query_prefix", str, "", "text put before each question"),
        Param("doc_prefix", str, "", "text put before each document"),
    )
    """The parameters of the ``dense`` kind."""

    bases: tuple[str, ...] = ()
    base_depth: int | None = None
    batch_size = 64

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the parameters and check that the extra is installed."""
        self.spec = spec
        p = spec.params
        self.model_name = _model_name(p, "dense")
        self.fields = doc_fields(p, default_of(self.PARAMS, "fields"))
        self.query_prefix = str(p.get("query_prefix", default_of(self.PARAMS, "query_prefix")))
        self.doc_prefix = str(p.get("doc_prefix", default_of(self.PARAMS, "doc_prefix")))
        require_extra()
        self._model: Any = None
        self._matrix: np.ndarray[Any, np.dtype[np.float64]] | None = None
        self._doc_ids: list[str] = []
        self._id_rank: Any = None

    @property
    def store_key(self) -> str:
        """The embeddings-table key: what the stored vectors depend on besides the text."""
        return f"{self.model_name}|{','.join(self.fields)}|{self.doc_prefix}"

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Load the model, embed the documents the store lacks, and stack every vector."""
        env = env or PrepareEnv()
        if env.progress:
            env.progress(f"{self.spec.name}: loading the model", 0, 1)
        self._model = load_model(self.model_name, cache)
        have = env.store.embeddings(self.store_key) if env.store is not None else {}
        todo = [d for d in docs if have.get(d.id, ("", b""))[0] != d.hash]
        label = f"{self.spec.name}: embedding documents"
        if env.progress:
            env.progress(label, 0, len(todo))
        fresh: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}
        for start in range(0, len(todo), EMBED_BATCH):
            batch = todo[start : start + EMBED_BATCH]
            texts = [self.doc_prefix + doc_text(d, self.fields) for d in batch]
            vectors = self._encode(texts)
            rows = [(d.id, d.hash, v.tolist()) for d, v in zip(batch, vectors, strict=True)]
            if env.store is not None and not env.store.readonly:
                env.store.write_embeddings(self.store_key, rows)
            fresh.update((d.id, v) for d, v in zip(batch, vectors, strict=True))
            if env.progress:
                env.progress(label, min(start + EMBED_BATCH, len(todo)), len(todo))
        rows_in_order = []
        for d in docs:
            v = fresh.get(d.id)
            rows_in_order.append(v if v is not None else np.frombuffer(have[d.id][1], "<f4"))
        self._matrix = (
            np.vstack(rows_in_order).astype(np.float64) if rows_in_order else np.zeros((0, 0))
        )
        self._doc_ids = [d.id for d in docs]
        key = ("id_ranks",)
        if key not in cache:
            cache[key] = id_ranks(self._doc_ids)
        self._id_rank = cache[key]

    def _encode(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        out = self._model.encode(
            list(texts),
            batch_size=EMBED_BATCH,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Embed the questions in one batch and rank the corpus for each."""
        if self._matrix is None:
            raise RuntimeError("prepare() must be called before rank()")
        if not questions:
            return []
        queries = self._encode([self.query_prefix + q.text for q in questions])
        sims = self._matrix @ queries.astype(np.float64).T
        out: list[Ranking] = []
        for j in range(len(questions)):
            scores = canonical_scores(np.ascontiguousarray(sims[:, j]))
            best = top_k(scores, self._id_rank, depth, positive_only=False)
            out.append(([self._doc_ids[i] for i in best], scores[best].tolist()))
        return out


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
        self._model = load_model(self.model_name, cache, cross=True)
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


def load_model(name: str, cache: dict[Any, Any], *, cross: bool = False) -> Any:
    """A SentenceTransformer (or CrossEncoder) for ``name``, loaded once per cache."""
    key = ("model", "cross" if cross else "bi", name)
    model = cache.get(key)
    if model is not None:
        return model
    require_extra()
    try:
        if cross:
            from sentence_transformers import CrossEncoder

            model = CrossEncoder(name)
        else:
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(name)
    except Exception as exc:  # the library's errors name the model; keep its message
        raise RetrieverError(f"cannot load model {name!r}: {exc}") from exc
    cache[key] = model
    return model
