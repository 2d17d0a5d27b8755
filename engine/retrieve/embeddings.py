"""The one cache of document embeddings: computed once per model and document content.

Every kind that embeds documents (the ``dense`` and ``e5`` retrievers, the ``dense`` model
judge of :mod:`engine.judges.run`) reads and fills it through :func:`document_vectors`. The
vectors live in the workspace's ``embeddings`` table under a key that names everything
they depend on besides the document (the model, its fields, its prefix: the kind's
``store_key``) and each row keeps the document's hash (id, title, text and fields): a
re-pool embeds only new or changed documents, and a judge and a retriever of the same
model share the vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from engine.retrieve.base import EmbeddingStore, Progress
from engine.types import Doc

EMBED_BATCH = 64
"""Documents embedded per call (and stored per transaction)."""

Vector = np.ndarray[Any, np.dtype[np.float32]]

Embed = Callable[[list[str]], np.ndarray[Any, np.dtype[np.float32]]]
"""Texts -> their vectors, one row each (normalised: the dot product is the cosine)."""


MAX_SQUARED_NORM = 1.001
"""A stored vector's largest squared length: every kind stores its vectors normalised
(length 1, up to float32's rounding; 0 for a text with no token)."""


def sound(vector: Vector) -> bool:
    """Whether a stored vector can be one goldpan embedded: finite and normalised.

    The vectors are a cache inside a file people send each other: a received workspace's
    NaN or 1e38 components made every cosine with them NaN or infinite. One that is not
    sound is embedded again, as a document whose text changed is.
    """
    wide = vector.astype(np.float64)
    return bool(np.isfinite(wide).all()) and float(wide @ wide) <= MAX_SQUARED_NORM


def document_vectors(
    docs: Sequence[Doc],
    key: str,
    text_of: Callable[[Doc], str],
    embed: Embed,
    store: EmbeddingStore | None,
    *,
    progress: Progress | None = None,
    label: str = "embedding documents",
) -> dict[str, Vector]:
    """Each document's vector: stored under ``key`` for its current hash, else embedded now.

    A stored vector that is not :func:`sound` is embedded again. New vectors are stored
    batch by batch (unless the store is read-only: then they serve this run only), so an
    interrupted run keeps what it embedded.
    """
    have = store.embeddings(key) if store is not None else {}
    out: dict[str, Vector] = {}
    todo: list[Doc] = []
    for d in docs:
        found = have.get(d.id)
        vector = (
            np.frombuffer(found[1], "<f4") if found is not None and found[0] == d.hash else None
        )
        if vector is not None and sound(vector):
            out[d.id] = vector
        else:
            todo.append(d)
    if progress:
        progress(label, 0, len(todo))
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start : start + EMBED_BATCH]
        vectors = np.asarray(embed([text_of(d) for d in batch]), dtype=np.float32)
        if store is not None and not store.readonly:
            store.write_embeddings(
                key, [(d.id, d.hash, v.tolist()) for d, v in zip(batch, vectors, strict=True)]
            )
        out.update((d.id, v) for d, v in zip(batch, vectors, strict=True))
        if progress:
            progress(label, min(start + EMBED_BATCH, len(todo)), len(todo))
    return out
