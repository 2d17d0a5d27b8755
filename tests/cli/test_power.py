"""`goldpan power`: its JSON, its sentence and its refusals (the engine's numbers are in
tests/engine/analysis/test_power.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui.cli import main


def test_power_json_sentence_and_refusals(
    tiny_ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["power", str(tiny_ws), "bm25-word", "bm25-bigram", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["a"] == "bm25-word" and data["metric"] == "mrr" and data["n"] == 3
    # the two rank every gold of the tiny corpus alike: the differences do not vary, and
    # no detectable difference is claimed (it once said "differences >= 0.00")
    assert (data["diff"], data["sd"], data["mde"], data["n_needed"]) == (0.0, 0.0, None, None)
    assert main(["power", str(tiny_ws), "bm25-word", "nope"]) == 2
    assert main(["power", str(tiny_ws), "bm25-word", "bm25-bigram", "--metric", "x@"]) == 2
    assert main(["power", str(tiny_ws), "bm25-word", "bm25-bigram"]) == 0
    out = capsys.readouterr().out
    assert "at 3 questions bm25-word and bm25-bigram score the same mrr on every question" in out
    assert "you can see differences" not in out
