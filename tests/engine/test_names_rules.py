"""The retriever-name grammar lives in engine.names: the CLI and Workspace.add_retriever agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import BadInput
from engine.names import check_retriever_name, is_retriever_name
from engine.types import RetrieverSpec
from engine.workspace import Workspace


@pytest.mark.parametrize("name", ["bm25-word", "es_prod.v2", "밀집", "x"])
def test_names_a_command_line_can_carry(name: str) -> None:
    assert is_retriever_name(name) and check_retriever_name(name) == name


@pytest.mark.parametrize("name", ["", "a b", "a:b", "a=b", "a,b", "tab\there", "end\n"])
def test_names_that_would_split_an_option_are_refused(name: str) -> None:
    assert not is_retriever_name(name)
    with pytest.raises(BadInput, match=r"use no spaces, ':', '=' or ','"):
        check_retriever_name(name, "--name")


def test_the_engine_refuses_them_when_a_spec_is_added(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "w.db")
    try:
        with pytest.raises(BadInput, match=r"retriever name 'a:b'"):
            ws.add_retriever(RetrieverSpec("a:b", "bm25", {}))
        assert ws.retriever("a:b") is None  # nothing written
        ws.add_retriever(RetrieverSpec("ok", "bm25", {}))
        assert ws.retriever("ok") is not None
    finally:
        ws.close()
