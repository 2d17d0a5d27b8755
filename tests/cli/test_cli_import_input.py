"""Imported input as untrusted: SQuAD 2.0, re-imported questions, CSV headers, ids, folders.

Every refusal asserts the exit code, the message (naming the file and line) and that the
workspace and the other files are byte-identical afterwards.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.workspace import Workspace
from tests.conftest import file_hashes as hashes
from tests.conftest import question_history, write_jsonl
from tests.conftest import run_cli as run

# -- SQuAD 2.0 ----------------------------------------------------------------------------

SQUAD2 = {
    "version": "v2.0",
    "data": [
        {
            "title": "Normans",
            "paragraphs": [
                {
                    "context": "The Normans gave their name to Normandy, a region in France.",
                    "qas": [
                        {
                            "id": "a1",
                            "question": "In what country is Normandy located?",
                            "answers": [{"text": "France", "answer_start": 55}],
                            "is_impossible": False,
                        },
                        {
                            "id": "u1",
                            "question": "Who gave their name to Normandy in the 1000s?",
                            "answers": [],
                            "plausible_answers": [{"text": "The Normans", "answer_start": 0}],
                            "is_impossible": True,
                        },
                        {
                            "id": "u2",
                            "question": "What is France a region of?",
                            "answers": [],
                            "plausible_answers": [{"text": "Normandy", "answer_start": 32}],
                        },
                    ],
                }
            ],
        }
    ],
}


def test_squad_2_unanswerable_questions_become_no_answer_verdicts(tmp_path, capsys):
    ws = tmp_path / "ws.db"
    assert run(capsys, "new", ws)[0] == 0
    path = tmp_path / "dev-v2.0.json"
    path.write_text(json.dumps(SQUAD2), encoding="utf-8")
    code, out, _ = run(capsys, "import", "squad", ws, path)
    assert code == 0
    assert "questions: 3 added" in out and "labels: 1" in out and "no-answer verdicts: 2" in out
    code, out, _ = run(capsys, "score", ws, "--json", "--quiet")
    assert code == 0
    counts = json.loads(out)["questions"]
    assert counts["scored"] == 1 and counts["no_answer"] == 2
    code, out, _ = run(capsys, "info", ws, "--json")
    assert json.loads(out)["question_status"] == {"labeled": 1, "no_answer": 2}


def test_squad_2_bad_is_impossible_is_refused(tmp_path, capsys):
    ws = tmp_path / "ws.db"
    assert run(capsys, "new", ws)[0] == 0
    bad = json.loads(json.dumps(SQUAD2))
    bad["data"][0]["paragraphs"][0]["qas"][1]["is_impossible"] = "yes"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    before = hashes(tmp_path)
    code, _, err = run(capsys, "import", "squad", ws, path)
    assert code == 2
    assert "bad.json: data[0].paragraphs[0].qas[1]" in err and "is_impossible" in err
    assert hashes(tmp_path) == before


# -- a re-imported question whose text changed ---------------------------------------------


def _questions_file(tmp_path: Path, q1_text: str) -> Path:
    return write_jsonl(
        tmp_path / "questions.jsonl",
        [
            {"id": "q1", "text": q1_text, "tags": ["easy"]},
            {"id": "q2", "text": "금속 때문에 생기는 문제", "tags": ["hard"]},
        ],
    )


def test_a_changed_text_keeps_history_and_its_labels_need_recheck(tiny_ws, tmp_path, capsys):
    assert run(capsys, "verdict", tiny_ws, "q1", "answerable", "--annotator", "jun")[0] == 0
    path = _questions_file(tmp_path, "감쇠 보정은 언제 하나")
    code, out, _ = run(capsys, "import", "questions", tiny_ws, path)
    assert code == 0
    assert "questions: 0 added, 1 updated, 1 unchanged" in out
    assert "text changed: 1 questions, whose 3 judgments made for the old text need re-check" in out
    with Workspace.open(tiny_ws, readonly=True) as ws:
        history = question_history(ws, "q1")
        assert [h[1:] for h in history] == [("import", "감쇠 보정은 어떻게 하나")]
        assert ws.question("q1").text == "감쇠 보정은 언제 하나"
        assert not ws.labels_for("q1")  # kept, but not read as judgments of the new text
    code, out, _ = run(capsys, "info", tiny_ws, "--json")
    info = json.loads(out)
    assert info["question_status"] == {"labeled": 2, "recheck": 1, "unlabeled": 1}
    assert info["judgments_for_an_old_text"] == 3
    code, out, _ = run(capsys, "score", tiny_ws, "--json", "--quiet", "--no-pool")
    assert json.loads(out)["questions"]["recheck"] == 1
    code, out, _ = run(capsys, "score", tiny_ws, "--quiet", "--no-pool")
    assert "1 need re-check (text changed)" in out
    # the old gold does not travel as gold either
    qrels = tmp_path / "gold.qrels"
    assert run(capsys, "export", tiny_ws, "--format", "trec-qrels", qrels)[0] == 0
    assert [ln.split()[0] for ln in qrels.read_text().splitlines()] == ["q2", "q3"]
    # judged again for the new text: gold again
    assert run(capsys, "label", tiny_ws, "q1", "d1", "3", "--annotator", "mina")[0] == 0
    code, out, _ = run(capsys, "info", tiny_ws, "--json")
    assert json.loads(out)["question_status"] == {"labeled": 3, "unlabeled": 1}
    assert json.loads(out)["judgments_for_an_old_text"] == 2


def test_a_text_changed_back_makes_its_labels_current_again(tiny_ws, tmp_path, capsys):
    assert (
        run(capsys, "import", "questions", tiny_ws, _questions_file(tmp_path, "바뀐 질문"))[0] == 0
    )
    path = _questions_file(tmp_path, "감쇠 보정은 어떻게 하나")
    code, out, _ = run(capsys, "import", "questions", tiny_ws, path)
    assert code == 0 and "text changed: 1 questions, whose 0 judgments" in out
    code, out, _ = run(capsys, "info", tiny_ws, "--json")
    info = json.loads(out)
    assert info["question_status"] == {"labeled": 3, "unlabeled": 1}
    assert info["judgments_for_an_old_text"] == 0


def test_replace_labels_deletes_the_old_texts_labels_and_logs_them(tiny_ws, tmp_path, capsys):
    path = _questions_file(tmp_path, "감쇠 보정은 언제 하나")
    code, out, _ = run(capsys, "import", "questions", tiny_ws, path, "--replace-labels")
    assert code == 0
    assert "whose 2 judgments made for the old text deleted (--replace-labels)" in out
    with Workspace.open(tiny_ws, readonly=True) as ws:
        assert ws.recheck_counts() == {}
        assert not ws.labels_for("q1")
        deleted = [e for e in ws.events() if e["kind"] == "label" and e["new"] is None]
        assert sorted((e["doc_id"], e["old"]) for e in deleted) == [("d1", "2"), ("d2", "0")]
    code, out, _ = run(capsys, "info", tiny_ws, "--json")
    assert json.loads(out)["question_status"] == {"labeled": 2, "unlabeled": 2}


def test_a_file_giving_gold_for_the_new_text_makes_that_gold(tiny_ws, tmp_path, capsys):
    path = write_jsonl(
        tmp_path / "q.jsonl",
        [{"id": "q1", "text": "감쇠 보정은 언제 하나", "gold": ["d2:1"]}],
    )
    code, out, _ = run(capsys, "import", "questions", tiny_ws, path, "--annotator", "mina")
    assert code == 0 and "2 judgments made for the old text need re-check" in out
    code, out, _ = run(capsys, "info", tiny_ws, "--json")
    assert json.loads(out)["question_status"] == {"labeled": 3, "unlabeled": 1}


# -- CSV headers, Unicode forms of ids, invisible characters -------------------------------


def test_a_duplicate_csv_header_is_refused(tiny_ws, tmp_path, capsys):
    path = tmp_path / "q.csv"
    path.write_text("id,text,id\nq9,a question,q10\n", encoding="utf-8")
    before = hashes(tmp_path)
    code, _, err = run(capsys, "import", "questions", tiny_ws, path)
    assert code == 2
    assert "q.csv:1: column 'id' appears twice in the header" in err
    assert hashes(tmp_path) == before


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "docs.csv",
            "id,body\nd1,the whole text of d1\n",
            "docs.csv:1: the header needs a `text` column (id, title, text); found 'id', 'body'",
        ),
        ("docs.csv", "id,title\nd1,a title\n", "found 'id', 'title'"),
        (
            "docs.tsv",
            "id\tcontent\nd1\tthe whole text\n",
            "docs.tsv:1: the header needs a `text` column",
        ),
        (
            "docs.jsonl",
            '{"_id": "d9", "text": "a new one"}\n{"_id": "d1", "body": "the whole text"}\n',
            "docs.jsonl:2: no `text` field; expected _id, title, text (found '_id', 'body')",
        ),
    ],
)
def test_documents_without_a_text_column_are_refused(
    tiny_ws, tmp_path, capsys, name, content, expected
):
    # the body under another name was read as an empty text: an update emptied the
    # stored document's text, and the import said "1 updated" with exit 0
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    before = hashes(tmp_path)
    code, _, err = run(capsys, "import", "docs", tiny_ws, path)
    assert code == 2
    assert expected in err
    assert hashes(tmp_path) == before


def test_a_text_column_left_empty_is_still_an_empty_text(tiny_ws, tmp_path, capsys):
    path = tmp_path / "docs.csv"
    path.write_text("id,title,text\nd9,only a title,\n", encoding="utf-8")
    assert run(capsys, "import", "docs", tiny_ws, path)[0] == 0
    with Workspace.open(tiny_ws) as ws:
        assert [(d.title, d.text) for d in ws.docs() if d.id == "d9"] == [("only a title", "")]


def test_ids_differing_only_in_unicode_form_are_refused_in_one_file(tiny_ws, tmp_path, capsys):
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    path = write_jsonl(
        tmp_path / "q.jsonl", [{"id": nfc, "text": "one"}, {"id": nfd, "text": "two"}]
    )
    before = hashes(tmp_path)
    code, _, err = run(capsys, "import", "questions", tiny_ws, path)
    assert code == 2
    assert "q.jsonl:2: question id" in err and "differ only in Unicode form" in err
    assert "(line 1)" in err
    assert hashes(tmp_path) == before


def test_an_id_differing_from_a_workspace_id_only_in_form_is_refused(tiny_ws, tmp_path, capsys):
    first = write_jsonl(tmp_path / "a.jsonl", [{"id": "caf\u00e9", "text": "one"}])
    assert run(capsys, "import", "questions", tiny_ws, first)[0] == 0
    second = write_jsonl(tmp_path / "b.jsonl", [{"id": "cafe\u0301", "text": "two"}])
    before = hashes(tmp_path)
    code, _, err = run(capsys, "import", "questions", tiny_ws, second)
    assert code == 2
    assert "b.jsonl: question id" in err and "the workspace has it" in err
    assert hashes(tmp_path) == before


def test_invisible_characters_in_ids_are_shown_as_pictures(tiny_ws, tmp_path, capsys):
    path = write_jsonl(
        tmp_path / "q.jsonl",
        [{"id": "q\u200b1", "text": "zero width"}, {"id": "q\u202e2", "text": "override"}],
    )
    assert run(capsys, "import", "questions", tiny_ws, path)[0] == 0
    code, out, _ = run(capsys, "label", tiny_ws, "q\u200b1", "d1", "1", "--annotator", "kim")
    assert code == 0 and "q⟨U+200B⟩1 d1 = 1" in out and "\u200b" not in out
    code, out, _ = run(capsys, "label", tiny_ws, "q\u202e2", "d1", "1", "--annotator", "kim")
    assert code == 0 and "q⟨U+202E⟩2" in out and "\u202e" not in out


# -- spreadsheet formulas in CSV exports ---------------------------------------------------

HOSTILE = [
    {"id": "=1+1", "text": '=HYPERLINK("http://e.x","click")', "tags": ["@at"]},
    {"id": "+q", "text": "-5 degrees", "tags": []},
    {"id": "'=q", "text": "'-already quoted", "tags": []},
    {"id": "@q", "text": "at sign", "tags": []},
    {"id": "'q", "text": "'plain quote", "tags": []},
]


def test_csv_exports_neutralize_formulas_and_import_back_unchanged(tmp_path, capsys):
    import csv

    ws = tmp_path / "ws.db"
    assert run(capsys, "new", ws)[0] == 0
    docs = write_jsonl(tmp_path / "docs.jsonl", [{"id": "-d", "title": "t", "text": "x"}])
    assert run(capsys, "import", "docs", ws, docs)[0] == 0
    records = [{**r, "gold": ["-d:2"]} for r in HOSTILE]
    questions = write_jsonl(tmp_path / "q.jsonl", records)
    assert run(capsys, "import", "questions", ws, questions, "--annotator", "@kim")[0] == 0
    qcsv, lcsv = tmp_path / "q.csv", tmp_path / "labels.csv"
    assert run(capsys, "export", ws, "--format", "questions-csv", qcsv)[0] == 0
    assert run(capsys, "export", ws, "--format", "labels", lcsv)[0] == 0
    with qcsv.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    cells = [c for row in rows for c in row[:4] if c]
    assert all(not c.startswith(("=", "+", "-", "@", "\t", "\r")) for c in cells), cells
    assert ["'=1+1", '\'=HYPERLINK("http://e.x","click")', "'@at", "'-d:2", "false"] in rows
    assert ["''=q", "''-already quoted", "", "'-d:2", "false"] in rows
    assert ["'q", "'plain quote", "", "'-d:2", "false"] in rows
    with lcsv.open(newline="", encoding="utf-8") as f:
        assert ["'+q", "'-d", "'@kim", "2"] in list(csv.reader(f))
    # goldpan's own importers take the quote away again: a round trip changes nothing
    other = tmp_path / "other.db"
    assert run(capsys, "new", other)[0] == 0
    assert run(capsys, "import", "docs", other, docs)[0] == 0
    assert run(capsys, "import", "questions", other, qcsv, "--annotator", "x")[0] == 0
    assert run(capsys, "import", "labels", other, lcsv)[0] == 0
    with Workspace.open(ws, readonly=True) as a, Workspace.open(other, readonly=True) as b:
        assert [(q.id, q.text, q.tags) for q in a.questions()] == [
            (q.id, q.text, q.tags) for q in b.questions()
        ]
        assert {(x.question_id, x.doc_id, x.grade) for x in a.labels()} == {
            (x.question_id, x.doc_id, x.grade) for x in b.labels() if x.annotator == "@kim"
        }


@pytest.mark.parametrize(
    ("cell", "exported"),
    [
        ("=1", "'=1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("'=x", "''=x"),
        ("''-x", "'" * 3 + "-x"),
        ("'x", "'x"),
        ("x=1", "x=1"),
        ("", ""),
    ],
)
def test_spreadsheet_safe_is_undone_by_the_importer(cell, exported):
    from engine.formats.tabular import spreadsheet_safe, unescape_formula

    assert spreadsheet_safe(cell) == exported
    assert unescape_formula(exported) == cell
    assert spreadsheet_safe(3) == 3


# -- folder scans: links out of the folder, FIFOs -------------------------------------------


@pytest.mark.timeout(20)
def test_links_out_of_the_folder_and_fifos_are_skipped_with_a_warning(tmp_path, capsys):
    ws = tmp_path / "ws.db"
    assert run(capsys, "new", ws)[0] == 0
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# A\n\nalpha\n")
    (folder / "sub" / "b.md").write_text("# B\n\nbeta\n")
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nnot for the corpus\n")
    os.symlink(secret, folder / "leak.md")
    os.symlink(folder / "a.md", folder / "inside.md")  # a link inside the folder is read
    os.mkfifo(folder / "pipe.md")
    code, out, err = run(capsys, "import", "docs", ws, folder)
    assert code == 0
    assert "documents: 3 added" in out
    assert "warning: skipped" in err and "leak.md: a link to" in err
    assert "outside the imported folder" in err
    assert "pipe.md: not a regular file" in err
    with Workspace.open(ws, readonly=True) as w:
        assert w.doc_ids() == ["a", "b", "inside"]
