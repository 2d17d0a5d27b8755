"""Hostile input, reader by reader: each problem names the file, the line and what was
expected; data that is merely odd (a BOM, CRLF or CR line ends, a huge document, a
quarter million one-line documents) reads correctly.

The CLI side (exit code 2, no traceback, the workspace byte for byte unchanged) is in
tests/security/test_bad_imports_change_nothing.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.formats.docs import read_docs
from engine.formats.errors import IngestError
from engine.formats.labels import read_labels_csv, read_verdicts_csv
from engine.formats.markdown import read_markdown_doc, read_markdown_docs
from engine.formats.questions import read_questions
from engine.formats.squad import read_squad
from engine.formats.trec import read_qrels
from engine.ingest import import_beir, import_docs, import_labels, import_verdicts
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace

# -- every reader, with a small valid file and what it must read -------------------------


def _docs(result: Any) -> list[tuple[str, str, str]]:
    return [(d.id, d.title, d.text) for d in result]


def _questions(result: Any) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(q.id, q.text, q.tags) for q in result]


def _qrels(result: Any) -> list[tuple[str, str, int, int]]:
    return [(q.question_id, q.doc_id, q.grade, q.line) for q in result]


def _labels(result: Any) -> list[tuple[str, str, str, int, int]]:
    return [(lab.question_id, lab.doc_id, lab.annotator, lab.grade, n) for lab, n in result]


def _verdicts(result: Any) -> list[tuple[str, str, str, str, int]]:
    return [(v.question_id, v.annotator, v.verdict, v.note, n) for v, n in result]


def _squad(result: Any) -> tuple[list[tuple[str, str, str]], list[Any], list[tuple[str, str]]]:
    return _docs(result.docs), _questions(result.questions), result.gold


SQUAD_TEXT = (
    '{"version": "1.1", "data": [\n'
    '  {"title": "Seoul_City", "paragraphs": [\n'
    '    {"context": "Seoul is the capital.", "qas": [\n'
    '      {"id": "s1", "question": "What is the capital?", "answers": []}\n'
    "    ]}\n"
    "  ]}\n"
    "]}\n"
)

# name -> (file name, reader, LF content, summarizer, what it must read)
KINDS: dict[str, tuple[str, Callable[[Path], Any], str, Callable[[Any], Any], Any]] = {
    "docs jsonl": (
        "c.jsonl",
        read_docs,
        '{"_id": "a", "title": "T", "text": "x y"}\n{"id": "b", "text": "z"}\n',
        _docs,
        [("a", "T", "x y"), ("b", "", "z")],
    ),
    "docs csv": (
        "c.csv",
        read_docs,
        'id,title,text\na,T,"x, y"\nb,,z\n',
        _docs,
        [("a", "T", "x, y"), ("b", "", "z")],
    ),
    "docs markdown": (
        "c.md",
        read_markdown_doc,
        "---\nid: a\ntitle: T\n---\nline one\nline two\n",
        lambda d: _docs([d]),
        [("a", "T", "line one\nline two")],
    ),
    "questions jsonl": (
        "q.jsonl",
        read_questions,
        '{"_id": "q1", "text": "what?", "tags": ["hard"]}\n{"id": "q2", "text": "why"}\n',
        _questions,
        [("q1", "what?", ("hard",)), ("q2", "why", ())],
    ),
    "questions csv": (
        "q.csv",
        read_questions,
        "id,text,tags\nq1,what?,hard\nq2,why,\n",
        _questions,
        [("q1", "what?", ("hard",)), ("q2", "why", ())],
    ),
    "qrels trec": (
        "x.qrels",
        read_qrels,
        "q1 0 d1 2\nq2 0 d2 0\n",
        _qrels,
        [("q1", "d1", 2, 1), ("q2", "d2", 0, 2)],
    ),
    "qrels beir": (
        "test.tsv",
        read_qrels,
        "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
        _qrels,
        [("q1", "d1", 1, 2)],
    ),
    "labels csv": (
        "l.csv",
        read_labels_csv,
        "question_id,doc_id,annotator,grade\nq1,d1,mina,2\n",
        _labels,
        [("q1", "d1", "mina", 2, 2)],
    ),
    "verdicts csv": (
        "v.csv",
        read_verdicts_csv,
        "question_id,annotator,verdict,note\nq1,mina,no_answer,why\n",
        _verdicts,
        [("q1", "mina", "no_answer", "why", 2)],
    ),
    "squad": (
        "s.json",
        lambda p: read_squad(p, "article"),
        SQUAD_TEXT,
        _squad,
        (
            [("Seoul_City", "Seoul City", "Seoul City\nSeoul is the capital.")],
            [("s1", "What is the capital?", ())],
            [("s1", "Seoul_City")],
        ),
    ),
}


def _write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def _error(fn: Callable[[Path], Any], path: Path) -> IngestError:
    with pytest.raises(IngestError) as exc:
        fn(path)
    assert exc.value.path == str(path)
    return exc.value


@pytest.mark.parametrize("kind", KINDS)
def test_each_reader_reads_its_plain_file(kind, tmp_path):
    name, read, content, summary, expected = KINDS[kind]
    assert summary(read(_write(tmp_path, name, content))) == expected


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "variant",
    ["bom", "crlf", "bom+crlf", "cr"],
)
def test_bom_and_line_ends_read_the_same(kind, variant, tmp_path):
    name, read, content, summary, expected = KINDS[kind]
    text = content.replace("\n", "\r\n") if "crlf" in variant else content
    text = text.replace("\n", "\r") if variant == "cr" else text
    data = (b"\xef\xbb\xbf" if "bom" in variant else b"") + text.encode("utf-8")
    assert summary(read(_write(tmp_path, name, data))) == expected


@pytest.mark.parametrize("kind", KINDS)
def test_invalid_utf8_names_the_line(kind, tmp_path):
    name, read, content, _, _ = KINDS[kind]
    lines = content.encode("utf-8").split(b"\n")
    lines[1] = lines[1][:3] + b"\xc3\x28" + lines[1][3:]  # a broken two-byte sequence
    err = _error(read, _write(tmp_path, name, b"\n".join(lines)))
    assert err.line == 2
    assert "invalid UTF-8 (byte 0xc3); expected UTF-8 text" in str(err)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("data", [b"", b"   \n\r\n\t\n"], ids=["zero bytes", "blank lines"])
def test_empty_file(kind, data, tmp_path):
    name, read, _, _, _ = KINDS[kind]
    err = _error(read, _write(tmp_path, name, data))
    assert err.line is None and err.message == "the file is empty"


@pytest.mark.parametrize("kind", KINDS)
def test_missing_file(kind, tmp_path):
    name, read, _, _, _ = KINDS[kind]
    err = _error(read, tmp_path / "absent" / name)
    assert "no such file" in err.message


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10" + bytes(range(256))


@pytest.mark.parametrize("kind", KINDS)
def test_binary_file(kind, tmp_path):
    name, read, _, _, _ = KINDS[kind]
    err = _error(read, _write(tmp_path, name, PNG))
    assert err.message == "looks like a binary file (NUL bytes); expected text"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_are_named(kind, encoding, tmp_path):
    name, read, content, _, _ = KINDS[kind]
    bom = {"utf-16": "", "utf-16-be": "\ufeff", "utf-32": ""}[encoding]
    err = _error(read, _write(tmp_path, name, (bom + content).encode(encoding)))
    width = "UTF-32" if encoding == "utf-32" else "UTF-16"
    assert err.message == f"looks like {width} text (byte-order mark); expected UTF-8"


def test_a_nul_byte_deep_in_a_text_file_names_its_line(tmp_path):
    lines = [json.dumps({"_id": f"d{i}", "text": "x" * 40}) for i in range(500)]
    data = ("\n".join(lines) + "\n").encode() + b'{"_id": "z", "text": "a\x00b"}\n'
    err = _error(read_docs, _write(tmp_path, "c.jsonl", data))
    assert err.line == 501 and "NUL byte" in err.message


# -- malformed JSON and records without ids -----------------------------------------------


@pytest.mark.parametrize(
    ("name", "read"),
    [("c.jsonl", read_docs), ("q.jsonl", read_questions)],
    ids=["docs", "questions"],
)
@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ('{"_id": "n2", "text": ', "malformed JSON (Expecting value at column 23)"),
        ('{"_id": "n2", "text": "a"} trailing', "malformed JSON (Extra data at column 28)"),
        ("{'_id': 'n2'}", "malformed JSON (Expecting property name enclosed in double quotes"),
        ('"just a string"', "expected a JSON object, got str"),
        ("[1, 2]", "expected a JSON object, got list"),
        ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
    ],
    ids=["cut", "trailing", "single quotes", "string", "list", "deep"],
)
def test_malformed_json_names_the_line(name, read, bad, expected, tmp_path):
    good = '{"_id": "n1", "text": "ok"}\n\n'  # a blank line still counts
    err = _error(read, _write(tmp_path, name, good + bad + "\n"))
    assert err.line == 3
    assert expected in err.message


def test_pretty_printed_json_says_one_object_per_line(tmp_path):
    err = _error(read_questions, _write(tmp_path, "q.jsonl", '{\n  "id": "a",\n  "text": "b"\n}\n'))
    assert err.line == 1 and err.message.endswith("expected one JSON object per line")


@pytest.mark.parametrize(
    ("name", "read", "content", "line", "expected"),
    [
        ("c.jsonl", read_docs, '{"title": "t"}\n', 1, "record has no id"),
        ("c.jsonl", read_docs, '{"_id": null, "text": "t"}\n', 1, "record has no id"),
        ("c.jsonl", read_docs, '{"_id": "  ", "text": "t"}\n', 1, "record has an empty id"),
        ("c.jsonl", read_docs, '{"_id": ["a"]}\n', 1, "field `_id` must be text or a whole"),
        ("c.jsonl", read_docs, '{"id": 1.5}\n', 1, "field `id` must be text or a whole number"),
        ("c.jsonl", read_docs, '{"id": true}\n', 1, "got bool"),
        ("c.csv", read_docs, "id,text\na,x\n,y\n", 3, "record has an empty id"),
        ("c.csv", read_docs, "title,text\nt,x\n", 1, "the header needs an `id` column"),
        ("q.jsonl", read_questions, '{"text": "why"}\n', 1, "record has no id"),
        ("q.csv", read_questions, "id,text\n  ,why\n", 2, "record has an empty id"),
        ("q.csv", read_questions, "text\nwhy\n", 1, "the header needs an `id` column"),
    ],
)
def test_record_without_id(name, read, content, line, expected, tmp_path):
    err = _error(read, _write(tmp_path, name, content))
    assert err.line == line and expected in err.message


@pytest.mark.parametrize(
    ("name", "read", "content", "line"),
    [
        ("c.jsonl", read_docs, '{"_id": "a\\u001b[31m", "text": "x"}\n', 1),
        ("c.jsonl", read_docs, '{"_id": "a\\tb", "text": "x"}\n', 1),
        ("c.jsonl", read_docs, '{"_id": "a\\u0085b", "text": "x"}\n', 1),
        ("c.csv", read_docs, 'id,text\n"a\nb",x\n', 3),
        ("q.jsonl", read_questions, '{"_id": "q\\u0000", "text": "x"}\n', 1),
        ("c.md", read_markdown_doc, '---\nid: "a\\x1b[1mb"\n---\nx\n', 2),
    ],
)
def test_an_id_with_a_control_character_is_refused(name, read, content, line, tmp_path):
    # such an id would break a TREC or CSV export and could drive the terminal
    err = _error(read, _write(tmp_path, name, content))
    assert err.line == line
    assert "contains a control character; expected printable text" in err.message


def test_ids_with_spaces_and_markup_are_ids(tmp_path):
    path = _write(
        tmp_path, "c.jsonl", '{"_id": "TD 2024 [b]", "text": "x"}\n{"_id": 7, "text": "y"}\n'
    )
    assert [d.id for d in read_docs(path)] == ["TD 2024 [b]", "7"]


# -- duplicate ids ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "read", "content", "line", "expected"),
    [
        (
            "c.csv",
            read_docs,
            "id,text\na,x\nb,y\na,z\n",
            4,
            "duplicate document id 'a' (first seen on line 2)",
        ),
        (
            "c.jsonl",
            read_docs,
            '{"_id": "7", "text": "x"}\n{"_id": 7, "text": "y"}\n',
            2,
            "duplicate document id '7' (first seen on line 1)",
        ),
        (
            "q.jsonl",
            read_questions,
            '{"_id": "q1", "text": "x"}\n{"_id": " q1 ", "text": "y"}\n',
            2,
            "duplicate question id 'q1' (first seen on line 1)",
        ),
        (
            "q.csv",
            read_questions,
            "id,text\nq1,x\nq1,y\n",
            3,
            "duplicate question id 'q1' (first seen on line 2)",
        ),
        (
            "l.csv",
            read_labels_csv,
            "question_id,doc_id,annotator,grade\nq1,d1,a,1\nq1,d1,a,2\n",
            3,
            "label repeated (first on line 2)",
        ),
        (
            "v.csv",
            read_verdicts_csv,
            "question_id,annotator,verdict\nq1,a,skip\nq1,a,no_answer\n",
            3,
            "a second verdict of the same annotator (first on line 2)",
        ),
    ],
)
def test_duplicate_ids(name, read, content, line, expected, tmp_path):
    err = _error(read, _write(tmp_path, name, content))
    assert (err.line, err.message) == (line, expected)


def test_duplicate_markdown_ids_name_both_files(tmp_path):
    _write(tmp_path, "d/a.md", "---\nid: same\n---\nx\n")
    second = _write(tmp_path, "d/sub/b.md", "---\nid: same\n---\ny\n")
    with pytest.raises(IngestError) as exc:
        read_markdown_docs(tmp_path / "d")
    assert exc.value.path == str(second)
    assert "duplicate document id 'same' (also in" in exc.value.message
    assert "a.md" in exc.value.message


def test_duplicate_squad_titles_and_question_ids(tmp_path):
    para = {"context": "c", "qas": [{"id": "x", "question": "q?"}]}
    dup_q = {"data": [{"title": "A", "paragraphs": [para, para]}]}
    err = _error(lambda p: read_squad(p, "article"), _write(tmp_path, "s.json", json.dumps(dup_q)))
    assert "data[0].paragraphs[1].qas[0]: duplicate question id 'x'" in err.message
    dup_t = {"data": [{"title": "A", "paragraphs": []}, {"title": "A", "paragraphs": []}]}
    err = _error(lambda p: read_squad(p, "article"), _write(tmp_path, "s.json", json.dumps(dup_t)))
    assert "data[1]: duplicate article title 'A'" in err.message


# -- CSV shape ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "read", "content", "line", "expected"),
    [
        ("c.csv", read_docs, 'id,text\na,"unclosed\n', 2, "malformed CSV (unexpected end of data)"),
        ("c.csv", read_docs, "id,title,text\na,b\n", 2, "fewer fields than the 3 in the header"),
        ("c.csv", read_docs, "id,text\n", None, "no documents after the header row"),
        ("q.csv", read_questions, "id,text\n\n", None, "no questions after the header row"),
        ("q.csv", read_questions, "id,text\nq1,\n", 2, "question 'q1' has no text"),
        (
            "l.csv",
            read_labels_csv,
            "question,doc,grade\n",
            1,
            "the header needs the columns question_id, doc_id, annotator, grade",
        ),
        ("l.csv", read_labels_csv, "question_id,doc_id,annotator,grade\nq1,d1,a\n", 2, "fewer"),
        ("l.csv", read_labels_csv, "question_id,doc_id,annotator,grade\nq1,d1,a,1,9\n", 2, "more"),
        (
            "l.csv",
            read_labels_csv,
            "question_id,doc_id,annotator,grade\nq1,d1, ,1\n",
            2,
            "question_id, doc_id and annotator must not be empty",
        ),
        ("v.csv", read_verdicts_csv, "question_id,verdict\nq1,skip\n", 1, "the header needs"),
        ("v.csv", read_verdicts_csv, "question_id,annotator,verdict\nq1,a\n", 2, "fewer fields"),
        ("v.csv", read_verdicts_csv, "question_id,annotator,verdict\nq1,a,skip,x\n", 2, "more"),
        ("v.csv", read_verdicts_csv, "question_id,annotator,verdict\nq1,,skip\n", 2, "empty"),
        (
            "v.csv",
            read_verdicts_csv,
            "question_id,annotator,verdict\nq1,a,maybe\n",
            2,
            "verdict 'maybe' unknown; expected one of answerable, no_answer, ambiguous, skip",
        ),
    ],
)
def test_csv_of_the_wrong_shape(name, read, content, line, expected, tmp_path):
    err = _error(read, _write(tmp_path, name, content))
    assert err.line == line and expected in err.message


def test_csv_header_names_may_carry_spaces_and_blank_rows_are_skipped(tmp_path):
    path = _write(tmp_path, "l.csv", " question_id , doc_id,annotator,grade \n,,,\nq1,d1,a,3\n\n")
    assert _labels(read_labels_csv(path)) == [("q1", "d1", "a", 3, 3)]
    path = _write(tmp_path, "v.csv", "question_id,annotator,verdict\nq1,a, skip \n")
    assert _verdicts(read_verdicts_csv(path)) == [("q1", "a", "skip", "", 2)]


# -- grades -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("high", "grade 'high' is not a number; expected 0-3"),
        ("nan", "grade 'nan' is not a number; expected 0-3"),
        ("inf", "grade 'inf' is not a number; expected 0-3"),
        ("-Infinity", "grade '-Infinity' is not a number; expected 0-3"),
        ("1e400", "grade '1e400' is not a number; expected 0-3"),
        ("1_0", "grade '1_0' is not a number; expected 0-3"),
        ("2.5", "grade '2.5' is not a whole number; expected 0-3"),
        ("4", "grade 4 is out of range; expected 0-3"),
        ("-2", "grade -2 is out of range; expected 0-3"),
    ],
)
@pytest.mark.parametrize("kind", ["qrels trec", "qrels beir", "labels csv"])
def test_grades_that_are_not_0_to_3(kind, raw, expected, tmp_path):
    name, read, content, _, _ = KINDS[kind]
    lines = content.splitlines()
    lines.append(
        {
            "qrels trec": f"q9 0 d9 {raw}",
            "qrels beir": f"q9\td9\t{raw}",
            "labels csv": f"q9,d9,mina,{raw}",
        }[kind]
    )
    err = _error(read, _write(tmp_path, name, "\n".join(lines) + "\n"))
    assert err.line == len(lines) and err.message == expected


def test_whole_grades_written_as_floats_are_grades(tmp_path):
    path = _write(tmp_path, "x.qrels", "q1 0 d1 2.0\nq1 0 d2 -1\nq1 0 d3 +1\n")
    assert _qrels(read_qrels(path)) == [("q1", "d1", 2, 1), ("q1", "d3", 1, 3)]


@pytest.mark.parametrize(
    ("content", "line", "expected"),
    [
        ("q1\t0\t\t1\n", 1, "an empty field; expected `qid iter doc grade` (TREC)"),
        ("query-id\tcorpus-id\tscore\nq1\t\t1\n", 2, "an empty field; expected `qid doc grade`"),
        ("q1 0 d1 1\nq1 0 d 2 1\n", 2, "got 5 fields"),
        ("# only a comment\n", None, None),
    ],
)
def test_qrels_fields(content, line, expected, tmp_path):
    path = _write(tmp_path, "x.qrels", content)
    if expected is None:
        assert read_qrels(path) == []
        return
    err = _error(read_qrels, path)
    assert err.line == line and expected in err.message


def test_qrels_ids_keep_no_break_spaces_and_tab_separated_spaces(tmp_path):
    # trec_eval splits on ASCII whitespace only; a tab-separated file may have spaces in ids
    path = _write(tmp_path, "x.qrels", "q\u00a01 0 d\u30001 1\nq 2\t0\td 2\t3\t\n")
    assert _qrels(read_qrels(path)) == [("q\u00a01", "d\u30001", 1, 1), ("q 2", "d 2", 3, 2)]


# -- YAML front matter --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("front", "line", "expected"),
    [
        ("id: a\ntitle: [unclosed\n", 4, "bad YAML front matter: expected ',' or ']'"),
        ("id: a\n\tbad: tab\n", 3, "bad YAML front matter: found character '\\t'"),
        ("- a\n- b\n", 2, "front matter must be a YAML mapping (key: value)"),
        ("just text\n", 2, "front matter must be a YAML mapping (key: value)"),
        ("id: a\ndate: 2024-13-45\n", 2, "bad YAML front matter: month must be in 1..12"),
        ("id: a\nraw: !!binary aGVsbG8=\n", 2, "front matter `raw` has a value of type bytes"),
        ("id: a\nkeys: !!set {x, y}\n", 2, "front matter `keys` has a value of type set"),
        ("id: a\nobj: !!python/object:os.system x\n", 3, "could not determine a constructor"),
        ("id: [a, b]\n", 2, "front matter `id` must be text or a whole number"),
        ("id: ''\n", 2, "front matter `id` is empty"),
        ("title: {a: 1}\n", 2, "front matter `title` must be text"),
        ('title: "\\ud800"\n', 2, "a \\ud800 escape in `title` is half of a surrogate pair"),
    ],
)
def test_bad_yaml_front_matter(front, line, expected, tmp_path):
    err = _error(read_markdown_doc, _write(tmp_path, "x.md", f"---\n{front}---\nbody\n"))
    assert err.line == line and expected in err.message


def test_front_matter_never_closed(tmp_path):
    err = _error(read_markdown_doc, _write(tmp_path, "x.md", "---\nid: a\ntitle: b\n"))
    assert err.line == 1 and err.message == "front matter opened with `---` is never closed"


def test_front_matter_alias_bomb_is_refused_quickly(tmp_path):
    front = 'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n'
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        front += f"{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
    started = time.perf_counter()
    err = _error(read_markdown_doc, _write(tmp_path, "x.md", f"---\n{front}---\nbody\n"))
    assert "front matter has over 100,000 values (YAML aliases?)" in err.message
    assert time.perf_counter() - started < 5


def test_front_matter_dates_become_iso_text(tmp_path):
    path = _write(
        tmp_path,
        "x.md",
        "---\nid: 12\ndate: 2024-03-15\nwhen: 2024-03-15 10:30:00\ntags: [a, {b: 2024-01-02}]\n"
        "---\n# Heading\ntext\n",
    )
    doc = read_markdown_doc(path)
    assert (doc.id, doc.title) == ("12", "Heading")
    assert doc.fields == {
        "date": "2024-03-15",
        "when": "2024-03-15T10:30:00",
        "tags": ["a", {"b": "2024-01-02"}],
        "source": "x.md",
    }


def test_a_bad_file_in_a_markdown_folder_is_named(tmp_path):
    _write(tmp_path, "d/a.md", "# fine\n")
    bad = _write(tmp_path, "d/b.md", "---\nid: b\ntitle: [\n---\n")
    with pytest.raises(IngestError) as exc:
        read_markdown_docs(tmp_path / "d")
    assert exc.value.path == str(bad) and "bad YAML front matter" in exc.value.message
    _write(tmp_path, "e/notes.txt", "not markdown")
    with pytest.raises(IngestError, match="no Markdown files"):
        read_markdown_docs(tmp_path / "e")


# -- SQuAD of the wrong shape ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ([{"title": "A"}], 'top level: expected an object with a "data" list'),
        ({"data": {"title": "A"}}, 'top level: expected an object with a "data" list'),
        ({"data": ["A"]}, 'data[0]: expected an object with a "title" string'),
        ({"data": [{"title": 5, "paragraphs": []}]}, 'data[0]: expected an object with a "title"'),
        ({"data": [{"title": " ", "paragraphs": []}]}, 'data[0]: expected a non-empty "title"'),
        (
            {"data": [{"title": "A", "paragraphs": ["text"]}]},
            'data[0].paragraphs[0]: expected an object with a "context" string',
        ),
        (
            {"data": [{"title": "A", "paragraphs": [{"context": "c", "qas": {}}]}]},
            'data[0].paragraphs[0]: expected a "qas" list',
        ),
        (
            {"data": [{"title": "A", "paragraphs": [{"context": "c", "qas": [{"id": "x"}]}]}]},
            'data[0].paragraphs[0].qas[0]: expected an object with "id" and "question"',
        ),
        (
            {
                "data": [
                    {
                        "title": "A",
                        "paragraphs": [{"context": "c", "qas": [{"id": True, "question": "q"}]}],
                    }
                ]
            },
            'data[0].paragraphs[0].qas[0]: expected an object with "id" and "question"',
        ),
        (
            {
                "data": [
                    {
                        "title": "A",
                        "paragraphs": [{"context": "c", "qas": [{"id": "", "question": "q"}]}],
                    }
                ]
            },
            'data[0].paragraphs[0].qas[0]: expected a non-empty "id"',
        ),
        (
            {
                "data": [
                    {
                        "title": "A",
                        "paragraphs": [{"context": "c", "qas": [{"id": "x", "question": " "}]}],
                    }
                ]
            },
            "data[0].paragraphs[0].qas[0]: question 'x' has no text",
        ),
        (
            {"data": [{"title": "A\nB", "paragraphs": []}]},
            "data[0]: title 'A\\nB' contains a control character",
        ),
        (
            {"data": [{"title": "A", "paragraphs": []}]},
            "no questions found (SQuAD 1.1 / 2.0 shape)",
        ),
    ],
)
def test_squad_of_the_wrong_shape(payload, expected, tmp_path):
    path = _write(tmp_path, "s.json", json.dumps(payload))
    assert expected in _error(lambda p: read_squad(p, "article"), path).message


def test_squad_malformed_json_names_the_line(tmp_path):
    text = SQUAD_TEXT.replace('"question": "What', '"question" "What')
    err = _error(lambda p: read_squad(p, "paragraph"), _write(tmp_path, "s.json", text))
    assert err.line == 4 and "malformed JSON (Expecting ':' delimiter)" in err.message


# -- lone surrogates (valid JSON, not valid Unicode) ---------------------------------------


@pytest.mark.parametrize(
    ("name", "read", "content", "expected"),
    [
        ("c.jsonl", read_docs, '{"_id": "a", "text": "x\\ud800y"}\n', "\\ud800 escape in `text`"),
        ("c.jsonl", read_docs, '{"_id": "a", "m": {"k": ["\\udc00"]}}\n', "in `m.k[0]`"),
        ("q.jsonl", read_questions, '{"_id": "\\uDBFF", "text": "x"}\n', "\\udbff escape"),
        (
            "s.json",
            lambda p: read_squad(p, "article"),
            '{"data": [{"title": "A", "paragraphs": [{"context": "\\ud83d", "qas": []}]}]}',
            "in `data[0].paragraphs[0].context`",
        ),
    ],
)
def test_a_lone_surrogate_escape_is_refused(name, read, content, expected, tmp_path):
    err = _error(read, _write(tmp_path, name, content))
    assert expected in err.message and "half of a surrogate pair" in err.message


def test_escaped_surrogate_pairs_and_literal_backslashes_are_text(tmp_path):
    path = _write(
        tmp_path,
        "c.jsonl",
        '{"_id": "a", "text": "\\ud83d\\ude00 and \\\\ud800 and \\u2028 and \\u0085"}\n',
    )
    assert read_docs(path)[0].text == "\U0001f600 and \\ud800 and \u2028 and \u0085"


# -- text that is merely odd reads correctly -----------------------------------------------


def test_unicode_line_separators_inside_jsonl_strings_are_text(tmp_path):
    # json.dumps(ensure_ascii=False) leaves U+2028, U+2029 and U+0085 unescaped
    records = [{"_id": "a", "text": "one\u2028two\u2029three\x85four"}, {"_id": "b", "text": "x"}]
    path = _write(
        tmp_path, "c.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    )
    assert _docs(read_docs(path)) == [("a", "", "one\u2028two\u2029three\x85four"), ("b", "", "x")]


def test_markup_and_escapes_in_text_are_kept_as_data(tmp_path):
    text = "[bold red]x[/] [link=https://e.x]y[/link] $accent \x1b[31mred\x1b[0m"
    path = _write(
        tmp_path, "c.jsonl", json.dumps({"_id": "a", "title": "[b]t[/b]", "text": text}) + "\n"
    )
    assert _docs(read_docs(path)) == [("a", "[b]t[/b]", text)]


def test_long_runs_of_image_openers_stay_linear(tmp_path):
    body = "![" * 100_000 + "\n" + "![a](" * 50_000 + "\n![alt](img.png) kept\n"
    started = time.perf_counter()
    doc = read_markdown_doc(_write(tmp_path, "x.md", body))
    assert time.perf_counter() - started < 5
    assert doc.text.startswith("![![") and doc.text.endswith(" kept")
    assert "img.png" not in doc.text


TWENTY_MB = 20 * 1024 * 1024


def _big_text() -> str:
    line = "감쇠 보정 attenuation correction 2024-0137 "  # 61 bytes in UTF-8
    return (line * (TWENTY_MB // len(line.encode()) + 1)).strip()


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "markdown"])
def test_a_20_mb_document_imports_whole(fmt, tmp_path):
    text = _big_text()
    assert len(text.encode()) >= TWENTY_MB
    if fmt == "jsonl":
        path = _write(
            tmp_path, "c.jsonl", json.dumps({"_id": "big", "text": text}, ensure_ascii=False)
        )
    elif fmt == "csv":
        path = _write(tmp_path, "c.csv", f'id,title,text\nbig,Big,"{text}"\n')
    else:
        path = _write(tmp_path, "big.md", f"---\ntitle: Big\n---\n{text}\n")
    docs = read_docs(path)
    assert len(docs) == 1 and docs[0].id == "big" and docs[0].text == text
    ws = new_workspace(tmp_path / "w.db")
    try:
        assert import_docs(ws, path).docs == (1, 0, 0)
        assert ws.doc("big").text == text
    finally:
        ws.close()


def test_200000_one_line_documents(tmp_path):
    path = tmp_path / "many.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i in range(200_000):
            f.write(f'{{"_id": "d{i:06d}", "title": "t{i}", "text": "문서 {i} text"}}\n')
    ws = new_workspace(tmp_path / "w.db")
    try:
        started = time.perf_counter()
        report = import_docs(ws, path)
        elapsed = time.perf_counter() - started
        assert report.docs == (200_000, 0, 0)
        assert ws.doc_count() == 200_000
        assert ws.doc("d123456").text == "문서 123456 text"
        assert elapsed < 60  # about 4 s on a laptop; a quadratic step would take hours
    finally:
        ws.close()


# -- imports that check ids against the workspace --------------------------------------------


def test_beir_folder_qrels_naming_a_doc_outside_the_corpus(tmp_path, tiny_ws):
    _write(tmp_path, "b/corpus.jsonl", '{"_id": "x1", "text": "alpha"}\n')
    _write(tmp_path, "b/queries.jsonl", '{"_id": "k1", "text": "alpha?"}\n')
    _write(tmp_path, "b/qrels/test.tsv", "query-id\tcorpus-id\tscore\nk1\tx1\t1\nk1\tx9\t1\n")
    ws = Workspace.open(tiny_ws)
    try:
        with pytest.raises(IngestError) as exc:
            import_beir(ws, tmp_path / "b")
        assert exc.value.line == 3 and "unknown document 'x9'" in exc.value.message
        with pytest.raises(IngestError) as exc:
            import_beir(ws, tmp_path / "b", split="dev")
        assert exc.value.message == "no such file; expected the split's qrels (splits here: test)"
        assert "x1" not in ws.doc_ids() and "k1" not in ws.question_ids()
    finally:
        ws.close()


def test_labels_and_verdicts_naming_unknown_ids(tmp_path, tiny_ws):
    ws = Workspace.open(tiny_ws)
    try:
        labels = _write(
            tmp_path, "l.csv", "question_id,doc_id,annotator,grade\nq1,d1,kim,1\nq1,d9,kim,1\n"
        )
        with pytest.raises(IngestError, match=r"l.csv:3: unknown document 'd9'"):
            import_labels(ws, labels)
        labels.write_text("question_id,doc_id,annotator,grade\nq9,d1,kim,1\n")
        with pytest.raises(IngestError, match=r"l.csv:2: unknown question 'q9'"):
            import_labels(ws, labels)
        verdicts = _write(
            tmp_path, "v.csv", "question_id,annotator,verdict\nq1,kim,skip\nzz,kim,skip\n"
        )
        with pytest.raises(IngestError, match=r"v.csv:3: unknown question 'zz'"):
            import_verdicts(ws, verdicts)
        assert not [lab for lab in ws.labels() if lab.annotator == "kim"]
        assert not ws.verdicts()
    finally:
        ws.close()


def test_a_verdicts_import_reports_how_many(tmp_path, tiny_ws):
    ws = Workspace.open(tiny_ws)
    try:
        rows = "question_id,annotator,verdict,note\nq4,kim,no_answer,\nq2,kim,skip,\n"
        path = _write(tmp_path, "v.csv", rows)
        assert import_verdicts(ws, path).summary() == "2 verdicts"
    finally:
        ws.close()


def test_qrels_comments_and_question_ids_starting_with_a_hash(tmp_path):
    path = _write(tmp_path, "x.qrels", "# made by hand\n#q1 0 d1 2\n  # another note\nq2 0 d2 1\n")
    assert _qrels(read_qrels(path)) == [("#q1", "d1", 2, 2), ("q2", "d2", 1, 4)]
