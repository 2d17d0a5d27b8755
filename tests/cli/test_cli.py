import json

import pytest

from engine.workspace.migrations import SCHEMA_VERSION
from tests.conftest import run_cli as run
from tests.conftest import snapshot, write_jsonl


def test_new_import_pool_score_json(tmp_path, capsys):
    ws = tmp_path / "w.db"
    assert run(capsys, "new", ws)[0] == 0
    write_jsonl(
        tmp_path / "corpus.jsonl",
        [
            {"_id": "d1", "title": "감쇠 보정", "text": "감쇠 보정을 CT로 한다"},
            {"_id": "d2", "title": "금속", "text": "금속 인공물 제거 방법"},
            {"_id": "d3", "title": "공지", "text": "점검 공지"},
        ],
    )
    write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"_id": "q1", "text": "보정은 어떻게", "tags": ["hard"]},
            {"_id": "q2", "text": "금속 인공물", "tags": ["easy"]},
            {"_id": "q3", "text": "우주 탐사"},
            {"_id": "q4", "text": "점검"},
        ],
    )
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 2\nq4 0 d3 0\n")
    assert run(capsys, "import", "docs", ws, tmp_path / "corpus.jsonl")[0] == 0
    assert run(capsys, "import", "questions", ws, tmp_path / "q.jsonl")[0] == 0
    code, out, _ = run(capsys, "import", "qrels", ws, tmp_path / "qrels.txt", "--annotator", "mina")
    assert code == 0 and "labels: 3" in out
    code, out, _ = run(capsys, "pool", ws, "--retriever", "bm25-bigram", "--retriever", "bm25-word")
    assert code == 0 and "bm25-bigram" in out
    code, out, _ = run(
        capsys, "score", ws, "--json", "--retriever", "bm25-bigram", "--retriever", "bm25-word"
    )
    assert code == 0
    data = json.loads(out)
    # q1, q2 scored; q3 has no labels; q4 only a grade-0 judgment (no gold yet)
    assert data["questions"] == {
        "scored": 2,
        "not_ranked": 0,
        "no_answer": 0,
        "disputed": 0,
        "recheck": 0,
        "unlabeled": 2,
        "stopped": 0,
        "not_judged_stopped": 0,
    }
    bigram = data["retrievers"]["bm25-bigram"]
    assert set(bigram) == {
        "hit@1",
        "hit@3",
        "hit@5",
        "hit@10",
        "mrr",
        "recall@1",
        "recall@3",
        "recall@5",
        "recall@10",
        "ndcg@10",
        "judged@10",
        "bpref",
        "judged:mrr",
        "judged:ndcg@10",
        "not_ranked",
        "ms_p50",
        "ms_p95",
        "ms_max",
        "timed_alone",
        "questions_per_s",
    }
    assert bigram["not_ranked"] == 0
    assert 0 < bigram["ms_p50"] <= bigram["ms_p95"] <= bigram["ms_max"]
    assert bigram["hit@1"] == 1.0  # `보정` reaches d1 only through bigrams
    assert data["retrievers"]["bm25-word"]["hit@1"] == 0.5  # `보정은` != `보정`
    code, out, _ = run(capsys, "score", ws, "--json", "--tag", "easy", "--retriever", "bm25-word")
    assert json.loads(out)["questions"]["scored"] == 1


def test_fail_under_gates_with_exit_1(tiny_ws, capsys):
    code, _, err = run(
        capsys,
        "score",
        tiny_ws,
        "--retriever",
        "bm25-word",
        "--fail-under",
        "mrr=1.01",
        "--fail-under",
        "hit@10=0",
    )
    assert code == 1
    assert "bm25-word mrr" in err and "< 1.01" in err and "hit@10" not in err
    code, _, _ = run(
        capsys, "score", tiny_ws, "--retriever", "bm25-word", "--fail-under", "bm25-word:hit@10=0"
    )
    assert code == 0
    code, _, err = run(capsys, "score", tiny_ws, "--fail-under", "map=0.3")
    assert code == 2 and "'map'" in err


def test_export_trec_and_labels(tiny_ws, tmp_path, capsys):
    assert run(capsys, "pool", tiny_ws, "--retriever", "bm25-bigram")[0] == 0
    qrels = tmp_path / "gold.qrels"
    assert run(capsys, "export", tiny_ws, "--format", "trec-qrels", qrels)[0] == 0
    # the scored questions' judgments: d2 was judged not relevant for q1
    assert qrels.read_text().splitlines() == ["q1 0 d1 2", "q1 0 d2 0", "q2 0 d2 1", "q3 0 d3 3"]
    runf = tmp_path / "r.run"
    assert (
        run(capsys, "export", tiny_ws, "--format", "trec-run", runf, "--retriever", "bm25-bigram")[
            0
        ]
        == 0
    )
    first = runf.read_text().splitlines()[0].split()
    assert first[:4] == ["q1", "Q0", "d1", "1"] and first[5] == "bm25-bigram"
    assert float(first[4]) > 0
    labels = tmp_path / "labels.csv"
    assert run(capsys, "export", tiny_ws, "--format", "labels", labels)[0] == 0
    assert labels.read_text().splitlines()[:2] == [
        "question_id,doc_id,annotator,grade",
        "q1,d1,mina,2",
    ]


def test_info_json(tiny_ws, capsys):
    code, out, _ = run(capsys, "info", tiny_ws, "--json")
    info = json.loads(out)
    assert code == 0
    assert (info["docs"], info["questions"], info["labels"], info["retrievers"]) == (4, 4, 4, 4)
    assert info["schema_version"] == SCHEMA_VERSION and info["annotators"] == ["mina"]
    assert info["question_status"] == {"labeled": 3, "unlabeled": 1}
    assert (info["disputed"], info["judged_by"]) == (0, {"mina": 3})
    assert set(info) == {
        "workspace", "schema_version", "goldpan_version", "docs", "questions", "labels",
        "verdicts", "retrievers", "cached_runs", "annotators", "question_status",
        "disputed", "judged_by", "judgments_for_an_old_text", "stopped",
    }  # fmt: skip
    assert info["stopped"] == {"questions": 0, "candidates": 0}


def test_info_says_its_disputed_count_holds_the_ambiguous_questions(tiny_ws, capsys):
    from engine.types import Verdict
    from engine.workspace import Workspace

    ws = Workspace.open(tiny_ws)
    try:
        ws.write_verdicts([Verdict("q4", "mina", "ambiguous")])
    finally:
        ws.close()
    info = json.loads(run(capsys, "info", tiny_ws, "--json")[1])
    assert info["question_status"].get("ambiguous") == 1 and info["disputed"] == 1
    code, out, _ = run(capsys, "info", tiny_ws)
    assert code == 0
    row = next(line for line in out.splitlines() if "to adjudicate" in line)
    assert "disputed (incl. ambiguous" in row and row.rstrip(" │").endswith("1")


def test_retriever_add_list_remove(tiny_ws, capsys):
    assert (
        run(
            capsys,
            "retriever",
            "add",
            tiny_ws,
            "okapi-bigram",
            "--tokenizer",
            "bigram",
            "--variant",
            "okapi",
            "--k1",
            "1.2",
            "--b",
            "0.5",
        )[0]
        == 0
    )
    code, out, _ = run(capsys, "retriever", "list", tiny_ws, "--json")
    specs = {s["name"]: s for s in json.loads(out)}
    assert specs["okapi-bigram"]["params"] == {
        "tokenizer": "bigram",
        "variant": "okapi",
        "k1": 1.2,
        "b": 0.5,
        "fields": ["text"],
    }
    code, _, err = run(capsys, "retriever", "add", tiny_ws, "okapi-bigram")
    assert code == 2 and "already exists" in err
    code, _, err = run(capsys, "retriever", "add", tiny_ws, "bad name")
    assert code == 2
    assert run(capsys, "retriever", "remove", tiny_ws, "okapi-bigram")[0] == 0
    code, _, err = run(capsys, "retriever", "remove", tiny_ws, "okapi-bigram")
    assert code == 2 and "unknown retriever 'okapi-bigram'" in err


def test_corpus_text_is_printed_literally(tmp_path, capsys):
    ws = tmp_path / "m.db"
    run(capsys, "new", ws)
    write_jsonl(tmp_path / "c.jsonl", [{"_id": "[bold]d1[/]", "title": "t", "text": "x"}])
    write_jsonl(tmp_path / "q.jsonl", [{"_id": "q", "text": "x"}])
    run(capsys, "import", "docs", ws, tmp_path / "c.jsonl")
    run(capsys, "import", "questions", ws, tmp_path / "q.jsonl")
    assert run(capsys, "retriever", "add", ws, "[red]r[/red]", "--tokenizer", "word")[0] == 0
    code, out, _ = run(capsys, "score", ws)
    assert code == 0 and "[red]r[/red]" in out


# -- bad input: a clear message with file and line, exit 2, workspace unchanged ----------

BAD_INPUTS = {
    "malformed json line": (
        "docs",
        "c.jsonl",
        b'{"_id": "n1", "text": "ok"}\n{"_id": "n2", "text": \n',
        ":2: malformed JSON",
    ),
    "duplicate id": (
        "docs",
        "c.jsonl",
        b'{"_id": "n1", "text": "a"}\n{"_id": "n1", "text": "b"}\n',
        ":2: duplicate document id 'n1' (first seen on line 1)",
    ),
    "record without id": ("docs", "c.jsonl", b'{"text": "a"}\n', ":1: record has no id"),
    "invalid utf-8": (
        "docs",
        "c.jsonl",
        b'{"_id": "n1", "text": "a"}\n{"_id": "n2", "text": "\xff\xfe"}\n',
        ":2: invalid UTF-8",
    ),
    "empty file": ("docs", "c.jsonl", b"", "the file is empty"),
    "binary file": ("docs", "c.jsonl", b"\x00\x01\x02binary", "binary file"),
    "qrels unknown doc": (
        "qrels",
        "x.qrels",
        b"q1 0 d1 1\nq2 0 nodoc 1\n",
        ":2: unknown document 'nodoc'",
    ),
    "qrels bad grade": ("qrels", "x.qrels", b"q1 0 d1 high\n", ":1: grade 'high' is not a number"),
    "question without text": (
        "questions",
        "q.jsonl",
        b'{"_id": "q9"}\n',
        ":1: question 'q9' has no text",
    ),
    "csv with too many fields": (
        "docs",
        "c.csv",
        b"id,title,text\na,b,c\nd,e,f,g\n",
        ":3: more fields than the 3 in the header",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUTS, ids=list(BAD_INPUTS))
def test_bad_input_exits_2_and_changes_nothing(case, tiny_ws, tmp_path, capsys):
    what, name, content, expected = BAD_INPUTS[case]
    f = tmp_path / name
    f.write_bytes(content)
    before = snapshot(tiny_ws)
    code, out, err = run(capsys, "import", what, tiny_ws, f)
    assert code == 2
    assert name in err and expected in err.replace("\n", "")
    assert "Traceback" not in err + out
    assert snapshot(tiny_ws) == before


def test_missing_file_and_missing_workspace(tiny_ws, tmp_path, capsys):
    code, _, err = run(capsys, "import", "questions", tiny_ws, tmp_path / "nope.jsonl")
    assert code == 2 and "nope.jsonl: no such file" in err
    code, _, err = run(capsys, "score", tmp_path / "nope.db")
    assert code == 2 and "no such workspace" in err
    code, _, err = run(capsys, "new", tiny_ws)
    assert code == 2 and "already exists" in err


def test_demo_builds_once_then_reuses(tmp_path, capsys):
    path = tmp_path / "d" / "demo.db"
    code, out, err = run(capsys, "demo", "--path", path, "--no-open")
    assert code == 0 and path.exists()
    assert "bm25-kiwi" in out and "Hit@1" in out and "built the demo workspace" in err
    mtime = path.stat().st_mtime_ns
    code, out, err = run(capsys, "demo", "--path", path, "--no-open")
    assert code == 0 and "built" not in err and path.stat().st_mtime_ns == mtime
    code, _, err = run(capsys, "demo", "--path", path, "--no-open", "--force")
    assert code == 0 and "built the demo workspace" in err


def test_score_table_has_every_column_named(tiny_ws, capsys):
    code, out, _ = run(capsys, "score", tiny_ws, "--retriever", "bm25-word")
    header = next(line for line in out.splitlines() if "retriever" in line)
    cells = [c.strip() for c in header.strip("┃ ").split("┃")]
    assert cells == [
        "retriever",
        "Hit@1",
        "Hit@3",
        "Hit@5",
        "Hit@10",
        "MRR",
        "R@5",
        "R@10",
        "nDCG@10",
        "ms p50",
        "ms p95",
        "q/s",
    ]
