"""`goldpan score`'s table and JSON name the same latency columns (how they are measured is
in tests/engine/retrieve/test_latency.py)."""

from __future__ import annotations

import json

from engine.scoring import LATENCY_HEADERS
from tests.conftest import run_cli


def test_score_and_its_json_name_the_same_latency_columns(tiny_ws, capsys):
    code, out, err = run_cli(capsys, "score", tiny_ws, "--retriever", "bm25-word", "--json")
    assert code == 0, err
    row = json.loads(out)["retrievers"]["bm25-word"]
    assert {"ms_p50", "ms_p95", "ms_max", "timed_alone", "questions_per_s"} <= set(row)
    assert "ms_median" not in row and "ms_per_query" not in row
    code, out, _ = run_cli(capsys, "score", tiny_ws, "--retriever", "bm25-word")
    assert code == 0
    header = next(line for line in out.splitlines() if "retriever" in line)
    assert [h for h in LATENCY_HEADERS if h in header] == list(LATENCY_HEADERS)
