"""goldpan's scores against trec_eval (pytrec_eval) on a BEIR DBPedia-Entity subset.

The workspace is built through the engine (what ``new``, ``import beir`` and ``pool`` do),
its gold and rankings are exported as TREC qrels and runs, and pytrec_eval scores the
exported files. goldpan's scores (``goldpan score --json``'s board) must equal
pytrec_eval's mean over the qrels' questions.

The query sets differ on purpose, and the test spells the difference out: goldpan scores
every question with a gold document (grade >= 1) and counts one whose ranking is empty
as 0 (``trec_eval -c``); pytrec_eval only returns questions present in both the qrels and
the run. So pytrec_eval's per-question values are averaged with a 0 for every qrels
question missing from its output, and the number of such questions is asserted. A second
workspace adds one question that no document matches (and gives it a gold document) so
that this path is really taken.

The data is read at run time from ``shared/data`` beside the repository; the tests skip
when it is absent.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine.export import export_workspace
from engine.ingest import import_beir, import_qrels, import_questions
from engine.scoring import metric_names, score_workspace
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import PYTREC_MEASURES, plain_qrels, plain_run, pool

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
BEIR = DATA / "beir_dbpedia_entity_subset50"

RETRIEVERS = ("bm25-word", "bm25-bigram")
TOL = 1e-9
N_QUERIES = 50
N_WITH_GOLD = 40  # queries with at least one qrels line of grade >= 1

MEASURES = PYTREC_MEASURES
TREC_MEASURES = {"success.1,3,5,10", "recip_rank", "recall.5,10", "ndcg_cut.10", "P.5"}

# A question no document shares a word with, and the gold doc given to it.
UNMATCHED_QID = "zz-unmatched"
UNMATCHED_TEXT = "qxqzvv zzkqjw"
UNMATCHED_GOLD = "<dbpedia:Oceanic_Airlines>"


# -- plain readers of the exported files (not goldpan's) ------------------------------------


def read_beir_gold(folder: Path) -> dict[str, dict[str, int]]:
    """The BEIR qrels with grade >= 1 only (a grade-0 line is 'judged not relevant')."""
    gold: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / "test.tsv").open(encoding="utf-8", newline="") as f:
        rows = csv.reader(f, delimiter="\t")
        assert next(rows) == ["query-id", "corpus-id", "score"]
        for qid, doc, grade in rows:
            if int(grade) >= 1:
                gold.setdefault(qid, {})[doc] = int(grade)
    return gold


# -- the workspace --------------------------------------------------------------------------


@dataclass
class BeirSetup:
    workspace: Path
    folder: Path
    with_unmatched: bool
    qrels: dict[str, dict[str, int]]
    """The exported gold."""
    runs: dict[str, dict[str, dict[str, float]]]
    """retriever -> the exported run."""


@pytest.fixture(scope="module", params=[False, True], ids=["beir", "beir+unmatched-question"])
def beir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> BeirSetup:
    if not (BEIR / "corpus.jsonl").is_file():
        pytest.skip(f"BEIR DBPedia subset not found at {BEIR} (shared/data is not beside the repo)")
    with_unmatched: bool = request.param
    folder = tmp_path_factory.mktemp("beir")
    ws = folder / "ws.db"
    handle = new_workspace(ws)
    import_beir(handle, BEIR)
    if with_unmatched:
        questions = folder / "extra.jsonl"
        questions.write_text(
            json.dumps({"_id": UNMATCHED_QID, "text": UNMATCHED_TEXT}) + "\n", encoding="utf-8"
        )
        qrels = folder / "extra.qrels"
        qrels.write_text(f"{UNMATCHED_QID} 0 {UNMATCHED_GOLD} 1\n", encoding="utf-8")
        import_questions(handle, questions)
        import_qrels(handle, qrels)
    handle.close()
    pool(ws, RETRIEVERS)
    runs = {}
    with Workspace.open(ws) as handle:
        export_workspace(handle, "trec-qrels", folder / "gold.qrels")
        for name in RETRIEVERS:
            out = folder / f"{name}.run"
            export_workspace(handle, "trec-run", out, [name])
            runs[name] = plain_run(out)
    return BeirSetup(ws, folder, with_unmatched, plain_qrels(folder / "gold.qrels"), runs)


# -- tests ----------------------------------------------------------------------------------


def test_exported_qrels_are_the_beir_judgments(beir: BeirSetup) -> None:
    # the questions with a gold document, each with every judgment (grade 0 included)
    gold = read_beir_gold(BEIR)
    assert len(gold) == N_WITH_GOLD
    every = read_beir_qrels(BEIR)
    want = {q: every[q] for q in gold}
    if beir.with_unmatched:
        want[UNMATCHED_QID] = {UNMATCHED_GOLD: 1}
    assert beir.qrels == want
    assert {q: {d: g for d, g in j.items() if g >= 1} for q, j in beir.qrels.items()} == (
        gold | ({UNMATCHED_QID: {UNMATCHED_GOLD: 1}} if beir.with_unmatched else {})
    )


def scores(path: Path, extra: Sequence[str] = ()) -> dict[str, Any]:
    """The retrievers' scores as plain values (``goldpan score --json``'s board), with the
    metrics ``goldpan score`` reports and ``extra``."""
    with Workspace.open(path, readonly=True) as ws:
        board = score_workspace(ws, metrics=[*metric_names(), *extra], retrievers=RETRIEVERS)
        return json.loads(json.dumps(board.to_json()))


def test_score_equals_pytrec_eval(beir: BeirSetup) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    board = scores(beir.workspace)
    n_gold = N_WITH_GOLD + (1 if beir.with_unmatched else 0)
    n_questions = N_QUERIES + (1 if beir.with_unmatched else 0)
    assert board["questions"] == {
        "scored": n_gold,
        "not_ranked": 0,
        "no_answer": 0,
        "disputed": 0,
        "recheck": 0,
        "unlabeled": n_questions - n_gold,
        "stopped": 0,
        "not_judged_stopped": 0,
    }
    assert len(beir.qrels) == n_gold

    for name in RETRIEVERS:
        run = beir.runs[name]
        per_query = pytrec_eval.RelevanceEvaluator(beir.qrels, TREC_MEASURES).evaluate(run)
        # pytrec_eval leaves out a qrels question without any line in the run; goldpan
        # (like trec_eval -c) scores it 0. Exactly the unmatched question is such a one.
        absent = sorted(q for q in beir.qrels if q not in per_query)
        assert absent == ([UNMATCHED_QID] if beir.with_unmatched else []), name
        assert all(q not in run for q in absent)
        assert len(per_query) == n_gold - len(absent)
        got = board["retrievers"][name]
        for metric, measure in MEASURES.items():
            total = sum(per_query[q][measure] if q in per_query else 0.0 for q in beir.qrels)
            want = total / len(beir.qrels)
            assert got[metric] == pytest.approx(want, abs=TOL, rel=0), (
                f"{name} {metric}: goldpan {got[metric]!r}, pytrec_eval {want!r}"
            )
            # and the difference is real: the mean over pytrec_eval's questions only
            if absent and want > 0:
                only_returned = sum(v[measure] for v in per_query.values()) / len(per_query)
                assert only_returned > want


def test_evaluate_per_question_equals_pytrec_eval_with_ties(beir: BeirSetup) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from engine.metrics import evaluate

    source = beir.folder / "bm25-word.run"
    tied = beir.folder / "bm25-word.tied.run"
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        qid, q0, doc, rank, score, tag = line.split()
        lines.append(f"{qid} {q0} {doc} {rank} {round(float(score), 1):.1f} {tag}\n")
    tied.write_text("".join(lines), encoding="utf-8")
    run = plain_run(tied)

    # The rounding must create ties that trec_eval breaks by doc id descending, i.e. the
    # file's rank order is no longer the score order for many questions.
    reordered = 0
    for docs in run.values():
        file_order = list(docs)  # insertion order = the file's ranks
        trec_order = sorted(docs, key=lambda d: (docs[d], d), reverse=True)
        reordered += file_order != trec_order
    assert reordered >= 10, f"only {reordered} questions have reordered ties"

    metrics = [*MEASURES, "p@5"]
    names = {**MEASURES, "p@5": "P_5"}
    theirs = pytrec_eval.RelevanceEvaluator(beir.qrels, TREC_MEASURES).evaluate(run)
    ours = evaluate(beir.qrels, run, metrics)
    assert set(ours) == set(beir.qrels)
    absent = sorted(set(beir.qrels) - set(theirs))
    assert absent == ([UNMATCHED_QID] if beir.with_unmatched else [])
    wrong = []
    for qid, values in ours.items():
        for metric in metrics:
            want = theirs[qid][names[metric]] if qid in theirs else 0.0
            if abs(values[metric] - want) > TOL:
                wrong.append((qid, metric, values[metric], want))
    assert not wrong, (
        f"{len(wrong)} per-question values differ (qid, metric, ours, theirs): {wrong[:5]}"
    )


def read_beir_qrels(folder: Path) -> dict[str, dict[str, int]]:
    """Every BEIR qrels line, grade 0 (judged not relevant) included."""
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / "test.tsv").open(encoding="utf-8", newline="") as f:
        rows = csv.reader(f, delimiter="\t")
        next(rows)
        for qid, doc, grade in rows:
            qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels


HOLE_MEASURES = {
    "bpref": "bpref",
    "judged:mrr": "recip_rank",
    "judged:ndcg@10": "ndcg_cut_10",
    "judged:hit@5": "success_5",
    "judged:recall@10": "recall_10",
}


def test_hole_metrics_equal_trec_eval_and_ir_measures(beir: BeirSetup) -> None:
    # The BEIR qrels judge documents that bm25 did not pool, and leave many of its top 10
    # unjudged: Judged@10, bpref and the judged-only metrics read the grade-0 lines too.
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ir_measures = pytest.importorskip("ir_measures")

    every = read_beir_qrels(BEIR)
    # the scored questions (a gold document), with every judgment made for them
    qrels = {q: every.get(q, {}) | beir.qrels[q] for q in beir.qrels}
    board = scores(beir.workspace, ["judged:hit@5", "judged:recall@10"])["retrievers"]
    for name in RETRIEVERS:
        run = beir.runs[name]
        plain = pytrec_eval.RelevanceEvaluator(qrels, {"bpref"}).evaluate(run)
        condensed = pytrec_eval.RelevanceEvaluator(
            qrels,
            {"recip_rank", "ndcg_cut.10", "success.5", "recall.10"},
            judged_docs_only_flag=True,
        ).evaluate(run)
        for metric, measure in HOLE_MEASURES.items():
            per_q = plain if metric == "bpref" else condensed
            want = sum(per_q[q][measure] if q in per_q else 0.0 for q in qrels) / len(qrels)
            assert board[name][metric] == pytest.approx(want, abs=TOL, rel=0), (name, metric)
        # ir_measures breaks ties by doc id ascending, trec_eval descending: give it
        # tie-free scores in trec_eval's order. A question without a line counts 0.
        ordered = {q: sorted(s, key=lambda d: (s[d], d), reverse=True) for q, s in run.items()}
        tie_free = {q: {d: float(-i) for i, d in enumerate(r)} for q, r in ordered.items()}
        judged = ir_measures.calc_aggregate([ir_measures.Judged @ 10], qrels, tie_free)
        assert board[name]["judged@10"] == pytest.approx(
            judged[ir_measures.Judged @ 10], abs=TOL, rel=0
        )
        assert board[name]["judged@10"] < 1  # holes in its top 10: the test means something
        assert board[name]["bpref"] != board[name]["mrr"]
