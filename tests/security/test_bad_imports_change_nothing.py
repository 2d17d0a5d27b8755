"""Hostile input through ``goldpan import``: exit code 2, a message naming the file, the
line and what was expected, no traceback, and a workspace that is byte for byte what it
was (a full SQL dump of every table compared before and after). Odd but valid files (a
BOM, CRLF line ends, a huge document) import correctly.

The reader-level catalogue is tests/security/test_readers_name_the_line.py; the docs-JSONL basics
(malformed line, duplicate, no id, invalid UTF-8, empty, binary) are in tests/cli/test_cli.py;
markup in the data is tests/security/test_cli_prints_markup_literally.py.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine.workspace import Workspace
from tests.conftest import run_cli as run

LABELS_HEADER = b"question_id,doc_id,annotator,grade\n"
VERDICTS_HEADER = b"question_id,annotator,verdict,note\n"
BEIR_HEADER = b"query-id\tcorpus-id\tscore\n"
SQUAD_OK = {
    "data": [
        {
            "title": "Busan",
            "paragraphs": [{"context": "Busan is a port.", "qas": [{"id": "s1", "question": "?"}]}],
        }
    ]
}


def _beir(corpus: bytes, queries: bytes, qrels: bytes, split: str = "test") -> dict[str, bytes]:
    return {"b/corpus.jsonl": corpus, "b/queries.jsonl": queries, f"b/qrels/{split}.tsv": qrels}


GOOD_CORPUS = b'{"_id": "x1", "text": "alpha"}\n{"_id": "x2", "text": "beta"}\n'
GOOD_QUERIES = b'{"_id": "k1", "text": "alpha?"}\n'

# case -> (import kind, files, the path given to goldpan, what stderr must say)
CASES: dict[str, tuple[str, dict[str, bytes], str, str]] = {
    # -- docs: JSONL (more in test_cli.py), CSV, a Markdown folder
    "docs jsonl lone surrogate": (
        "docs",
        {"c.jsonl": b'{"_id": "a", "text": "ok"}\n{"_id": "b", "text": "\\ud800"}\n'},
        "c.jsonl",
        "c.jsonl:2: a \\ud800 escape in `text` is half of a surrogate pair",
    ),
    "docs jsonl control character in id": (
        "docs",
        {"c.jsonl": b'{"_id": "a\\u001b[2J", "text": "x"}\n'},
        "c.jsonl",
        "c.jsonl:1: id 'a\\x1b[2J' contains a control character",
    ),
    "docs jsonl utf-16": (
        "docs",
        {"c.jsonl": '{"_id": "a", "text": "x"}\n'.encode("utf-16")},
        "c.jsonl",
        "c.jsonl: looks like UTF-16 text (byte-order mark); expected UTF-8",
    ),
    "docs jsonl deep nesting": (
        "docs",
        {"c.jsonl": b'{"_id": "a", "f": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n"},
        "c.jsonl",
        "c.jsonl:1: JSON nested too deeply",
    ),
    "docs csv malformed": (
        "docs",
        {"c.csv": b'id,title,text\na,T,x\nb,"unclosed,y\n'},
        "c.csv",
        "c.csv:3: malformed CSV (unexpected end of data); a quoted field is never closed",
    ),
    "docs csv no id column": (
        "docs",
        {"c.csv": b"name,text\na,x\n"},
        "c.csv",
        "c.csv:1: the header needs an `id` column",
    ),
    "docs csv empty id": (
        "docs",
        {"c.csv": b"id,text\na,x\n,y\n"},
        "c.csv",
        "c.csv:3: record has an empty id",
    ),
    "docs csv duplicate id": (
        "docs",
        {"c.csv": b"id,text\na,x\na,y\n"},
        "c.csv",
        "c.csv:3: duplicate document id 'a' (first seen on line 2)",
    ),
    "docs csv invalid utf-8": (
        "docs",
        {"c.csv": b"id,text\na,x\nb,\xe9t\xe9\n"},
        "c.csv",
        "c.csv:3: invalid UTF-8 (byte 0xe9)",
    ),
    "docs csv header only": (
        "docs",
        {"c.csv": b"id,title,text\n"},
        "c.csv",
        "c.csv: no documents after the header row",
    ),
    "docs csv empty": ("docs", {"c.csv": b"\n\n"}, "c.csv", "c.csv: the file is empty"),
    "docs csv binary": (
        "docs",
        {"c.csv": b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"},
        "c.csv",
        "c.csv: looks like a binary file",
    ),
    "docs markdown bad yaml": (
        "docs",
        {"md/a.md": b"# A\ntext\n", "md/b.md": b"---\nid: b\ntitle: [oops\n---\nbody\n"},
        "md",
        "b.md:4: bad YAML front matter",
    ),
    "docs markdown impossible date": (
        "docs",
        {"md/a.md": b"---\nid: a\ndate: 2024-02-30\n---\nbody\n"},
        "md",
        "a.md:2: bad YAML front matter: day is out of range for month",
    ),
    "docs markdown yaml binary": (
        "docs",
        {"md/a.md": b"---\nid: a\nblob: !!binary aGk=\n---\nbody\n"},
        "md",
        "a.md:2: front matter `blob` has a value of type bytes",
    ),
    "docs markdown never closed": (
        "docs",
        {"md/a.md": b"---\nid: a\n"},
        "md",
        "a.md:1: front matter opened with `---` is never closed",
    ),
    "docs markdown duplicate id": (
        "docs",
        {"md/a.md": b"---\nid: same\n---\nx\n", "md/b.md": b"---\nid: same\n---\ny\n"},
        "md",
        "b.md: duplicate document id 'same' (also in",
    ),
    "docs markdown invalid utf-8": (
        "docs",
        {"md/a.md": b"# A\nline\n\xff\xfe\n"},
        "md",
        "a.md:3: invalid UTF-8 (byte 0xff)",
    ),
    "docs markdown empty file": (
        "docs",
        {"md/a.md": b"# A\n", "md/b.md": b""},
        "md",
        "b.md: the file is empty",
    ),
    "docs markdown binary file": (
        "docs",
        {"md/a.md": b"\x00\x01binary"},
        "md",
        "a.md: looks like a binary file",
    ),
    "docs markdown no files": (
        "docs",
        {"md/readme.txt": b"x"},
        "md",
        "md: no Markdown files (*.md) in this folder",
    ),
    # -- questions: JSONL and CSV
    "questions jsonl malformed": (
        "questions",
        {"q.jsonl": b'{"_id": "n1", "text": "a"}\n{"_id": "n2" "text": "b"}\n'},
        "q.jsonl",
        "q.jsonl:2: malformed JSON (Expecting ',' delimiter at column 14)",
    ),
    "questions jsonl no id": (
        "questions",
        {"q.jsonl": b'{"text": "why"}\n'},
        "q.jsonl",
        "q.jsonl:1: record has no id; expected an `_id` or `id` field",
    ),
    "questions jsonl duplicate id": (
        "questions",
        {"q.jsonl": b'{"_id": "n1", "text": "a"}\n{"_id": "n1", "text": "b"}\n'},
        "q.jsonl",
        "q.jsonl:2: duplicate question id 'n1' (first seen on line 1)",
    ),
    "questions jsonl bad tags": (
        "questions",
        {"q.jsonl": b'{"_id": "n1", "text": "a", "tags": [1, 2]}\n'},
        "q.jsonl",
        "q.jsonl:1: `tags` must be a list of strings",
    ),
    "questions jsonl invalid utf-8": (
        "questions",
        {"q.jsonl": b'{"_id": "n1", "text": "\xc0\xaf"}\n'},
        "q.jsonl",
        "q.jsonl:1: invalid UTF-8 (byte 0xc0)",
    ),
    "questions csv no text": (
        "questions",
        {"q.csv": b"id,text\nn1,a\nn2,  \n"},
        "q.csv",
        "q.csv:3: question 'n2' has no text",
    ),
    "questions csv too few fields": (
        "questions",
        {"q.csv": b"id,text,tags\nn1,a\n"},
        "q.csv",
        "q.csv:2: fewer fields than the 3 in the header",
    ),
    "questions csv header only": (
        "questions",
        {"q.csv": b"id,text\n"},
        "q.csv",
        "q.csv: no questions after the header row",
    ),
    "questions empty": ("questions", {"q.jsonl": b" \n"}, "q.jsonl", "q.jsonl: the file is empty"),
    # -- qrels: TREC and BEIR TSV
    "qrels trec unknown question": (
        "qrels",
        {"x.qrels": b"q1 0 d1 1\nq9 0 d1 1\n"},
        "x.qrels",
        "x.qrels:2: unknown question 'q9'; import the questions first",
    ),
    "qrels trec grade nan": (
        "qrels",
        {"x.qrels": b"q1 0 d1 nan\n"},
        "x.qrels",
        "x.qrels:1: grade 'nan' is not a number; expected 0-3",
    ),
    "qrels trec grade inf": (
        "qrels",
        {"x.qrels": b"q1 0 d1 1\nq1 0 d2 inf\n"},
        "x.qrels",
        "x.qrels:2: grade 'inf' is not a number; expected 0-3",
    ),
    "qrels trec half grade": (
        "qrels",
        {"x.qrels": b"q1 0 d1 1.5\n"},
        "x.qrels",
        "x.qrels:1: grade '1.5' is not a whole number; expected 0-3",
    ),
    "qrels trec five fields": (
        "qrels",
        {"x.qrels": b"q1 0 d1 1\nq1 0 d 2 1\n"},
        "x.qrels",
        "x.qrels:2: expected `qid iter doc grade` (TREC) as on the first line, got 5 fields",
    ),
    "qrels trec only comments": (
        "qrels",
        {"x.qrels": b"# nothing judged\n"},
        "x.qrels",
        "x.qrels: no judgments found",
    ),
    "qrels trec invalid utf-8": (
        "qrels",
        {"x.qrels": b"q1 0 d1 1\nq1 0 d\xff 1\n"},
        "x.qrels",
        "x.qrels:2: invalid UTF-8 (byte 0xff)",
    ),
    "qrels trec binary": ("qrels", {"x.qrels": b"\x00" * 64}, "x.qrels", "looks like a binary"),
    "qrels beir unknown doc": (
        "qrels",
        {"test.tsv": BEIR_HEADER + b"q1\td1\t1\nq2\td9\t1\n"},
        "test.tsv",
        "test.tsv:3: unknown document 'd9'; not in the corpus",
    ),
    "qrels beir unknown question": (
        "qrels",
        {"test.tsv": BEIR_HEADER + b"zz\td1\t1\n"},
        "test.tsv",
        "test.tsv:2: unknown question 'zz'",
    ),
    "qrels beir non-numeric score": (
        "qrels",
        {"test.tsv": BEIR_HEADER + b"q1\td1\tyes\n"},
        "test.tsv",
        "test.tsv:2: grade 'yes' is not a number; expected 0-3",
    ),
    "qrels beir empty field": (
        "qrels",
        {"test.tsv": BEIR_HEADER + b"q1\t\t1\n"},
        "test.tsv",
        "test.tsv:2: an empty field; expected `qid doc grade` (BEIR)",
    ),
    "qrels beir judged twice": (
        "qrels",
        {"test.tsv": BEIR_HEADER + b"q1\td1\t1\nq1\td1\t2\n"},
        "test.tsv",
        "test.tsv:3: question 'q1' and document 'd1' are judged twice (first on line 2)",
    ),
    # -- labels CSV
    "labels unknown doc": (
        "labels",
        {"l.csv": LABELS_HEADER + b"q1,d1,kim,1\nq1,nodoc,kim,1\n"},
        "l.csv",
        "l.csv:3: unknown document 'nodoc'; not in the corpus",
    ),
    "labels unknown question": (
        "labels",
        {"l.csv": LABELS_HEADER + b"q0,d1,kim,1\n"},
        "l.csv",
        "l.csv:2: unknown question 'q0'",
    ),
    "labels non-numeric grade": (
        "labels",
        {"l.csv": LABELS_HEADER + b"q1,d1,kim,relevant\n"},
        "l.csv",
        "l.csv:2: grade 'relevant' is not a number; expected 0-3",
    ),
    "labels infinite grade": (
        "labels",
        {"l.csv": LABELS_HEADER + b"q1,d1,kim,Infinity\n"},
        "l.csv",
        "l.csv:2: grade 'Infinity' is not a number; expected 0-3",
    ),
    "labels wrong header": (
        "labels",
        {"l.csv": b"qid,doc,grade\nq1,d1,1\n"},
        "l.csv",
        "l.csv:1: the header needs the columns question_id, doc_id, annotator, grade",
    ),
    "labels no annotator": (
        "labels",
        {"l.csv": LABELS_HEADER + b"q1,d1,,1\n"},
        "l.csv",
        "l.csv:2: question_id, doc_id and annotator must not be empty",
    ),
    "labels repeated": (
        "labels",
        {"l.csv": LABELS_HEADER + b"q1,d1,kim,1\nq1,d1,kim,2\n"},
        "l.csv",
        "l.csv:3: label repeated (first on line 2)",
    ),
    "labels invalid utf-8": (
        "labels",
        {"l.csv": LABELS_HEADER + b"q1,d1,k\xf0\x28\x8c\x28,1\n"},
        "l.csv",
        "l.csv:2: invalid UTF-8 (byte 0xf0)",
    ),
    # -- verdicts CSV
    "verdicts unknown question": (
        "verdicts",
        {"v.csv": VERDICTS_HEADER + b"q1,kim,skip,\nq7,kim,skip,\n"},
        "v.csv",
        "v.csv:3: unknown question 'q7'",
    ),
    "verdicts unknown verdict": (
        "verdicts",
        {"v.csv": VERDICTS_HEADER + b"q1,kim,maybe,\n"},
        "v.csv",
        "v.csv:2: verdict 'maybe' unknown; expected one of answerable, no_answer, ambiguous",
    ),
    "verdicts twice": (
        "verdicts",
        {"v.csv": VERDICTS_HEADER + b"q1,kim,skip,\nq1,kim,no_answer,\n"},
        "v.csv",
        "v.csv:3: a second verdict of the same annotator (first on line 2)",
    ),
    "verdicts no annotator": (
        "verdicts",
        {"v.csv": VERDICTS_HEADER + b"q1,,skip,\n"},
        "v.csv",
        "v.csv:2: question_id and annotator must not be empty",
    ),
    "verdicts extra field": (
        "verdicts",
        {"v.csv": VERDICTS_HEADER + b"q1,kim,skip,a note,oops\n"},
        "v.csv",
        "v.csv:2: more fields than the 4 in the header",
    ),
    "verdicts binary": ("verdicts", {"v.csv": b"\x00\x00"}, "v.csv", "looks like a binary file"),
    # -- a BEIR folder
    "beir not a folder": ("beir", {}, "b", "b: expected a BEIR folder"),
    "beir missing corpus": (
        "beir",
        {"b/queries.jsonl": GOOD_QUERIES, "b/qrels/test.tsv": BEIR_HEADER},
        "b",
        "corpus.jsonl: no such file",
    ),
    "beir missing split": (
        "beir",
        _beir(GOOD_CORPUS, GOOD_QUERIES, BEIR_HEADER + b"k1\tx1\t1\n", split="dev"),
        "b",
        "test.tsv: no such file; expected the split's qrels (splits here: dev)",
    ),
    "beir malformed corpus": (
        "beir",
        _beir(GOOD_CORPUS + b"{oops\n", GOOD_QUERIES, BEIR_HEADER),
        "b",
        "corpus.jsonl:3: malformed JSON",
    ),
    "beir duplicate query": (
        "beir",
        _beir(GOOD_CORPUS, GOOD_QUERIES * 2, BEIR_HEADER),
        "b",
        "queries.jsonl:2: duplicate question id 'k1' (first seen on line 1)",
    ),
    "beir qrels unknown doc": (
        "beir",
        _beir(GOOD_CORPUS, GOOD_QUERIES, BEIR_HEADER + b"k1\tx1\t1\nk1\tx3\t1\n"),
        "b",
        "test.tsv:3: unknown document 'x3'; not in the corpus",
    ),
    "beir qrels unknown question": (
        "beir",
        _beir(GOOD_CORPUS, GOOD_QUERIES, BEIR_HEADER + b"k2\tx1\t1\n"),
        "b",
        "test.tsv:2: unknown question 'k2'",
    ),
    "beir qrels bad score": (
        "beir",
        _beir(GOOD_CORPUS, GOOD_QUERIES, BEIR_HEADER + b"k1\tx1\tnan\n"),
        "b",
        "test.tsv:2: grade 'nan' is not a number",
    ),
    # -- SQuAD
    "squad malformed": (
        "squad",
        {"s.json": b'{"data": [\n  {"title": "A",\n   "paragraphs": [}\n]}\n'},
        "s.json",
        "s.json:3: malformed JSON (Expecting value)",
    ),
    "squad list at top": (
        "squad",
        {"s.json": b'[{"title": "A"}]'},
        "s.json",
        's.json: top level: expected an object with a "data" list (SQuAD 1.1 / 2.0 shape)',
    ),
    "squad missing qas": (
        "squad",
        {
            "s.json": json.dumps(
                {"data": [{"title": "A", "paragraphs": [{"context": "c"}]}]}
            ).encode()
        },
        "s.json",
        's.json: data[0].paragraphs[0]: expected a "qas" list (SQuAD 1.1 / 2.0 shape)',
    ),
    "squad question not text": (
        "squad",
        {
            "s.json": json.dumps(
                {
                    "data": [
                        {
                            "title": "A",
                            "paragraphs": [{"context": "c", "qas": [{"id": "a", "question": 3}]}],
                        }
                    ]
                }
            ).encode()
        },
        "s.json",
        's.json: data[0].paragraphs[0].qas[0]: expected an object with "id" and "question"',
    ),
    "squad lone surrogate": (
        "squad",
        {"s.json": json.dumps(SQUAD_OK).replace("Busan is", "\\udfff is").encode()},
        "s.json",
        "s.json: a \\udfff escape in `data[0].paragraphs[0].context` is half of a surrogate",
    ),
    "squad empty": ("squad", {"s.json": b""}, "s.json", "s.json: the file is empty"),
}


def dump(path: Path) -> list[str]:
    """Every statement that would rebuild the workspace, and its schema version."""
    conn = sqlite3.connect(path)
    try:
        return [f"user_version {conn.execute('PRAGMA user_version').fetchone()[0]}"] + list(
            conn.iterdump()
        )
    finally:
        conn.close()


def _files(tmp_path: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_hostile_import_exits_2_and_changes_nothing(case, tiny_ws, tmp_path, capsys):
    what, files, target, expected = CASES[case]
    _files(tmp_path, files)
    before = dump(tiny_ws)
    code, out, err = run(capsys, "import", what, tiny_ws, tmp_path / target)
    assert code == 2, (out, err)
    assert err.startswith("goldpan: error: ")
    assert expected in err.replace("\n", ""), err
    assert "Traceback" not in out + err and out == ""
    assert dump(tiny_ws) == before


KIND_FILES = {
    "docs": "c.jsonl",
    "questions": "q.jsonl",
    "qrels": "x.qrels",
    "labels": "l.csv",
    "verdicts": "v.csv",
    "beir": "bfolder",
    "squad": "s.json",
}


@pytest.mark.parametrize("what", KIND_FILES)
def test_missing_file_for_every_kind(what, tiny_ws, tmp_path, capsys):
    before = dump(tiny_ws)
    code, out, err = run(capsys, "import", what, tiny_ws, tmp_path / KIND_FILES[what])
    assert code == 2 and out == "" and "Traceback" not in err
    assert KIND_FILES[what] in err
    assert "no such file" in err or "expected a BEIR folder" in err
    assert dump(tiny_ws) == before


# -- odd but valid: a BOM and CRLF line ends import correctly -----------------------------

ODD_OK: dict[str, tuple[str, dict[str, str], str]] = {
    "docs jsonl": (
        "docs",
        {"c.jsonl": '{"_id": "n1", "title": "T", "text": "one two"}\n'},
        "c.jsonl",
    ),
    "docs csv": ("docs", {"c.csv": 'id,title,text\nn1,T,"one two"\n'}, "c.csv"),
    "docs markdown": ("docs", {"md/n1.md": "---\ntitle: T\n---\none two\n"}, "md"),
    "questions jsonl": ("questions", {"q.jsonl": '{"_id": "n1", "text": "why so"}\n'}, "q.jsonl"),
    "questions csv": ("questions", {"q.csv": "id,text,tags\nn1,why so,hard\n"}, "q.csv"),
    "qrels trec": ("qrels", {"x.qrels": "q4 0 d4 2\n"}, "x.qrels"),
    "qrels beir": ("qrels", {"test.tsv": "query-id\tcorpus-id\tscore\nq4\td4\t2\n"}, "test.tsv"),
    "labels": (
        "labels",
        {"l.csv": "question_id,doc_id,annotator,grade\nq4,d4,import,2\n"},
        "l.csv",
    ),
    "verdicts": (
        "verdicts",
        {"v.csv": "question_id,annotator,verdict,note\nq4,kim,skip,hm\n"},
        "v.csv",
    ),
    "beir": (
        "beir",
        {
            "b/corpus.jsonl": '{"_id": "n1", "title": "T", "text": "one two"}\n',
            "b/queries.jsonl": '{"_id": "k1", "text": "one?"}\n',
            "b/qrels/test.tsv": "query-id\tcorpus-id\tscore\nk1\tn1\t2\n",
        },
        "b",
    ),
    "squad": (
        "squad",
        {
            "s.json": '{"data": [\n {"title": "n1",\n  "paragraphs": [{"context": "one two",'
            '\n   "qas": [{"id": "k1", "question": "one?"}]}]}]}\n'
        },
        "s.json",
    ),
}


@pytest.mark.parametrize("line_end", ["\r\n", "\r"], ids=["crlf", "cr"])
@pytest.mark.parametrize("case", ODD_OK)
def test_bom_and_crlf_files_import_correctly(case, line_end, tiny_ws, tmp_path, capsys):
    what, files, target = ODD_OK[case]
    _files(
        tmp_path,
        {k: b"\xef\xbb\xbf" + v.replace("\n", line_end).encode() for k, v in files.items()},
    )
    code, out, err = run(capsys, "import", what, tiny_ws, tmp_path / target)
    assert code == 0, err
    assert out.startswith("imported ")
    ws = Workspace.open(tiny_ws, readonly=True)
    try:
        if case.startswith("docs"):
            doc = ws.doc("n1")
            assert doc is not None and (doc.title, doc.text) == ("T", "one two")
        elif case.startswith("questions"):
            q = ws.question("n1")
            assert q is not None and q.text == "why so"
        elif case.startswith(("qrels", "labels")):
            assert ("q4", "d4", "import", 2) in {
                (lab.question_id, lab.doc_id, lab.annotator, lab.grade) for lab in ws.labels()
            }
        elif case == "verdicts":
            assert [(v.question_id, v.annotator, v.verdict, v.note) for v in ws.verdicts()] == [
                ("q4", "kim", "skip", "hm")
            ]
            assert "1 verdicts" in out
        elif case == "beir":
            assert ws.doc("n1").text == "one two" and ws.question("k1").text == "one?"
            assert ("k1", "n1", 2) in {(x.question_id, x.doc_id, x.grade) for x in ws.labels()}
        else:
            assert ws.doc("n1").text == "n1\none two" and ws.question("k1").text == "one?"
    finally:
        ws.close()


def test_a_20_mb_document_through_the_cli(tiny_ws, tmp_path, capsys):
    text = ("감쇠 보정 [bold]x[/] " * 1_000_000).strip()
    assert len(text.encode()) > 20 * 1024 * 1024
    (tmp_path / "big.jsonl").write_text(
        json.dumps({"_id": "big", "title": "Big", "text": text}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    code, out, err = run(capsys, "import", "docs", tiny_ws, tmp_path / "big.jsonl")
    assert code == 0, err
    assert "documents: 1 added" in out
    ws = Workspace.open(tiny_ws, readonly=True)
    try:
        assert ws.doc("big").text == text
    finally:
        ws.close()
