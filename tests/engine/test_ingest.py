import pytest

from engine.formats.docs import read_docs
from engine.formats.errors import IngestError
from engine.formats.markdown import markdown_body, read_markdown_doc
from engine.formats.questions import read_questions
from engine.formats.squad import read_squad
from engine.formats.trec import read_qrels
from engine.ingest import import_beir, import_qrels, import_squad
from engine.workspace import Workspace
from tests.conftest import write_jsonl


def test_markdown_front_matter_body_and_fields(tmp_path):
    f = tmp_path / "post-7.md"
    f.write_text(
        '---\nid: ac-01\ntitle: "감쇠 보정 (1): 원리"\nseries: ac\ndate: 2024-03-15\n---\n'
        "# 감쇠 보정\n본문 첫 줄 ![그림](img/a.png) 계속.\n\n```python\ncode = 1\n```\n"
        "~~~\nmore code\n~~~\n끝.\n",
        encoding="utf-8",
    )
    doc = read_markdown_doc(f)
    assert doc.id == "ac-01"
    assert doc.title == "감쇠 보정 (1): 원리"
    assert doc.fields["series"] == "ac"
    assert doc.fields["date"] == "2024-03-15"
    assert doc.fields["source"] == "post-7.md"
    assert "code" not in doc.text and "img/a.png" not in doc.text
    assert "본문 첫 줄" in doc.text and "끝." in doc.text


def test_markdown_without_front_matter_uses_stem_and_heading(tmp_path):
    f = tmp_path / "notice-3.md"
    f.write_text("# 점검 공지\n내일 점검.\n", encoding="utf-8")
    doc = read_markdown_doc(f)
    assert (doc.id, doc.title) == ("notice-3", "점검 공지")


def test_unclosed_fence_drops_the_rest():
    assert markdown_body("a\n```\nb\n") == "a"


def test_jsonl_csv_docs_and_crlf_bom(tmp_path):
    j = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"_id": "1", "title": "T", "text": "x", "metadata": {"url": "u"}},
            {"id": 2, "title": "U", "text": "y"},
        ],
    )
    docs = read_docs(j)
    assert [d.id for d in docs] == ["1", "2"]
    assert docs[0].fields == {"metadata": {"url": "u"}}
    c = tmp_path / "c.csv"
    c.write_bytes('\ufeffid,title,text,series\r\na,제목,"본문, 쉼표",s1\r\n'.encode())
    docs = read_docs(c)
    assert docs[0].id == "a" and docs[0].text == "본문, 쉼표" and docs[0].fields == {"series": "s1"}


def test_questions_tags_from_list_or_string(tmp_path):
    j = write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"_id": "q1", "text": "질문", "tags": ["hard", "paraphrase"]},
            {"id": "q2", "text": "둘째", "tags": "easy; partial-id"},
        ],
    )
    qs = read_questions(j)
    assert [q.tags for q in qs] == [("hard", "paraphrase"), ("easy", "partial-id")]


def test_qrels_trec_and_beir(tmp_path):
    t = tmp_path / "q.trec"
    t.write_text("q1 0 d1 2\nq1 0 d2 -1\nq2 Q0 d3 0\n")
    assert [(q.question_id, q.doc_id, q.grade) for q in read_qrels(t)] == [
        ("q1", "d1", 2),
        ("q2", "d3", 0),
    ]
    b = tmp_path / "test.tsv"
    b.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    assert [(q.question_id, q.doc_id, q.grade, q.line) for q in read_qrels(b)] == [
        ("q1", "d1", 1, 2)
    ]


@pytest.mark.parametrize(
    ("content", "line", "expected"),
    [
        ("q1 0 d1 2\nq1 0 d1\n", 2, "expected `qid iter doc grade` (TREC) as on the first line"),
        ("q1 d1\n", 1, "got 2 fields"),
        ("q1 0 d1 x\n", 1, "not a number"),
        ("q1 0 d1 7\n", 1, "out of range"),
        ("q1 0 d1 1\nq1 0 d1 2\n", 2, "judged twice"),
    ],
)
def test_bad_qrels_name_the_line(tmp_path, content, line, expected):
    f = tmp_path / "bad.qrels"
    f.write_text(content)
    with pytest.raises(IngestError) as exc:
        read_qrels(f)
    assert exc.value.line == line
    assert expected in str(exc.value)
    assert str(exc.value).startswith(f"{f}:{line}: ")


def test_bad_yaml_front_matter_names_file_and_line(tmp_path):
    f = tmp_path / "x.md"
    f.write_text("---\nid: a\ntitle: [unclosed\n---\nbody\n")
    with pytest.raises(IngestError, match="bad YAML front matter") as exc:
        read_markdown_doc(f)
    assert exc.value.path.endswith("x.md") and exc.value.line is not None


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"version": "1"}, 'top level: expected an object with a "data" list'),
        ({"data": [{"title": "A"}]}, 'data[0]: expected a "paragraphs" list'),
        ({"data": [{"title": "A", "paragraphs": [{"qas": []}]}]}, "data[0].paragraphs[0]"),
    ],
)
def test_squad_of_the_wrong_shape(tmp_path, payload, expected):
    import json

    f = tmp_path / "s.json"
    f.write_text(json.dumps(payload))
    with pytest.raises(IngestError) as exc:
        read_squad(f, "article")
    assert expected in str(exc.value)


def _squad(tmp_path):
    import json

    data = {
        "data": [
            {
                "title": "서울_특별시",
                "paragraphs": [
                    {"context": "서울은 수도이다.", "qas": [{"id": "a1", "question": "수도는?"}]},
                    {"context": "한강이 흐른다.", "qas": [{"id": "a2", "question": "강 이름은?"}]},
                ],
            },
            {
                "title": "부산",
                "paragraphs": [
                    {
                        "context": "부산은 항구 도시.",
                        "qas": [{"id": "b1", "question": "항구 도시는?"}],
                    },
                ],
            },
        ]
    }
    f = tmp_path / "squad.json"
    f.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return f


def test_squad_article_and_paragraph_levels(tmp_path, tiny_ws):
    f = _squad(tmp_path)
    art = read_squad(f, "article")
    assert [d.id for d in art.docs] == ["서울_특별시", "부산"]
    assert art.docs[0].title == "서울 특별시"
    assert art.docs[0].text == "서울 특별시\n서울은 수도이다.\n한강이 흐른다."
    assert art.gold == [("a1", "서울_특별시"), ("a2", "서울_특별시"), ("b1", "부산")]
    par = read_squad(f, "paragraph")
    assert [d.id for d in par.docs] == ["서울_특별시#0", "서울_특별시#1", "부산#0"]
    assert par.docs[1].text == "한강이 흐른다."
    assert par.gold[1] == ("a2", "서울_특별시#1")
    ws = Workspace.open(tiny_ws)
    import_squad(ws, f, "paragraph")
    assert {(lab.question_id, lab.doc_id, lab.annotator, lab.grade) for lab in ws.labels()} >= {
        ("a1", "서울_특별시#0", "import", 1),
        ("b1", "부산#0", "import", 1),
    }


def test_beir_import_keeps_unjudged_queries_unlabeled(tmp_path, tiny_ws):
    (tmp_path / "b" / "qrels").mkdir(parents=True)
    write_jsonl(
        tmp_path / "b" / "corpus.jsonl",
        [{"_id": "x1", "title": "A", "text": "alpha"}, {"_id": "x2", "title": "B", "text": "beta"}],
    )
    write_jsonl(
        tmp_path / "b" / "queries.jsonl",
        [{"_id": "k1", "text": "alpha?"}, {"_id": "k2", "text": "gamma?"}],
    )
    (tmp_path / "b" / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nk1\tx1\t2\nk1\tx2\t0\n"
    )
    ws = Workspace.open(tiny_ws)
    report = import_beir(ws, tmp_path / "b")
    assert report.docs == (2, 0, 0) and report.questions == (2, 0, 0) and report.labels == 2
    assert "k2" in ws.question_ids()
    assert not [lab for lab in ws.labels() if lab.question_id == "k2"]


def test_qrels_naming_unknown_ids_change_nothing(tmp_path, tiny_ws):
    f = tmp_path / "q.trec"
    f.write_text("q1 0 d1 1\nq1 0 nosuchdoc 1\n")
    ws = Workspace.open(tiny_ws)
    before = ws.labels()
    with pytest.raises(IngestError, match=r"q.trec:2: unknown document 'nosuchdoc'"):
        import_qrels(ws, f)
    f.write_text("zz 0 d1 1\n")
    with pytest.raises(IngestError, match=r":1: unknown question 'zz'"):
        import_qrels(ws, f)
    assert ws.labels() == before
