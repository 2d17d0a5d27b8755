"""`goldpan retriever add` and `goldpan pool` of a dense or rerank retriever without
sentence-transformers: exit 2, saying what to install, nothing written."""

from __future__ import annotations

import importlib.util

from engine.workspace import Workspace
from tests.conftest import run_cli as run


def test_without_sentence_transformers_adding_or_pooling_says_what_to_install(
    tiny_ws, capsys, monkeypatch
):
    assert (
        run(capsys, "retriever", "add", tiny_ws, "d-ok", "--kind", "dense", "--model", "x")[0] == 0
    )
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        if name.split(".")[0] == "sentence_transformers":
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with Workspace.open(tiny_ws, readonly=True) as ws:
        before = ws.retrievers()
    for argv in (
        ["d", "--kind", "dense", "--model", "x"],
        ["r", "--kind", "rerank", "--of", "bm25-word", "--model", "x"],
    ):
        code, _, err = run(capsys, "retriever", "add", tiny_ws, *argv)
        assert code == 2
        assert "pip install" in err and "goldpan[dense]" in err
    code, _, err = run(capsys, "pool", tiny_ws, "--retriever", "d-ok")
    assert code == 2
    assert "pip install" in err and "goldpan[dense]" in err
    with Workspace.open(tiny_ws, readonly=True) as ws:
        assert ws.retrievers() == before
        assert ws.runs("d-ok") == {}
