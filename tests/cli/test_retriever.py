"""`goldpan retriever add` and `remove`: every parameter a retriever kind declares is an
option, bad parameters are exit 2 naming them, and a base is kept while a retriever reads
it. What the kinds rank is in tests/engine/retrieve/test_retrievers.py."""

from __future__ import annotations

import pytest

from engine.retrieve import KIND_PARAMS, bm25_spec
from engine.workspace import Workspace
from tests.conftest import run_cli as run


def test_every_declared_parameter_is_a_retriever_add_option(capsys):
    from tui.cli import main

    with pytest.raises(SystemExit):
        main(["retriever", "add", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for kind, params in KIND_PARAMS.items():
        assert kind in text
        for p in params:
            if p.cli:
                assert p.flag in text, (kind, p.name)
    assert "(default: 1.5)" in text and "(default: 0.75)" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--of", "bm25-word,nope"], "unknown base retriever 'nope'"),
        (["--of", "bm25-word,bm25-word"], "twice"),
        (["--of", "bm25-word,bm25-bigram", "--weights", "1,2,3"], "2 retrievers but 3 weights"),
        (["--of", "bm25-word,bm25-bigram", "--k", "-1"], "k must be"),
        (["--of", "f,bm25-word"], "own rankings"),
    ],
)
def test_rrf_bad_parameters_are_refused(tiny_ws, capsys, argv, message):
    with Workspace.open(tiny_ws, readonly=True) as ws:
        before = ws.retrievers()
    code, _, err = run(capsys, "retriever", "add", tiny_ws, "f", "--kind", "rrf", *argv)
    assert code == 2
    assert message in err
    with Workspace.open(tiny_ws, readonly=True) as ws:
        assert ws.retrievers() == before


def test_idboost_needs_exactly_one_base(tiny_ws, capsys):
    code, _, err = run(
        capsys,
        "retriever",
        "add",
        tiny_ws,
        "ib",
        "--kind",
        "idboost",
        "--of",
        "bm25-word,bm25-bigram",
    )
    assert code == 2 and "exactly one base" in err


def test_removing_a_base_is_refused_while_a_fusion_reads_it(tiny_ws, capsys):
    code, _, err = run(
        capsys, "retriever", "add", tiny_ws, "f", "--kind", "rrf", "--of", "bm25-word,bm25-bigram"
    )
    assert code == 0, err
    assert (
        run(capsys, "retriever", "add", tiny_ws, "ib", "--kind", "idboost", "--of", "bm25-word")[0]
        == 0
    )
    assert run(capsys, "pool", tiny_ws, "--retriever", "f")[0] == 0
    code, _, err = run(capsys, "retriever", "remove", tiny_ws, "bm25-word")
    assert code == 2
    assert "f" in err and "ib" in err and "bm25-word" in err
    with Workspace.open(tiny_ws, readonly=True) as ws:
        assert ws.retriever("bm25-word") is not None
        assert len(ws.runs("bm25-word")) == 4
    assert run(capsys, "retriever", "remove", tiny_ws, "f")[0] == 0
    code, _, err = run(capsys, "retriever", "remove", tiny_ws, "bm25-word")
    assert code == 2 and "ib" in err
    assert run(capsys, "retriever", "remove", tiny_ws, "ib")[0] == 0
    assert run(capsys, "retriever", "remove", tiny_ws, "bm25-word")[0] == 0
    with Workspace.open(tiny_ws, readonly=True) as ws:
        assert ws.retriever("bm25-word") is None
        assert ws.runs("bm25-word") == {}


def test_retriever_add_help_lists_the_fuse_options(capsys):
    code, out, _ = run(capsys, "retriever", "add", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "fuse (--of [--method] [--norm] [--weights])" in text
    assert "{sum,mnz,wsum}" in text and "{min-max,max,sum,zmuv,none}" in text


def test_retriever_add_takes_the_variant(tmp_path, capsys):
    bm25_spec("x", "word", variant="lucene-quantized")
    ws = tmp_path / "w.db"
    assert run(capsys, "new", ws)[0] == 0
    code, _, err = run(
        capsys,
        "retriever",
        "add",
        ws,
        "bm25-q",
        "--tokenizer",
        "word",
        "--variant",
        "lucene-quantized",
    )
    assert code == 0, err
    code, out, _ = run(capsys, "retriever", "add", "--help")
    assert "lucene-quantized" in out
