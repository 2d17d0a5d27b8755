"""Exports and imports in the field's formats keep every score and every grade.

Round trips go through files: a workspace is exported, the files are imported into a new
workspace (or as an external retriever), the same retrievers are pooled, and the score
tables are compared question by question. Reference numbers come from pytrec_eval (and
ranx when it is installed) reading the exported files with their own readers.
"""

from __future__ import annotations

import io
import json
import math
import shutil
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.demo import build_demo
from engine.errors import BadInput
from engine.export import export_workspace
from engine.formats.ids import check_id
from engine.formats.questions import read_question_extras, write_questions_csv
from engine.formats.ranx import tie_free_scores
from engine.formats.trec import read_qrels, read_trec_run, write_trec_qrels, write_trec_run
from engine.gold import Status
from engine.ingest import (
    IngestError,
    import_beir,
    import_qrels,
    import_questions,
    import_run,
)
from engine.retrieve.runner import refresh_runs
from engine.scoring import (
    HOLE_METRICS,
    Scoreboard,
    metric_names,
    score_workspace,
    workspace_golds,
)
from engine.types import CachedRun, Doc, Label, Question
from engine.workspace import Workspace, WorkspaceError
from engine.workspace_setup import new_workspace
from tests.conftest import plain_qrels, plain_run, shared_data, snapshot

TOL = 1e-9
RETRIEVERS = ("bm25-word", "bm25-bigram", "bm25-word+bigram")
METRICS = [*metric_names(), "p@5", "mrr@10", "ndcg@3"]

# A question no document shares a word with, given a gold document: every BM25
# retriever returns nothing for it, so it is scored as a miss.
UNMATCHED = Question("zz-unmatched", "qxqzvv zzkqjw", ("hard",))
UNMATCHED_GOLD = "recon-05"


# -- fixtures and helpers ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo workspace plus the unmatched question, pooled by three BM25 retrievers."""
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    ws = build_demo(path, pool=False, models=False)
    ws.write_questions([UNMATCHED])
    ws.write_labels([Label(UNMATCHED.id, UNMATCHED_GOLD, "mina", 1)])
    refresh_runs(ws, RETRIEVERS)
    ws.close()  # checkpoints the WAL: the .db file alone is the workspace
    return path


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path) -> Workspace:
    """A private copy of the pooled demo workspace."""
    path = tmp_path / "demo.db"
    shutil.copy(demo_template, path)
    ws = Workspace.open(path)
    yield ws
    ws.close()


def board(ws: Workspace, names: list[str] | tuple[str, ...]) -> Scoreboard:
    return score_workspace(ws, metrics=METRICS, retrievers=list(names))


def assert_same_scores(
    a: Scoreboard, name_a: str, b: Scoreboard, name_b: str, metrics: Sequence[str] = METRICS
) -> None:
    """Same scored questions and every per-question value equal to 1e-9."""
    assert a.question_ids == b.question_ids
    ra, rb = a.retrievers[name_a], b.retrievers[name_b]
    for metric in metrics:
        np.testing.assert_allclose(
            ra.per_question[metric], rb.per_question[metric], rtol=0, atol=TOL, err_msg=metric
        )
        assert ra.means[metric] == pytest.approx(rb.means[metric], abs=TOL, rel=0)
    np.testing.assert_array_equal(ra.first_gold_rank, rb.first_gold_rank)


def fresh(tmp_path: Path, name: str) -> Workspace:
    return new_workspace(tmp_path / f"{name}.db")


def gold_view(ws: Workspace) -> tuple[dict[str, dict[str, int]], set[str]]:
    """(labeled question -> gold, no-answer questions)."""
    golds = workspace_golds(ws)
    labeled = {q: dict(g.gold) for q, g in golds.items() if g.status is Status.LABELED}
    no_answer = {q for q, g in golds.items() if g.status is Status.NO_ANSWER}
    return labeled, no_answer


# -- BEIR ---------------------------------------------------------------------------------------


def test_beir_export_reimported_gives_identical_scores(demo, tmp_path):
    folder = tmp_path / "beir"
    export_workspace(demo, "beir", folder)
    header = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "query-id\tcorpus-id\tscore"

    ws2 = fresh(tmp_path, "again")
    import_beir(ws2, folder)
    refresh_runs(ws2, RETRIEVERS)

    assert ws2.docs() == demo.docs()  # ids, titles, texts and fields
    assert [(q.id, q.text, q.tags) for q in ws2.questions()] == [
        (q.id, q.text, q.tags) for q in demo.questions()
    ]
    assert gold_view(ws2) == gold_view(demo)
    before, after = board(demo, RETRIEVERS), board(ws2, RETRIEVERS)
    # disputed questions have no gold to export: they come back unlabeled
    assert after.counts["scored"] == before.counts["scored"]
    assert after.counts["no_answer"] == before.counts["no_answer"] > 0
    assert before.counts["disputed"] > 0 and after.counts["disputed"] == 0
    assert after.counts["unlabeled"] == before.counts["unlabeled"] + before.counts["disputed"]
    for name in RETRIEVERS:
        assert_same_scores(before, name, after, name)


def test_beir_corpus_and_queries_shape(demo, tmp_path):
    folder = tmp_path / "beir"
    export_workspace(demo, "beir", folder)
    first = json.loads((folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == {"_id", "title", "text", "metadata"}
    doc = demo.doc(first["_id"])
    assert doc is not None and first["metadata"] == dict(doc.fields)
    queries = [
        json.loads(line)
        for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(queries) == len(demo.question_ids())
    no_answer = {q["_id"] for q in queries if q["metadata"]["no_answer"]}
    assert no_answer == gold_view(demo)[1]
    rows = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    exported = {}
    for row in rows:
        qid, doc_id, grade = row.split("\t")
        exported.setdefault(qid, {})[doc_id] = int(grade)
    golds = workspace_golds(demo)
    assert exported == {q: golds[q].qrels for q in gold_view(demo)[0]}  # gold and judged 0s


def test_beir_export_escapes_line_separators_in_text(tmp_path):
    ws = fresh(tmp_path, "seps")
    odd = Doc("d1", "title\u2028two", "a\u2029b\x85c\nd", {"k": "v\u2028"})
    ws.write_docs([odd, Doc("d2", "t", "x", {})])
    ws.write_questions([Question("q1", "where\u2028now", ("t1",))])
    ws.write_labels([Label("q1", "d1", "a", 1)])
    export_workspace(ws, "beir", tmp_path / "b")
    assert len((tmp_path / "b" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()) == 2
    ws2 = fresh(tmp_path, "seps2")
    import_beir(ws2, tmp_path / "b")
    assert ws2.docs() == ws.docs()
    assert ws2.question("q1").text == "where\u2028now"


def test_real_beir_subset_round_trip(tmp_path):
    source = shared_data("beir_dbpedia_entity_subset50")
    names = ("bm25-word", "bm25-bigram")
    ws = fresh(tmp_path, "dbpedia")
    import_beir(ws, source)
    refresh_runs(ws, names)
    folder = tmp_path / "exported"
    export_workspace(ws, "beir", folder)
    ws2 = fresh(tmp_path, "dbpedia2")
    import_beir(ws2, folder)
    refresh_runs(ws2, names)
    assert ws2.docs() == ws.docs()
    assert gold_view(ws2) == gold_view(ws)
    # the exported qrels are the source's lines of the questions with a grade >= 1 line
    every: dict[str, dict[str, int]] = {}
    for row in (source / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc_id, grade = row.split("\t")
        every.setdefault(qid, {})[doc_id] = int(grade)
    want = {q: j for q, j in every.items() if any(g >= 1 for g in j.values())}
    assert read_beir_qrels(folder) == want
    before, after = board(ws, names), board(ws2, names)
    assert before.counts["scored"] == after.counts["scored"] == len(want)
    for name in names:
        assert_same_scores(before, name, after, name)


def read_beir_qrels(folder: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for row in (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc_id, grade = row.split("\t")
        out.setdefault(qid, {})[doc_id] = int(grade)
    return out


# -- questions with gold -----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["questions-jsonl", "questions-csv"])
def test_questions_round_trip_keeps_gold_no_answer_and_scores(demo, tmp_path, fmt):
    target = tmp_path / ("q.jsonl" if fmt.endswith("jsonl") else "q.csv")
    export_workspace(demo, fmt, target)
    ws2 = fresh(tmp_path, "q")
    ws2.write_docs(demo.docs())
    report = import_questions(ws2, target, annotator="carol")
    assert {lab.annotator for lab in ws2.labels()} == {"carol"}
    assert {v.verdict for v in ws2.verdicts()} == {"no_answer"}
    assert "no-answer verdicts" in report.summary()
    assert [(q.id, q.text, q.tags) for q in ws2.questions()] == [
        (q.id, q.text, q.tags) for q in demo.questions()
    ]
    assert gold_view(ws2) == gold_view(demo)
    refresh_runs(ws2, RETRIEVERS)
    before, after = board(demo, RETRIEVERS), board(ws2, RETRIEVERS)
    # a questions file holds the gold, not the documents judged not relevant: the scores
    # that read those (Judged@k, bpref, judged:) cannot come through it
    plain = [m for m in METRICS if m not in HOLE_METRICS]
    for name in RETRIEVERS:
        assert_same_scores(before, name, after, name, plain)


def test_plain_questions_files_still_import_without_judgments(tiny_ws, tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("id,text,tags\nn1,새 질문,easy\n", encoding="utf-8")
    ws = Workspace.open(tiny_ws)
    labels_before = ws.labels()
    report = import_questions(ws, path)
    assert report.questions == (1, 0, 0) and report.labels == 0
    assert ws.labels() == labels_before and ws.verdicts() == []
    assert read_question_extras(path) == []


def test_questions_gold_shapes_and_no_answer(tiny_ws, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(r, ensure_ascii=False)
            for r in [
                {"id": "n1", "text": "하나", "gold": ["d1:2", "d3:0"]},
                {"id": "n2", "text": "둘", "gold": {"d2": 1}},
                {"id": "n3", "text": "셋", "gold": [], "no_answer": True},
                {"id": "n4", "text": "넷"},
            ]
        ),
        encoding="utf-8",
    )
    ws = Workspace.open(tiny_ws)
    import_questions(ws, path)
    got = {
        (lab.question_id, lab.doc_id, lab.grade) for lab in ws.labels() if lab.annotator == "import"
    }
    assert got == {("n1", "d1", 2), ("n1", "d3", 0), ("n2", "d2", 1)}
    assert [(v.question_id, v.verdict) for v in ws.verdicts()] == [("n3", "no_answer")]
    golds = workspace_golds(ws)
    assert golds["n1"].gold == {"d1": 2} and golds["n3"].status is Status.NO_ANSWER
    assert golds["n4"].status is Status.UNLABELED


@pytest.mark.parametrize(
    ("content", "line", "expected"),
    [
        ("id,text,gold\nn1,a,d1:2\nn2,b,d9:1\n", 3, "unknown document 'd9'"),
        ("id,text,gold\nn1,a,d1:7\n", 2, "out of range"),
        ("id,text,gold\nn1,a,d1\n", 2, "expected `doc:grade`"),
        ("id,text,gold\nn1,a,d1:x\n", 2, "not a number"),
        ("id,text,gold\nn1,a,d1:1 d1:2\n", 2, "twice"),
        ("id,text,gold,no_answer\nn1,a,d1:1,true\n", 2, "one or the other"),
        ("id,text,no_answer\nn1,a,maybe\n", 2, "expected true or false"),
    ],
)
def test_bad_question_gold_names_the_line_and_changes_nothing(
    tiny_ws, tmp_path, content, line, expected
):
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    before = snapshot(tiny_ws)
    ws = Workspace.open(tiny_ws)
    with pytest.raises(IngestError) as exc:
        import_questions(ws, path)
    ws.close()
    assert exc.value.line == line and expected in str(exc.value)
    assert str(exc.value).startswith(f"{path}:{line}: ")
    assert snapshot(tiny_ws) == before


def test_questions_csv_refuses_gold_ids_with_whitespace(tmp_path):
    golds = {"q": _labeled("q", {"a doc": 1})}
    with pytest.raises(BadInput, match="whitespace"):
        write_questions_csv(io.StringIO(), [Question("q", "t")], golds)


def _labeled(qid, gold):
    from engine.gold import Gold

    return Gold(qid, Status.LABELED, gold)


# -- TREC qrels ----------------------------------------------------------------------------------


def test_trec_qrels_round_trip_keeps_every_grade(demo, tmp_path):
    target = tmp_path / "gold.qrels"
    export_workspace(demo, "trec-qrels", target)
    # every judgment of the scored questions: the gold grades and the 0s (bpref, -J)
    judged = {q: g.qrels for q, g in workspace_golds(demo).items() if q in gold_view(demo)[0]}
    assert plain_qrels(target) == judged
    assert any(0 in g.values() for g in judged.values())
    ws2 = fresh(tmp_path, "qrels")
    ws2.write_docs(demo.docs())
    ws2.write_questions(demo.questions())
    import_qrels(ws2, target)
    assert gold_view(ws2)[0] == gold_view(demo)[0]
    assert {q: g.qrels for q, g in workspace_golds(ws2).items() if q in judged} == judged
    assert sorted({g for gold in gold_view(demo)[0].values() for g in gold.values()}) == [1, 2, 3]


# -- imported runs ---------------------------------------------------------------------------------


def test_exported_run_reimported_scores_as_its_retriever(demo, tmp_path):
    for name in RETRIEVERS:
        target = tmp_path / f"{name}.run"
        export_workspace(demo, "trec-run", target, [name])
        import_run(demo, target, f"ext-{name}")
    names = [*RETRIEVERS, *(f"ext-{n}" for n in RETRIEVERS)]
    b = board(demo, names)
    for name in RETRIEVERS:
        assert_same_scores(b, name, b, f"ext-{name}")
        native, imported = demo.runs(name), demo.runs(f"ext-{name}")
        for qid, run in imported.items():
            assert run.doc_ids == native[qid].doc_ids and run.scores == native[qid].scores
            assert run.depth == len(run.doc_ids) and run.latency_ms == 0.0
        # the unmatched question has no line in the file: an empty ranking, as the native
        assert native[UNMATCHED.id].doc_ids == () == imported[UNMATCHED.id].doc_ids
        assert set(imported) == set(native) and b.retrievers[f"ext-{name}"].missing == 0
        i = b.question_ids.index(UNMATCHED.id)
        assert b.retrievers[f"ext-{name}"].per_question["mrr"][i] == 0.0
    spec = demo.retriever("ext-bm25-word")
    assert spec.kind == "external" and spec.params["source"] == "bm25-word.run"
    assert len(spec.params["sha256"]) == 64


def test_imported_run_is_never_pooled_again(demo, tmp_path):
    target = tmp_path / "w.run"
    export_workspace(demo, "trec-run", target, ["bm25-word"])
    import_run(demo, target, "ext")
    before = demo.runs("ext")
    report = refresh_runs(demo, ["ext"], force=True)
    assert report.ran == {"ext": 0} and demo.runs("ext") == before


def tie_fixture(tmp_path: Path) -> Workspace:
    """The tie fixture of metrics-anchors.md section 1.3, imported as the run ``tie``.

    Checked there with trec_eval 9.0.8: q1 ranks d2, d4, d1, d3 (RR 0.3333, nDCG@3
    0.1900); q4 ranks dA, d9, d10 (RR 0.5, nDCG@3 0.3425); ranx, fed the same scores,
    gave RR 0.5 and 1.0. The rank column is scrambled here: it must not matter.
    """
    ws = fresh(tmp_path, "ties")
    ws.write_docs([Doc(d, d, d, {}) for d in ("d1", "d2", "d3", "d4", "d8", "d9", "d10", "dA")])
    ws.write_questions([Question("q1", "one"), Question("q4", "four")])
    ws.write_labels(
        [
            Label("q1", "d1", "a", 1),
            Label("q1", "d2", "a", 0),
            Label("q1", "d3", "a", 2),
            Label("q4", "d8", "a", 3),
            Label("q4", "d9", "a", 1),
            Label("q4", "d10", "a", 2),
        ]
    )
    run = tmp_path / "tie.run"
    run.write_text(
        "# a comment, then a blank line\n\n"
        "q1 Q0 d3 1 1.0 r\nq1 Q0 d1 9 4.0 r\nq1 Q0 d2 3 5.0 r\nq1 Q0 d4 2 4.0 r\n"
        "q4 Q0 d10 1 0.5 r\nq4 Q0 d9 1 0.5 r\nq4 Q0 dA 1 0.5 r\n",
        encoding="utf-8",
    )
    import_run(ws, run, "tie")
    return ws


TIE_ANCHORS = {"q1": {"mrr": 1 / 3, "ndcg@3": 0.1900}, "q4": {"mrr": 0.5, "ndcg@3": 0.3425}}


def test_tied_run_is_ranked_as_trec_eval_ranks_it(tmp_path):
    ws = tie_fixture(tmp_path)
    runs = ws.runs("tie")
    assert runs["q1"].doc_ids == ("d2", "d4", "d1", "d3")
    assert runs["q4"].doc_ids == ("dA", "d9", "d10")
    b = score_workspace(ws, metrics=["mrr", "ndcg@3"], retrievers=["tie"])
    assert b.question_ids == ["q1", "q4"]
    for metric in ("mrr", "ndcg@3"):
        got = b.retrievers["tie"].per_question[metric]
        want = [TIE_ANCHORS[q][metric] for q in b.question_ids]
        np.testing.assert_allclose(got, want, rtol=0, atol=5e-5)  # anchors have 4 decimals


def test_ranx_ranks_the_exported_ties_as_trec_eval(tmp_path):
    ranx = pytest.importorskip("ranx")
    ws = tie_fixture(tmp_path)
    export_workspace(ws, "ranx", tmp_path / "ranx")
    qrels = ranx.Qrels.from_file(str(tmp_path / "ranx" / "qrels.json"))
    run = ranx.Run.from_file(str(tmp_path / "ranx" / "run-tie.json"))
    ranx.evaluate(qrels, run, ["mrr", "ndcg@3"])
    for qid, want in TIE_ANCHORS.items():
        for metric, value in want.items():
            assert run.scores[metric][qid] == pytest.approx(value, abs=5e-5), (qid, metric)


def test_score_of_imported_tied_run_equals_pytrec_eval(demo, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    export_workspace(demo, "trec-qrels", tmp_path / "gold.qrels")
    path = rounded_run(demo, tmp_path)
    run = plain_run(path)
    reordered = sum(
        list(docs) != sorted(docs, key=lambda d: (docs[d], d), reverse=True)
        for docs in run.values()
    )
    assert reordered >= 10
    import_run(demo, path, "tied")
    qrels = plain_qrels(tmp_path / "gold.qrels")
    measures = {
        "hit@1": "success_1",
        "hit@5": "success_5",
        "mrr": "recip_rank",
        "recall@5": "recall_5",
        "recall@10": "recall_10",
        "ndcg@10": "ndcg_cut_10",
        "ndcg@3": "ndcg_cut_3",
        "p@5": "P_5",
    }
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, {"success.1,5", "recip_rank", "recall.5,10", "ndcg_cut.3,10", "P.5"}
    ).evaluate(run)
    b = score_workspace(demo, metrics=list(measures), retrievers=["tied"])
    assert b.question_ids == sorted(qrels)
    assert [q for q in qrels if q not in theirs] == [UNMATCHED.id]  # goldpan counts it 0
    for metric, measure in measures.items():
        want = [theirs[q][measure] if q in theirs else 0.0 for q in b.question_ids]
        np.testing.assert_allclose(
            b.retrievers["tied"].per_question[metric], want, rtol=0, atol=TOL, err_msg=metric
        )


def test_replace_swaps_the_rankings_and_keeps_the_place(demo, tmp_path):
    first = tmp_path / "a.run"
    first.write_text("q01 Q0 recon-05 1 2.0 a\nq02 Q0 recon-05 1 1.0 a\n", encoding="utf-8")
    second = tmp_path / "b.run"
    second.write_text("q02 Q0 recon-02 1 3.0 b\n", encoding="utf-8")
    import_run(demo, first, "ext")
    import_run(demo, tmp_path / "a.run", "other")
    with pytest.raises(WorkspaceError, match="--replace"):
        import_run(demo, second, "ext")
    report = import_run(demo, second, "ext", replace=True)
    assert report.rankings == 1
    runs = demo.runs("ext")
    assert {q for q, r in runs.items() if r.doc_ids} == {"q02"}
    assert runs["q02"].doc_ids == ("recon-02",) and runs["q01"].doc_ids == ()
    assert [s.name for s in demo.retrievers()][-2:] == ["ext", "other"]
    assert demo.retriever("ext").params["source"] == "b.run"
    assert {q for q, r in demo.runs("other").items() if r.doc_ids} == {"q01", "q02"}


def test_replace_refuses_a_builtin_retriever(demo, tmp_path):
    path = tmp_path / "a.run"
    path.write_text("q01 Q0 recon-05 1 2.0 a\n", encoding="utf-8")
    before = demo.runs("bm25-word")
    with pytest.raises(WorkspaceError, match="not an imported run"):
        import_run(demo, path, "bm25-word", replace=True)
    assert demo.runs("bm25-word") == before and demo.retriever("bm25-word").kind == "bm25"


@pytest.mark.parametrize(
    ("content", "line", "expected"),
    [
        ("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0\n", 2, "expected 6 fields"),
        ("q1 Q0 d1 1 high r\n", 1, "score 'high' is not a number"),
        ("q1 Q0 d1 1 1_000 r\n", 1, "not a number"),
        ("q1 Q0 d1 1 \u0661\u0662 r\n", 1, "not a number"),
        ("q1 Q0 d1 1 nan r\n", 1, "not a finite number"),
        ("q1 Q0 d1 1 -inf r\n", 1, "not a finite number"),
        ("q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\nq1 Q0 d1 3 0.5 r\n", 3, "(lines 1 and 3)"),
    ],
)
def test_read_trec_run_names_the_line(tmp_path, content, line, expected):
    path = tmp_path / "bad.run"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(IngestError) as exc:
        read_trec_run(path)
    assert exc.value.line == line and expected in str(exc.value)
    assert str(exc.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("content", ["", "  \n\n", "# only a comment\n\n# another\n"])
def test_read_trec_run_refuses_a_file_without_rankings(tmp_path, content):
    path = tmp_path / "empty.run"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(IngestError) as exc:
        read_trec_run(path)
    assert exc.value.path == str(path)


def test_unknown_ids_name_the_first_line_and_how_many_more(tiny_ws, tmp_path):
    path = tmp_path / "u.run"
    path.write_text(
        "q1 Q0 d1 1 2 r\nq9 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\nq9 Q0 d2 2 1 r\nq8 Q0 d1 1 1 r\n",
        encoding="utf-8",
    )
    before = snapshot(tiny_ws)
    ws = Workspace.open(tiny_ws)
    with pytest.raises(IngestError) as exc:
        import_run(ws, path, "ext")
    ws.close()
    assert exc.value.line == 2
    assert "unknown question 'q9'" in str(exc.value)
    assert "2 more lines" in str(exc.value) and "2 distinct" in str(exc.value)
    assert snapshot(tiny_ws) == before


# -- ranx --------------------------------------------------------------------------------------


def test_tie_free_scores_keep_the_order_and_move_ties_by_ulps():
    scores = [5.0, 4.0, 4.0, 4.0, 1.0, 0.5, 0.5]
    out = tie_free_scores(scores)
    assert all(a > b for a, b in zip(out, out[1:], strict=False))
    assert out[3] == 4.0 and out[4:6] == [1.0, math.nextafter(0.5, math.inf)] and out[6] == 0.5
    assert out[1] == math.nextafter(math.nextafter(4.0, math.inf), math.inf)
    assert out[0] == 5.0
    assert tie_free_scores([]) == [] and tie_free_scores([3.0]) == [3.0]


def rounded_run(demo: Workspace, tmp_path: Path, name: str = "bm25-word") -> Path:
    """A retriever's exported run with scores rounded to one decimal and lines reversed:
    ties everywhere, and a rank column that no longer says the order."""
    source = tmp_path / f"{name}.run"
    export_workspace(demo, "trec-run", source, [name])
    tied = []
    for line in reversed(source.read_text(encoding="utf-8").splitlines()):
        qid, q0, doc, rank, score, tag = line.split()
        tied.append(f"{qid}\t{q0}  {doc} {rank} {round(float(score), 1)} {tag}")
    path = tmp_path / "tied.run"
    path.write_text("\n".join(tied) + "\n", encoding="utf-8")
    return path


def test_ranx_loads_the_export_and_agrees_with_goldpan(demo, tmp_path):
    ranx = pytest.importorskip("ranx")
    import_run(demo, rounded_run(demo, tmp_path), "tied")
    names = [*RETRIEVERS, "tied"]
    folder = tmp_path / "ranx"
    export_workspace(demo, "ranx", folder)
    b = board(demo, names)
    # ties in the rankings (ranx orders them its own way unless the export breaks them)
    tied = sum(
        len(set(r.scores)) < len(r.scores) for name in names for r in demo.runs(name).values()
    )
    assert tied >= 20
    qrels = ranx.Qrels.from_file(str(folder / "qrels.json"))
    assert sorted(qrels.keys()) == b.question_ids
    pairs = {
        "hit@1": "hit_rate@1",
        "hit@3": "hit_rate@3",
        "hit@10": "hit_rate@10",
        "mrr": "mrr",
        "recall@5": "recall@5",
        "recall@10": "recall@10",
        "ndcg@10": "ndcg@10",
        "ndcg@3": "ndcg@3",
        "p@5": "precision@5",
    }
    for name in names:
        run = ranx.Run.from_file(str(folder / f"run-{name}.json"))
        ranx.evaluate(qrels, run, list(pairs.values()))
        for ours, theirs in pairs.items():
            mine = dict(zip(b.question_ids, b.retrievers[name].per_question[ours], strict=True))
            wrong = {
                q: (v, mine[q]) for q, v in run.scores[theirs].items() if abs(v - mine[q]) > TOL
            }
            assert not wrong, f"{name} {ours}: (ranx, goldpan) {wrong}"
            assert run.mean_scores[theirs] == pytest.approx(
                b.retrievers[name].means[ours], abs=TOL, rel=0
            )
        # the written scores are the cached ones, moved by a few units in the last place
        body = json.loads((folder / f"run-{name}.json").read_text(encoding="utf-8"))
        for qid, cached in demo.runs(name).items():
            if qid in body:
                assert list(body[qid]) == list(cached.doc_ids)
                for a, c in zip(body[qid].values(), cached.scores, strict=True):
                    assert a >= c and a - c <= len(cached.scores) * math.ulp(a)


RANX_PAIRS = {
    "hit@1": "hit_rate@1",
    "hit@10": "hit_rate@10",
    "mrr": "mrr",
    "recall@10": "recall@10",
    "ndcg@10": "ndcg@10",
    "p@5": "precision@5",
}


def test_ranx_agrees_on_long_runs_full_of_ties(tmp_path):
    # 100-document rankings with three distinct scores: ranx's own sort scrambles tied
    # documents of rankings this long, so only the export's tie breaking keeps its
    # numbers equal to goldpan's.
    ranx = pytest.importorskip("ranx")
    import random

    rng = random.Random(7)
    ws = fresh(tmp_path, "long")
    docs = [f"d{i:03d}" for i in range(120)]
    ws.write_docs([Doc(d, d, d, {}) for d in docs])
    qids = [f"q{i:02d}" for i in range(20)]
    ws.write_questions([Question(q, q) for q in qids])
    ws.write_labels(
        [
            Label(q, d, "a", rng.randint(1, 3))
            for q in qids
            for d in rng.sample(docs, rng.randint(1, 4))
        ]
    )
    lines = [f"{q} Q0 {d} 1 {rng.randint(0, 2)} r" for q in qids for d in rng.sample(docs, 100)]
    rng.shuffle(lines)
    (tmp_path / "long.run").write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_run(ws, tmp_path / "long.run", "long")
    export_workspace(ws, "ranx", tmp_path / "ranx")
    qrels = ranx.Qrels.from_file(str(tmp_path / "ranx" / "qrels.json"))
    run = ranx.Run.from_file(str(tmp_path / "ranx" / "run-long.json"))
    ranx.evaluate(qrels, run, list(RANX_PAIRS.values()))
    b = score_workspace(ws, metrics=list(RANX_PAIRS), retrievers=["long"])
    assert b.question_ids == qids
    for ours, theirs in RANX_PAIRS.items():
        want = b.retrievers["long"].per_question[ours]
        got = [run.scores[theirs][q] for q in qids]
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=ours)


def test_ranx_export_shape(demo, tmp_path):
    folder = tmp_path / "ranx"
    export_workspace(demo, "ranx", folder)
    qrels = json.loads((folder / "qrels.json").read_text(encoding="utf-8"))
    assert qrels == gold_view(demo)[0]
    for name in RETRIEVERS:
        run = json.loads((folder / f"run-{name}.json").read_text(encoding="utf-8"))
        assert set(run) == set(qrels)
        assert run[UNMATCHED.id] == {}
        assert all(isinstance(s, float) for docs in run.values() for s in docs.values())


# -- writers refuse what their readers could not give back -----------------------------------------


@pytest.mark.parametrize(
    ("ident", "first"),
    [
        ("", False),
        ("a b", False),
        ("a\tb", False),
        ("a\x0bb", False),
        ("a\0b", False),
        ("#q", True),
    ],
)
def test_check_id_refuses(ident, first):
    with pytest.raises(BadInput):
        check_id(ident, "question", first_column=first)


def test_check_id_keeps_what_trec_eval_keeps():
    # trec_eval splits columns on ASCII whitespace and lines on \n only
    for ident in ("a\u00a0b", "a\u3000b", "a\u2028b", "q#1"):
        check_id(ident, "question", first_column=True)


def test_trec_run_export_refuses_ids_with_whitespace(tmp_path):
    run = CachedRun("r", "q1", ("a doc",), (1.0,), 0.0, "", 1)
    with pytest.raises(BadInput, match="whitespace"):
        write_trec_run(io.StringIO(), [run])


# -- property: TREC writers and readers give back what was written -------------------------------

IDS = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12).filter(
    lambda s: not any(c.isspace() or c == "\0" for c in s)
)
QIDS = IDS.filter(lambda s: s[0] not in "#\ufeff")
FLOATS = st.floats(allow_nan=False, allow_infinity=False)


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        QIDS, st.dictionaries(IDS, FLOATS, min_size=1, max_size=6), min_size=1, max_size=5
    )
)
def test_trec_run_round_trips_ids_and_scores_exactly(tmp_path_factory, run):
    path = tmp_path_factory.mktemp("prop") / "r.run"
    cached = [
        CachedRun("tag", q, tuple(docs), tuple(docs.values()), 0.0, "", len(docs))
        for q, docs in run.items()
    ]
    with path.open("w", encoding="utf-8", newline="\n") as f:
        write_trec_run(f, cached)
    back: dict[str, dict[str, bytes]] = {}
    for line in read_trec_run(path):
        back.setdefault(line.question_id, {})[line.doc_id] = bits(line.score)
    assert back == {q: {d: bits(s) for d, s in docs.items()} for q, docs in run.items()}


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        QIDS,
        st.dictionaries(IDS, st.integers(0, 3), min_size=1, max_size=6),
        min_size=1,
        max_size=5,
    )
)
def test_trec_qrels_round_trip_ids_and_grades_exactly(tmp_path_factory, gold):
    path = tmp_path_factory.mktemp("prop") / "g.qrels"
    with path.open("w", encoding="utf-8", newline="\n") as f:
        write_trec_qrels(f, gold)
    back: dict[str, dict[str, int]] = {}
    for line in read_qrels(path):
        back.setdefault(line.question_id, {})[line.doc_id] = line.grade
    assert back == gold
