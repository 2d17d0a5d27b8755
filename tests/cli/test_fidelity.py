"""`goldpan fidelity`: its sentence, its warning on stderr and its refusal of an unknown
retriever (the figures themselves are checked against scipy in
tests/engine/analysis/test_fidelity.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.demo import build_demo
from tests.conftest import run_cli
from tests.engine.analysis.test_fidelity import write_flat_run


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fid") / "demo.db"
    build_demo(path, pool=False, models=False).close()
    return path


def test_fidelity_prints_the_top_1_agreement_its_json_gives(demo, capsys):
    code, out, err = run_cli(capsys, "fidelity", demo, "bm25-word", "bm25-bigram", "--json")
    assert code == 0, err
    got = json.loads(out)
    code, out, err = run_cli(capsys, "fidelity", demo, "bm25-word", "bm25-bigram")
    text = " ".join(out.split())
    assert code == 0 and "top-1 agreement" in text and f"{got['top1_agreement']:.1%}" in text


def test_a_mostly_tied_run_is_a_warning_on_stderr(demo, tmp_path, capsys):
    trec = write_flat_run(demo, tmp_path / "flat.trec")
    code, _, err = run_cli(capsys, "import", "run", demo, trec, "--name", "flat", "--replace")
    assert code == 0, err
    code, out, err = run_cli(capsys, "fidelity", demo, "flat", "bm25-word")
    assert code == 0, err
    assert "warning: flat's top 10 is mostly ties" in " ".join(err.split())


def test_unknown_retrievers_exit_2_naming_the_known_ones(demo, capsys):
    code, out, err = run_cli(capsys, "fidelity", demo, "bm25-wrod", "bm25-bigram")
    text = " ".join(err.split())
    assert code == 2 and "unknown retriever 'bm25-wrod'" in text and "bm25-word" in text
    assert out == ""
