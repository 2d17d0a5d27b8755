"""Property-based tests: the readers give back what a writer wrote, for any id or text the
format can carry (and refuse what it cannot), and the metrics keep their invariants and
agree with pytrec_eval on arbitrary qrels and runs with ties.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from engine.errors import BadInput
from engine.formats.docs import read_docs
from engine.formats.errors import IngestError
from engine.formats.labels import read_labels_csv, write_labels_csv
from engine.formats.questions import read_questions
from engine.formats.tabular import unescape_formula
from engine.formats.trec import read_qrels, write_trec_qrels
from engine.metrics import evaluate, judge, mean, parse_metric, per_question
from engine.types import Label

SETTINGS = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])

# -- strategies -----------------------------------------------------------------------------

# Any character UTF-8 can encode: lone surrogates cannot be written to a file at all.
CHARS = st.characters(exclude_categories=("Cs",))
TEXT = st.text(CHARS, max_size=40)

# An id, as the importers keep it: stripped, not empty, no control character (C0, DEL, C1).
ID = st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=12).filter(
    lambda s: s == s.strip()
)

# A TREC id: no ASCII whitespace (the field separator) and no U+FEFF (a byte-order mark
# when it opens the file). Other whitespace, such as U+00A0 or U+3000, is part of an id.
ASCII_SPACE = " \t\n\r\x0b\x0c"
TREC_ID = st.text(
    st.characters(exclude_categories=("Cs", "Cc"), exclude_characters=ASCII_SPACE + "\ufeff"),
    min_size=1,
    max_size=12,
)
GRADE = st.integers(0, 3)

JSON_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON_VALUE = st.recursive(
    JSON_SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """One folder for the whole module (hypothesis runs many examples per test)."""
    with TemporaryDirectory() as folder:
        yield Path(folder)


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


# -- parser round trips ---------------------------------------------------------------------


# trec_eval 10 takes a line that starts with # for a comment: the writers refuse such
# question ids (tests/engine/formats/test_formats.py), so they are not generated here.
QUESTION_ID = TREC_ID.filter(lambda s: not s.startswith("#"))


@SETTINGS
@given(gold=st.dictionaries(QUESTION_ID, st.dictionaries(TREC_ID, GRADE, max_size=5), max_size=6))
def test_trec_qrels_round_trip(scratch, gold):
    out = io.StringIO()
    n = write_trec_qrels(out, gold)
    path = _write(scratch / "gold.qrels", out.getvalue())
    if n == 0:
        with pytest.raises(IngestError, match="the file is empty"):
            read_qrels(path)
        return
    read = read_qrels(path)
    assert {(q.question_id, q.doc_id): q.grade for q in read} == {
        (q, d): g for q, docs in gold.items() for d, g in docs.items()
    }
    assert [q.line for q in read] == list(range(1, n + 1))


@SETTINGS
@given(
    qid=TREC_ID,
    doc=TREC_ID,
    space=st.sampled_from([" ", "\t", "  ", " \t"]),
    where=st.sampled_from(["question", "doc"]),
    cut=st.integers(1, 11),
)
def test_trec_ids_with_whitespace_inside_are_refused(scratch, qid, doc, space, where, cut):
    # such an id cannot be told from two fields: the reader must refuse the line, not guess
    # a line opening with "#" and of no judgment's shape is a comment: the line of a
    # question id "#..." with whitespace in either id cannot be told from one
    assume(not qid.startswith("#"))
    if where == "question":
        assume(cut < len(qid))
        qid = qid[:cut] + space + qid[cut:]
    else:
        assume(cut < len(doc))
        doc = doc[:cut] + space + doc[cut:]
    with pytest.raises(BadInput):  # the writer will not make such a line
        write_trec_qrels(io.StringIO(), {qid: {doc: 2}})
    text = f"ok 0 fine 1\n{qid} 0 {doc} 2\n"  # another tool might
    with pytest.raises(IngestError) as exc:
        read_qrels(_write(scratch / "bad.qrels", text))
    assert exc.value.line in (1, 2)
    assert "fields" in exc.value.message


# Any text but NUL (a CSV reader's "binary file" sign) and surrogates; a bare CR, which the
# csv module would leave unquoted, is included (write_labels_csv quotes such rows).
LABEL_FIELD = st.text(
    st.characters(exclude_categories=("Cs",), exclude_characters="\0"), min_size=1, max_size=10
).filter(str.strip)


# an annotator: a person's name as an import takes it (engine.names.check_person_role)
PERSON_FIELD = LABEL_FIELD.filter(lambda s: not s.startswith(("-", "model:")))


@SETTINGS
@given(labels=st.dictionaries(st.tuples(LABEL_FIELD, LABEL_FIELD, PERSON_FIELD), GRADE, max_size=8))
def test_labels_csv_round_trip(scratch, labels):
    out = io.StringIO()
    write_labels_csv(out, [Label(q, d, a, g) for (q, d, a), g in labels.items()])
    read = read_labels_csv(_write(scratch / "labels.csv", out.getvalue()))
    assert {(lab.question_id, lab.doc_id, lab.annotator): lab.grade for lab, _ in read} == labels


def test_labels_csv_round_trip_with_a_carriage_return(tmp_path):
    out = io.StringIO()
    write_labels_csv(out, [Label("q1", "d1", "kim\rlee", 1)])
    read = read_labels_csv(_write(tmp_path / "labels.csv", out.getvalue()))
    assert [lab.annotator for lab, _ in read] == ["kim\rlee"]


@SETTINGS
@given(annotator=st.text(CHARS, max_size=5).map(lambda s: f"a{s}\0{s}"))
def test_labels_csv_with_a_nul_is_refused(scratch, annotator):
    out = io.StringIO()
    write_labels_csv(out, [Label("q", "d", annotator, 1)])
    with pytest.raises(IngestError, match="binary|NUL"):
        read_labels_csv(_write(scratch / "nul.csv", out.getvalue()))


def _expected_tags(tags: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for t in (t.strip() for t in tags):
        if t and t not in out:
            out.append(t)
    return tuple(out)


QUESTION = st.tuples(
    ID, TEXT.filter(lambda s: s.strip()), st.lists(st.text(CHARS, max_size=8), max_size=4)
)


@SETTINGS
@given(
    questions=st.lists(QUESTION, min_size=1, max_size=6, unique_by=lambda q: q[0]),
    ensure_ascii=st.booleans(),
    key=st.sampled_from(["_id", "id"]),
)
def test_questions_jsonl_round_trip(scratch, questions, ensure_ascii, key):
    lines = [
        json.dumps({key: qid, "text": text, "tags": tags}, ensure_ascii=ensure_ascii)
        for qid, text, tags in questions
    ]
    read = read_questions(_write(scratch / "q.jsonl", "\n".join(lines) + "\n"))
    assert [(q.id, q.text, q.tags) for q in read] == [
        (qid, text.strip(), _expected_tags(tags)) for qid, text, tags in questions
    ]


@SETTINGS
@given(
    questions=st.lists(
        st.tuples(
            ID.filter(lambda s: "\0" not in s),
            TEXT.filter(lambda s: s.strip() and "\0" not in s),
            st.lists(
                st.text(
                    st.characters(exclude_categories=("Cs",), exclude_characters=",;|\0"),
                    max_size=8,
                ),
                max_size=4,
            ),
        ),
        min_size=1,
        max_size=6,
        unique_by=lambda q: q[0],
    )
)
@example(questions=[("0", "'@", [])])  # found by hypothesis: a text quoted against formulas
@example(questions=[("q1", "x", ["'=a", "b"])])
def test_questions_csv_round_trip(scratch, questions):
    out = io.StringIO()
    writer = csv.writer(out)  # the csv module's default dialect: CRLF, a CR in a field quoted
    writer.writerow(["id", "text", "tags"])
    writer.writerows([qid, text, ",".join(tags)] for qid, text, tags in questions)
    read = read_questions(_write(scratch / "q.csv", out.getvalue()))
    # every cell loses one ' before a formula character (=, +, -, @, tab, CR): the quote
    # goldpan's own CSV export adds so that a spreadsheet shows the cell as text
    assert [(q.id, q.text, q.tags) for q in read] == [
        (
            unescape_formula(qid),
            unescape_formula(text).strip(),
            _expected_tags(unescape_formula(",".join(tags)).split(",")),
        )
        for qid, text, tags in questions
    ]


DOC = st.tuples(
    ID,
    TEXT,
    TEXT,
    st.dictionaries(
        TEXT.filter(lambda k: k not in ("_id", "id", "title", "text")), JSON_VALUE, max_size=3
    ),
)


@SETTINGS
@given(
    docs=st.lists(DOC, min_size=1, max_size=6, unique_by=lambda d: d[0]),
    ensure_ascii=st.booleans(),
)
def test_docs_jsonl_round_trip(scratch, docs, ensure_ascii):
    lines = [
        json.dumps({"_id": i, "title": title, "text": text, **fields}, ensure_ascii=ensure_ascii)
        for i, title, text, fields in docs
    ]
    read = read_docs(_write(scratch / "c.jsonl", "\n".join(lines) + "\n"))
    assert [(d.id, d.title, d.text, dict(d.fields)) for d in read] == [
        (i, title, text, fields) for i, title, text, fields in docs
    ]


@SETTINGS
@given(
    before=TEXT,
    after=TEXT,
    surrogate=st.integers(0xD800, 0xDFFF),
    line=st.integers(0, 3),
)
def test_jsonl_with_a_lone_surrogate_is_refused_on_its_line(
    scratch, before, after, surrogate, line
):
    text = before + chr(surrogate) + after
    assume("\\" not in text)
    records = [{"_id": f"d{i}", "text": "ok"} for i in range(4)]
    records[line]["text"] = text
    # ensure_ascii writes the lone surrogate as a \\uXXXX escape: valid JSON, not Unicode
    content = "".join(json.dumps(r) + "\n" for r in records)
    with pytest.raises(IngestError) as exc:
        read_docs(_write(scratch / "s.jsonl", content))
    assert exc.value.line == line + 1
    assert f"\\u{surrogate:04x} escape in `text`" in exc.value.message


# -- metric invariants --------------------------------------------------------------------

DOC_IDS = [f"d{i}" for i in range(12)]


@st.composite
def question(draw: st.DrawFn) -> tuple[list[str], dict[str, int]]:
    """A ranking (distinct docs) and a gold dict (grades 0-3) over a small shared pool."""
    ranking = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=10))
    gold = draw(st.dictionaries(st.sampled_from(DOC_IDS), GRADE, max_size=6))
    return ranking, gold


QUESTIONS = st.lists(question(), min_size=1, max_size=8)
KS = range(1, 13)


def _values(cases: list[tuple[list[str], dict[str, int]]], metric: str) -> np.ndarray:
    j = judge([r for r, _ in cases], [g for _, g in cases])
    return per_question(j, parse_metric(metric))


@SETTINGS
@given(cases=QUESTIONS)
def test_hit_and_recall_do_not_decrease_with_k(cases):
    for family in ("hit", "recall"):
        by_k = np.stack([_values(cases, f"{family}@{k}") for k in KS])
        assert (np.diff(by_k, axis=0) >= 0).all(), family


@SETTINGS
@given(cases=QUESTIONS)
def test_every_metric_is_within_0_and_1(cases):
    names = ["mrr", *(f"{f}@{k}" for f in ("hit", "mrr", "recall", "p", "ndcg") for k in KS)]
    for name in names:
        values = _values(cases, name)
        assert ((values >= 0) & (values <= 1)).all(), name
        assert 0 <= mean(values) <= 1


@SETTINGS
@given(cases=QUESTIONS)
def test_mrr_is_one_over_the_first_relevant_rank_and_hit_follows_it(cases):
    mrr = _values(cases, "mrr")
    for i, (ranking, gold) in enumerate(cases):
        first = next((r for r, d in enumerate(ranking, 1) if gold.get(d, 0) >= 1), None)
        assert mrr[i] == (1 / first if first else 0.0)
        for k in KS:
            assert _values([cases[i]], f"hit@{k}")[0] == (1.0 if first and first <= k else 0.0)


@SETTINGS
@given(
    gold=st.dictionaries(st.sampled_from(DOC_IDS), GRADE, max_size=8), rest=st.permutations(DOC_IDS)
)
def test_a_perfect_ranking_scores_one(gold, rest):
    relevant = sorted((d for d, g in gold.items() if g >= 1), key=lambda d: -gold[d])
    assume(relevant)
    ranking = relevant + [d for d in rest if d not in relevant]
    case = [(ranking, gold)]
    assert _values(case, "hit@1")[0] == 1.0
    assert _values(case, "mrr")[0] == 1.0
    for k in KS:
        assert _values(case, f"ndcg@{k}")[0] == pytest.approx(1.0, abs=1e-12)
        assert _values(case, f"recall@{k}")[0] == min(k, len(relevant)) / len(relevant)
        assert _values(case, f"p@{k}")[0] == min(k, len(relevant)) / k


@SETTINGS
@given(cases=QUESTIONS, data=st.data())
def test_permuting_questions_changes_no_mean(cases, data):
    order = data.draw(st.permutations(range(len(cases))))
    shuffled = [cases[i] for i in order]
    for name in ("hit@1", "hit@5", "mrr", "mrr@3", "recall@5", "p@3", "ndcg@10"):
        a, b = _values(cases, name), _values(shuffled, name)
        assert mean(a) == mean(b), name  # exactly: the sum is correctly rounded
        assert [a[i] for i in order] == b.tolist(), name


# -- per-question values equal pytrec_eval's ------------------------------------------------

PYTREC = {
    "success_1": "hit@1",
    "success_5": "hit@5",
    "success_10": "hit@10",
    "recip_rank": "mrr",
    "recall_5": "recall@5",
    "recall_10": "recall@10",
    "P_5": "p@5",
    "P_10": "p@10",
    "ndcg_cut_5": "ndcg@5",
    "ndcg_cut_10": "ndcg@10",
}

QRELS = st.dictionaries(
    st.sampled_from([f"q{i}" for i in range(6)]),
    st.dictionaries(st.sampled_from(DOC_IDS), GRADE, min_size=1, max_size=6),
    min_size=1,
)
# scores on a coarse grid: ties are frequent, and trec_eval breaks them by doc id
SCORE = st.sampled_from([0.25, 0.5, 0.5, 1.0, 1.0, 2.0, 3.75])


@SETTINGS
@given(qrels=QRELS, data=st.data())
def test_per_question_values_equal_pytrec_eval(qrels, data):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run = {
        q: data.draw(st.dictionaries(st.sampled_from(DOC_IDS), SCORE, max_size=12), label=q)
        for q in qrels
    }
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)
    ours = evaluate(qrels, run, list(PYTREC.values()))
    for q in qrels:
        if q not in ref:  # pytrec_eval may leave out a question without a ranking; 0 here
            assert not run[q] and all(v == 0.0 for v in ours[q].values())
            continue
        for measure, name in PYTREC.items():
            assert math.isclose(ours[q][name], ref[q][measure], abs_tol=1e-12), (q, name)
