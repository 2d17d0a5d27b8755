"""Every number a workspace or an option holds is finite and in range, or refused (exit 2).

A received workspace's retriever parameters can be edited to anything JSON holds, and an
option can be typed as ``1e300``: each is refused where it is read, naming the retriever
or the option, never an internal error. Scores from outside that are finite but huge
(±1.7e308, as an engine may answer) fuse into a finite ranking, the one exact arithmetic
gives.
"""

from __future__ import annotations

import json
import sqlite3
from decimal import Decimal, getcontext
from pathlib import Path

import pytest

from engine.workspace import Workspace
from tests.conftest import querylog_rows, run_cli, snapshot


def edit_params(ws: Path, name: str, **changes: object) -> None:
    """Change a stored retriever's parameters by hand, as a received file may have them."""
    with sqlite3.connect(ws) as conn:
        params = json.loads(
            conn.execute("SELECT params FROM retrievers WHERE name = ?", (name,)).fetchone()[0]
        )
        params.update(changes)
        text = json.dumps(params).replace('"NaN"', "NaN").replace('"Infinity"', "Infinity")
        conn.execute("UPDATE retrievers SET params = ? WHERE name = ?", (text, name))
    conn.close()


def add_rrf(capsys, ws: Path, *options: str) -> tuple[int, str]:
    argv = ["retriever", "add", ws, "f", "--kind", "rrf", "--of", "bm25-word,bm25-bigram"]
    code, _, err = run_cli(capsys, *argv, *options)
    return code, " ".join(err.split())


def test_a_fusion_weight_beyond_a_million_is_refused_when_added(tiny_ws, capsys):
    code, said = add_rrf(capsys, tiny_ws, "--weights", "1e308,1")
    assert code == 2, said
    assert "rrf weights must be finite and >= 0, at most 1,000,000 each" in said
    with Workspace.open(tiny_ws, readonly=True) as ws:
        assert "f" not in {s.name for s in ws.retrievers()}


@pytest.mark.parametrize("weight", ["NaN", "Infinity", -1])
def test_a_fusion_weight_not_finite_or_below_zero_in_the_file_is_refused(tiny_ws, capsys, weight):
    assert add_rrf(capsys, tiny_ws)[0] == 0
    edit_params(tiny_ws, "f", weights=[weight, 1])
    code, _, err = run_cli(capsys, "pool", tiny_ws, "--retriever", "f", "--quiet")
    assert code == 2, err
    assert "rrf weights must be finite and >= 0" in " ".join(err.split())
    code, out, _ = run_cli(capsys, "check", tiny_ws)
    assert code == 2 and "table retrievers, row name 'f'" in out


def test_an_rrf_weight_of_1e308_in_the_file_is_refused_not_a_crash(tiny_ws, capsys):
    """It overflowed Σ w/(k + rank) (k 0): an internal error."""
    assert add_rrf(capsys, tiny_ws, "--k", "0")[0] == 0
    edit_params(tiny_ws, "f", weights=[1.7e308, 1.7e308])
    code, _, err = run_cli(capsys, "pool", tiny_ws, "--retriever", "f", "--quiet")
    assert code == 2, err
    assert "at most 1,000,000 each" in " ".join(err.split()) and "internal error" not in err


def test_a_fusion_depth_beyond_any_ranking_in_the_file_is_refused_not_a_crash(tiny_ws, capsys):
    """A depth of 10**20 overflowed a C long: an internal error."""
    assert add_rrf(capsys, tiny_ws)[0] == 0
    edit_params(tiny_ws, "f", depth=10**20)
    code, _, err = run_cli(capsys, "pool", tiny_ws, "--retriever", "f", "--quiet")
    assert code == 2, err
    assert "rrf depth must be a whole number from 1 to 100,000" in " ".join(err.split())


def test_a_command_timeout_of_1e300_in_the_file_is_refused_not_a_crash(tiny_ws, capsys):
    """It overflowed the clock that waits for the command: an internal error."""
    argv = ["retriever", "add", tiny_ws, "c", "--kind", "command", "--command", "cat"]
    assert run_cli(capsys, *argv)[0] == 0
    edit_params(tiny_ws, "c", timeout=1e300)
    assert run_cli(capsys, "trust", tiny_ws, "--yes")[0] == 0
    code, _, err = run_cli(capsys, "pool", tiny_ws, "--retriever", "c", "--quiet")
    assert code == 2, err
    assert "command timeout must be from 0.1 to 604,800, not 1e+300" in " ".join(err.split())


@pytest.mark.parametrize("value", ["1e300", "0.001"])
def test_a_retriever_timeout_out_of_range_is_refused_as_parsed(tiny_ws, capsys, value):
    argv = ["retriever", "add", tiny_ws, "api", "--kind", "http", "--url", "http://127.0.0.1/"]
    code, _, err = run_cli(capsys, *argv, "--hits-pointer", "/h", "--timeout", value)
    assert code == 2
    assert "argument --timeout" in err and "from 0.1 to 604,800" in err


# -- huge scores from outside --------------------------------------------------------------

RUN_A = {"d1": 1.7e308, "d3": 1e308, "d4": 0.5, "d2": -1.7e308}
RUN_B = {"d2": 1.5e308, "d4": 1.0, "d1": -1e308, "d3": -1.6e308}


def exact_fusion(norm: str, method: str, weights: tuple[int, int]) -> dict[str, Decimal]:
    """ranx's normalizations and combinations in exact decimal arithmetic (80 digits)."""
    getcontext().prec = 80
    floor = Decimal("1e-9")
    total: dict[str, Decimal] = {}
    hits: dict[str, int] = {}
    for run, w in zip((RUN_A, RUN_B), weights, strict=True):
        s = {d: Decimal(v) for d, v in run.items()}  # each float exactly
        lo, hi, n = min(s.values()), max(s.values()), len(s)
        mean = sum(s.values()) / n
        std = (sum((v - mean) ** 2 for v in s.values()) / n).sqrt()
        for d, v in s.items():
            normed = {
                "min-max": (v - lo) / max(hi - lo, floor),
                "max": v / max(hi, floor),
                "sum": (v - lo) / max(sum(s.values()) - n * lo, floor),
                "zmuv": (v - mean) / max(std, floor),
                "none": v,
            }[norm]
            total[d] = total.get(d, Decimal(0)) + w * normed
            hits[d] = hits.get(d, 0) + 1
    return {d: t * (hits[d] if method == "mnz" else 1) for d, t in total.items()}


@pytest.mark.parametrize("norm", ["min-max", "max", "sum", "zmuv", "none"])
@pytest.mark.parametrize("method", ["sum", "mnz", "wsum"])
def test_base_scores_of_1_7e308_fuse_to_a_finite_and_exact_ranking(
    tiny_ws, tmp_path, capsys, norm, method
):
    for name, run in (("a", RUN_A), ("b", RUN_B)):
        path = tmp_path / f"{name}.run"
        path.write_text("".join(f"q1 Q0 {d} 0 {s!r} x\n" for d, s in run.items()))
        assert run_cli(capsys, "import", "run", tiny_ws, path, "--name", name)[0] == 0
    weights = (1, 2) if method == "wsum" else (1, 1)
    options = ["--of", "a,b", "--norm", norm, "--method", method]
    options += ["--weights", "1,2"] if method == "wsum" else []
    code, _, err = run_cli(capsys, "retriever", "add", tiny_ws, "f", "--kind", "fuse", *options)
    assert code == 0, err
    code, _, err = run_cli(capsys, "pool", tiny_ws, "--retriever", "f", "--quiet")
    assert code == 0, err
    with Workspace.open(tiny_ws, readonly=True) as ws:
        fused = ws.runs("f")["q1"]
    exact = exact_fusion(norm, method, weights)
    assert list(fused.doc_ids) == sorted(exact, key=lambda d: (-exact[d], [-ord(c) for c in d]))
    assert all(abs(s) < float("inf") for s in fused.scores), fused.scores


def test_a_stored_score_that_is_not_finite_is_refused_naming_table_and_row(tiny_ws, capsys):
    """A received workspace's cached ranking holding NaN: every reader names the row."""
    import struct

    assert run_cli(capsys, "pool", tiny_ws, "--retriever", "bm25-word", "--quiet")[0] == 0
    with sqlite3.connect(tiny_ws) as conn:
        n = conn.execute("SELECT length(scores) / 8 FROM runs WHERE question_id = 'q1'").fetchone()[
            0
        ]
        nan = struct.pack(f"<{n}d", *[float("nan")] * n)
        conn.execute("UPDATE runs SET scores = ? WHERE question_id = 'q1'", (nan,))
    conn.close()
    code, _, err = run_cli(capsys, "score", tiny_ws, "--no-pool")
    said = " ".join(err.split())
    assert code == 2, err
    assert "table runs, row (retriever 'bm25-word', question 'q1'): score 1 is nan" in said
    code, out, _ = run_cli(capsys, "check", tiny_ws)
    assert code == 2 and "score 1 is nan, not a finite number" in out


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("latency_ms", "1.7e308", "latency_ms is 1.7e+308, not milliseconds from 0 to"),
        ("latency_ms", "9e999", "latency_ms is inf, not a finite number"),
        ("latency_ms", "-5", "latency_ms is -5.0, not milliseconds from 0 to"),
        ("alone_ms", "9e999", "alone_ms is inf, not a finite number"),
        ("alone_ms", "-1e308", "alone_ms is -1e+308, not milliseconds from 0 to"),
    ],
)
def test_a_stored_time_not_finite_or_out_of_range_is_refused_naming_the_row(
    tiny_ws, capsys, column, value, why
):
    """A received workspace's time of 1.7e308 ms overflowed the latency sums (exit 3); an
    infinite or negative one made the percentiles nan or nonsense (exit 0)."""
    assert run_cli(capsys, "pool", tiny_ws, "--retriever", "bm25-word", "--quiet")[0] == 0
    with sqlite3.connect(tiny_ws) as conn:
        conn.execute(f"UPDATE runs SET {column} = {value} WHERE question_id = 'q1'")
    conn.close()
    code, _, err = run_cli(capsys, "score", tiny_ws, "--no-pool")
    said = " ".join(err.split())
    assert code == 2, err
    assert f"table runs, row (retriever 'bm25-word', question 'q1'): {why}" in said
    code, out, _ = run_cli(capsys, "check", tiny_ws)
    assert code == 2 and why in " ".join(out.split())


def test_a_stored_model_score_that_is_not_finite_is_found_by_check(tiny_ws, capsys):
    """A model judge's stored score of inf: check names the row, and the readers refuse it."""
    from engine.types import ModelJudge, ModelLabel

    with Workspace.open(tiny_ws) as ws:
        judge = ModelJudge("model:j", "dense", "some/model", {})
        ws.write_model_judgment(judge, [ModelLabel("q1", "d1", "model:j", 2, 0.5)], {"q1"})
    with sqlite3.connect(tiny_ws) as conn:
        assert conn.execute("UPDATE model_labels SET score = 9e999").rowcount == 1
    conn.close()
    code, out, _ = run_cli(capsys, "check", tiny_ws)
    assert code == 2, out
    assert "table model_labels" in out and "score is inf, not a finite number" in out
    with (
        Workspace.open(tiny_ws, readonly=True) as ws,
        pytest.raises(Exception, match="score is inf"),
    ):
        ws.model_labels()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 1e38])
def test_a_stored_vector_not_finite_or_not_normalised_is_embedded_again(tiny_ws, bad):
    """A received workspace's cached vector holding NaN, inf or 1e38 made every cosine with
    it NaN or infinite; it is embedded again, as a document whose text changed is."""
    import numpy as np

    from engine.retrieve.embeddings import document_vectors

    def embed(texts: list[str]) -> np.ndarray:
        embedded.extend(texts)
        return np.tile(np.float32([0.6, 0.8]), (len(texts), 1))

    with Workspace.open(tiny_ws) as ws:
        docs = ws.docs()
        embedded: list[str] = []
        document_vectors(docs, "k", lambda d: d.id, embed, ws)
        assert sorted(embedded) == sorted(d.id for d in docs)
        ws.write_embeddings("k", [(docs[0].id, docs[0].hash, [bad, 0.0])])
        embedded.clear()
        vectors = document_vectors(docs, "k", lambda d: d.id, embed, ws)
        assert embedded == [docs[0].id]  # only the unsound one, the others read as stored
        assert all(bool(np.isfinite(v).all()) for v in vectors.values())
        assert vectors[docs[0].id].tolist() == pytest.approx([0.6, 0.8])


def import_log(capsys, ws: Path, tmp_path: Path, lines: list[str]) -> tuple[int, str]:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    code, _, err = run_cli(capsys, "import", "querylog", ws, log, "--format", "jsonl")
    return code, " ".join(err.split())


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ("count = 9e999", "count is inf, not a whole number from 1 to"),
        ("count = 0", "count is 0, not a whole number from 1 to"),
        ("variants = '[1, 2]'", "not a JSON array of text"),
        ("variants = 'nope'", "variants is not valid JSON"),
    ],
)
def test_a_stored_query_log_row_out_of_range_is_found_and_refused(
    tiny_ws, tmp_path, capsys, change, why
):
    """The query log was read by no check: a received file's count of inf, 0 or a variant
    list that is not JSON reached the write screen (a crash on ctrl+n) unasked."""
    assert import_log(capsys, tiny_ws, tmp_path, ['{"query": "감쇠 보정", "count": 3}'])[0] == 0
    with sqlite3.connect(tiny_ws) as conn:
        conn.execute(f"UPDATE querylog SET {change}")
    conn.close()
    code, out, _ = run_cli(capsys, "check", tiny_ws)
    assert code == 2, out
    assert "table querylog, row id 1" in out and why in " ".join(out.split())
    with Workspace.open(tiny_ws, readonly=True) as ws, pytest.raises(Exception, match="querylog"):
        ws.next_log_query()
    # the soundness gate refuses to write into it, naming the row
    code, said = import_log(capsys, tiny_ws, tmp_path, ['{"query": "다른 질문"}'])
    assert code == 2 and "table querylog, row id 1" in said, said


def test_a_query_count_that_would_pass_a_64_bit_integer_is_refused_unchanged(
    tiny_ws, tmp_path, capsys
):
    """SQL's sum past 2^63 - 1 is an inexact REAL: a second import stored one silently."""
    big = 2**63 - 10
    assert (
        import_log(capsys, tiny_ws, tmp_path, [f'{{"query": "감쇠 보정", "count": {big}}}'])[0] == 0
    )
    before = snapshot(tiny_ws)
    code, said = import_log(capsys, tiny_ws, tmp_path, ['{"query": "감쇠 보정", "count": 20}'])
    assert code == 2, said
    assert "would pass 9,223,372,036,854,775,807" in said and "Nothing was written" in said
    assert snapshot(tiny_ws) == before
    with Workspace.open(tiny_ws, readonly=True) as ws:
        assert [r["count"] for r in querylog_rows(ws)] == [big]


@pytest.mark.parametrize(
    "option",
    [
        ["--k1", "1e308"],
        ["--variant", "bm25plus", "--delta", "1e308"],
        ["--variant", "okapi", "--epsilon=-1e308"],
    ],
)
def test_a_bm25_parameter_beyond_1000_is_refused_when_added(tiny_ws, capsys, option):
    """A delta of 1e308 ranked every question with score inf, stored as if sound."""
    code, _, err = run_cli(capsys, "retriever", "add", tiny_ws, "big", *option)
    assert code == 2, err
    assert "to 1,000, not" in " ".join(err.split())
    with Workspace.open(tiny_ws, readonly=True) as ws:
        assert ws.retriever("big") is None


def test_a_bm25_parameter_beyond_1000_in_the_file_is_refused_before_ranking(tiny_ws, capsys):
    edit_params(tiny_ws, "bm25-word", variant="bm25plus", delta=1e308)
    code, _, err = run_cli(capsys, "pool", tiny_ws, "--retriever", "bm25-word", "--quiet")
    assert code == 2, err
    assert "delta must be from 0 to 1,000" in " ".join(err.split())
    with Workspace.open(tiny_ws, readonly=True) as ws:
        assert ws.runs("bm25-word") == {}
    code, _, err = run_cli(capsys, "sweep", tiny_ws, "--retriever", "bm25-bigram", "--k1", "1e308")
    assert code == 2 and "k1 must be from 0 to 1,000" in " ".join(err.split()), err


def test_a_ranking_with_a_score_that_is_not_finite_is_never_stored(tiny_ws):
    """Whatever made it, a score no reader could read back is refused as it is written."""
    from engine.types import CachedRun
    from engine.workspace.rows import WorkspaceError

    run = CachedRun("bm25-word", "q1", ("d1", "d2"), (1.0, float("inf")), 1.0, "h", 10)
    with Workspace.open(tiny_ws) as ws:
        with pytest.raises(WorkspaceError, match="score inf, not a finite number"):
            ws.write_runs([run])
        assert ws.runs("bm25-word") == {}
