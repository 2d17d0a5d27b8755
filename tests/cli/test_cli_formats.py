"""``goldpan import run``, ``import questions`` with gold, and ``export`` in every format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.demo import build_demo
from engine.retrieve.runner import refresh_runs
from engine.scoring import Latency
from tests.conftest import PYTREC_MEASURES, plain_qrels, plain_run, snapshot
from tests.conftest import run_cli as run

RETRIEVERS = ("bm25-word", "bm25-bigram")
TOL = 1e-9


TIMING = set(Latency.of([], []).as_dict())
"""The latency keys of a scoreboard (they measure speed, which differs run to run)."""


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    ws = build_demo(path, pool=False, models=False)
    refresh_runs(ws, RETRIEVERS)
    ws.close()
    return path


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "demo.db"
    shutil.copy(demo_template, path)
    return path


def score_json(capsys, ws: Path, *names: str) -> dict:
    argv = ["score", ws, "--json", "--no-pool"]
    for n in names:
        argv += ["--retriever", n]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


# -- import run ---------------------------------------------------------------------------------


def test_import_run_scores_as_pytrec_eval_on_the_exported_files(demo, tmp_path, capsys):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels_path, run_path = tmp_path / "gold.qrels", tmp_path / "word.run"
    assert run(capsys, "export", demo, "--format", "trec-qrels", "--out", qrels_path)[0] == 0
    code, out, _ = run(
        capsys,
        "export",
        demo,
        "--format",
        "trec-run",
        "--out",
        run_path,
        "--retriever",
        "bm25-word",
    )
    assert code == 0 and "lines" in out
    code, out, _ = run(capsys, "import", "run", demo, run_path, "--name", "ext-word")
    assert code == 0 and "rankings:" in out
    board = score_json(capsys, demo, "bm25-word", "ext-word")
    qrels, trec_run = plain_qrels(qrels_path), plain_run(run_path)
    measures = PYTREC_MEASURES
    per_q = pytrec_eval.RelevanceEvaluator(
        qrels, {"success.1,3,5,10", "recip_rank", "recall.5,10", "ndcg_cut.10"}
    ).evaluate(trec_run)
    assert board["questions"]["scored"] == len(qrels)
    for metric, measure in measures.items():
        # a qrels question without run lines scores 0 (trec_eval -c), as in goldpan
        want = sum(per_q[q][measure] if q in per_q else 0.0 for q in qrels) / len(qrels)
        for name in ("ext-word", "bm25-word"):
            assert board["retrievers"][name][metric] == pytest.approx(want, abs=TOL, rel=0)
    code, out, _ = run(capsys, "retriever", "list", demo, "--json")
    ext = next(r for r in json.loads(out) if r["name"] == "ext-word")
    assert ext["kind"] == "external" and ext["params"]["source"] == "word.run"


def test_partial_run_scores_its_missing_questions_as_misses(demo, tmp_path, capsys):
    path = tmp_path / "one.run"
    path.write_text("q01 Q0 pet-qc-01 1 2.0 a\n", encoding="utf-8")
    code, out, _ = run(capsys, "import", "run", demo, path, "--name", "one")
    assert code == 0 and "questions have no ranking in it" in out
    code, out, err = run(capsys, "score", demo, "--retriever", "one", "--no-pool")
    assert code == 0 and "not ranked yet" not in err  # an imported run never ranks again
    board = score_json(capsys, demo, "one")
    assert 0 < board["retrievers"]["one"]["hit@1"] == 1 / board["questions"]["scored"]


BAD_RUNS = [
    ("columns", "q01 Q0 recon-05 1 2.0 r\nq01 Q0 recon-02 2 1.0\n", 2, "expected 6 fields"),
    ("text score", "q01 Q0 recon-05 1 high r\n", 1, "is not a number"),
    ("nan score", "q01 Q0 recon-05 1 NaN r\n", 1, "not a finite number"),
    ("inf score", "q01 Q0 recon-05 1 inf r\n", 1, "not a finite number"),
    (
        "repeated doc",
        "q01 Q0 recon-05 1 2 r\nq01 Q0 recon-02 2 1 r\nq01 Q0 recon-05 3 0.5 r\n",
        3,
        "(lines 1 and 3)",
    ),
    (
        "unknown question",
        "q01 Q0 recon-05 1 2 r\nnope Q0 recon-05 1 2 r\nnope Q0 recon-02 2 1 r\n",
        2,
        "unknown question 'nope'; 1 more lines",
    ),
    (
        "unknown document",
        "q01 Q0 recon-05 1 2 r\nq01 Q0 ghost 2 1 r\nq02 Q0 ghost2 2 1 r\nq03 Q0 ghost 1 1 r\n",
        2,
        "unknown document 'ghost'; 2 more lines name documents not in the workspace "
        "(2 distinct in all)",
    ),
]


@pytest.mark.parametrize(
    ("content", "line", "expected"), [b[1:] for b in BAD_RUNS], ids=[b[0] for b in BAD_RUNS]
)
def test_bad_run_file_exits_2_naming_file_and_line(demo, tmp_path, capsys, content, line, expected):
    path = tmp_path / "bad.run"
    path.write_text(content, encoding="utf-8")
    before = snapshot(demo)
    code, out, err = run(capsys, "import", "run", demo, path, "--name", "ext")
    assert code == 2
    assert f"{path}:{line}: " in err and expected in err, err
    assert "Traceback" not in err + out
    assert snapshot(demo) == before


@pytest.mark.parametrize("content", ["", "# nothing but a comment\n\n"], ids=["empty", "comments"])
def test_run_file_without_rankings_exits_2(demo, tmp_path, capsys, content):
    path = tmp_path / "empty.run"
    path.write_text(content, encoding="utf-8")
    before = snapshot(demo)
    code, out, err = run(capsys, "import", "run", demo, path, "--name", "ext")
    assert code == 2 and str(path) in err and "Traceback" not in err + out
    assert "empty" in err or "no ranking lines" in err
    assert snapshot(demo) == before


def test_taken_names_exit_2_and_change_nothing(demo, tmp_path, capsys):
    path = tmp_path / "a.run"
    path.write_text("q01 Q0 recon-05 1 2.0 a\n", encoding="utf-8")
    assert run(capsys, "import", "run", demo, path, "--name", "ext")[0] == 0
    before = snapshot(demo)
    code, _, err = run(capsys, "import", "run", demo, path, "--name", "ext")
    assert code == 2 and "--replace" in err
    code, _, err = run(capsys, "import", "run", demo, path, "--name", "bm25-word", "--replace")
    assert code == 2 and "not an imported run" in err
    code, _, err = run(capsys, "import", "run", demo, path, "--name", "has space")
    assert code == 2 and "--name" in err
    assert snapshot(demo) == before
    other = tmp_path / "b.run"
    other.write_text("q02 Q0 recon-02 1 1.0 b\n", encoding="utf-8")
    code, out, _ = run(capsys, "import", "run", demo, other, "--name", "ext", "--replace")
    assert code == 0 and "rankings: 1 questions" in out
    assert snapshot(demo) != before


# -- questions with gold ----------------------------------------------------------------------


def test_import_questions_with_gold_as_an_annotator(demo, tmp_path, capsys):
    path = tmp_path / "q.csv"
    path.write_text(
        "id,text,tags,gold,no_answer\n"
        "n1,새 질문 하나,hard,recon-05:2 recon-02:1,false\n"
        "n2,없는 답,,,true\n",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "import", "questions", demo, path, "--annotator", "carol")
    assert code == 0 and "labels: 2" in out and "no-answer verdicts: 1" in out
    code, out, _ = run(capsys, "info", demo, "--json")
    assert "carol" in json.loads(out)["annotators"]


# -- export --------------------------------------------------------------------------------------


def test_beir_export_reimported_with_the_cli_scores_identically(demo, tmp_path, capsys):
    folder = tmp_path / "beir"
    code, out, _ = run(capsys, "export", demo, "--format", "beir", "--out", folder)
    assert code == 0 and "qrels lines" in out
    again = tmp_path / "again.db"
    assert run(capsys, "new", again)[0] == 0
    assert run(capsys, "import", "beir", again, folder)[0] == 0
    pool = ["pool", again, "--quiet"]
    for name in RETRIEVERS:
        pool += ["--retriever", name]
    assert run(capsys, *pool)[0] == 0
    before, after = score_json(capsys, demo, *RETRIEVERS), score_json(capsys, again, *RETRIEVERS)
    assert after["questions"]["scored"] == before["questions"]["scored"] > 0
    assert after["questions"]["no_answer"] == before["questions"]["no_answer"]
    for name in RETRIEVERS:
        for metric, value in before["retrievers"][name].items():
            if metric in TIMING:  # how fast, not how well
                continue
            assert after["retrievers"][name][metric] == pytest.approx(value, abs=TOL, rel=0)


def test_every_format_exports(demo, tmp_path, capsys):
    files = {
        "trec-qrels": "g.qrels",
        "trec-run": "r.run",
        "labels": "l.csv",
        "labels-csv": "l2.csv",
        "questions-jsonl": "q.jsonl",
        "questions-csv": "q.csv",
        "beir": "beir",
        "ranx": "ranx",
    }
    for fmt, name in files.items():
        code, _, err = run(capsys, "export", demo, "--format", fmt, "--out", tmp_path / name)
        assert code == 0, (fmt, err)
    assert (tmp_path / "l.csv").read_text() == (tmp_path / "l2.csv").read_text()
    assert (tmp_path / "l.csv").read_text().startswith("question_id,doc_id,annotator,grade\n")
    assert (
        (tmp_path / "q.csv").read_text(encoding="utf-8").startswith("id,text,tags,gold,no_answer\n")
    )
    assert sorted(p.name for p in (tmp_path / "ranx").iterdir()) == [
        "qrels.json",
        "run-bm25-bigram.json",
        "run-bm25-word.json",
    ]
    assert (tmp_path / "beir" / "qrels" / "test.tsv").is_file()


def test_export_output_is_given_once(demo, tmp_path, capsys):
    # the older positional OUT still works
    assert run(capsys, "export", demo, "--format", "trec-qrels", tmp_path / "a.qrels")[0] == 0
    code, _, err = run(
        capsys, "export", demo, "--format", "trec-qrels", tmp_path / "a", "--out", tmp_path / "b"
    )
    assert code == 2 and "once" in err
    code, _, err = run(capsys, "export", demo, "--format", "trec-qrels")
    assert code == 2 and "--out" in err
    code, _, err = run(capsys, "export", demo, "--format", "beir", "--out", tmp_path / "a.qrels")
    assert code == 2 and "is a file" in err
