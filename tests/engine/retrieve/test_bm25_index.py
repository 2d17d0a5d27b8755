"""Batched BM25 ranking, the stored term counts, and the declared retriever parameters.

The batched path (one sparse product per chunk of questions) must give what ranking one
question at a time gives, bit for bit: the same documents in the same order and the same
scores, ties (score, then doc id descending) and score-0 documents included. The term
counts kept in the workspace must give the rankings a fresh index gives, also after a
document changes, and a damaged stored record must be ignored, never trusted.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.errors import BadInput
from engine.retrieve import KIND_PARAMS, BM25Retriever, bm25_spec, new_spec
from engine.retrieve.bm25 import (
    VARIANTS,
    BM25Index,
    BM25Params,
    TermCounts,
    TermRows,
    canonical_scores,
    id_ranks,
    top_k,
)
from engine.retrieve.bm25 import index as bm25_index
from engine.retrieve.bm25.counts import stable_order
from engine.retrieve.order import top_k_flat
from engine.retrieve.runner import refresh_runs
from engine.types import Doc, Question
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace


def per_row(ranked):
    """Rankings end to end as one (doc indices, scores) pair per row."""
    cols, vals, ends = ranked
    if not ends.size:
        return []
    starts = [0, *ends.tolist()[:-1]]
    return [(cols[a:b], vals[a:b]) for a, b in zip(starts, ends.tolist(), strict=True)]


def random_corpus(seed: int, n_docs: int = 60) -> tuple[list[list[str]], list[list[str]]]:
    """Documents and queries over a small vocabulary: many exact ties and repeated terms."""
    rng = random.Random(seed)
    vocab = [f"t{i}" for i in range(25)]
    docs = [rng.choices(vocab, k=rng.randint(0, 12)) for _ in range(n_docs)]
    docs[3] = list(docs[7])  # identical documents tie exactly
    queries = [rng.choices(vocab + ["unknown"], k=rng.randint(0, 6)) for _ in range(40)]
    queries.append([])
    return docs, queries


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("depth", [1, 5, 100])
@pytest.mark.parametrize("in_id_order", [False, True])
def test_batched_ranking_equals_one_question_at_a_time_bit_for_bit(
    variant, seed, depth, in_id_order
):
    docs, queries = random_corpus(seed)
    ids = [f"d{random.Random(seed).randint(0, 9)}-{i}" for i in range(len(docs))]
    if in_id_order:  # as the workspace hands documents over: ties sort on one key
        ids = sorted(ids)
    rank = id_ranks(ids)
    assert (rank.tolist() == list(range(len(ids)))) == in_id_order
    index = BM25Index(docs, BM25Params(variant=variant))
    batched = per_row(index.rank_flat(queries, rank, depth))
    assert len(batched) == len(queries)
    for q, (best, scores) in zip(queries, batched, strict=True):
        one = canonical_scores(index.scores(q))
        want = top_k(one, rank, depth)
        assert best.tolist() == want.tolist(), (variant, q)
        assert scores.tolist() == one[want].tolist()  # exact float equality
        assert all(s > 0 for s in scores.tolist())


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_weighing_only_the_questions_rows_gives_the_whole_matrixs_numbers(variant):
    # a few questions on a larger vocabulary touch a small part of the entries: before the
    # whole weight matrix is made, only their rows are weighed (for one new question on a
    # large corpus); rankings and scores must equal the whole matrix's bit for bit
    rng = random.Random(11)
    vocab = [f"t{i}" for i in range(400)]
    docs = [rng.choices(vocab, k=rng.randint(0, 30)) for _ in range(300)]
    queries = [rng.choices(vocab[:60], k=rng.randint(1, 5)) for _ in range(3)]
    params = BM25Params(variant=variant)
    rank = id_ranks([f"d{i}" for i in range(len(docs))])
    few_rows = BM25Index(docs, params)
    got = per_row(few_rows.rank_flat(queries, rank, 20))
    got_scores = [few_rows.scores(q) for q in queries]
    assert few_rows._weights is None  # the rows path ran: nothing made the whole matrix
    whole = BM25Index(docs, params)
    assert whole.weights.nnz > 0
    want = per_row(whole.rank_flat(queries, rank, 20))
    for (a, sa), (b, sb) in zip(got, want, strict=True):
        assert a.tolist() == b.tolist() and sa.tolist() == sb.tolist()
    for q, s in zip(queries, got_scores, strict=True):
        assert s.tolist() == whole.scores(q).tolist()
    assert sum(len(a) for a, _ in got) > 0


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("threads", [1, 3])
def test_chunks_give_the_same_rankings(monkeypatch, variant, threads):
    docs, queries = random_corpus(5)
    index = BM25Index(docs, BM25Params(variant=variant))
    rank = id_ranks([f"d{i}" for i in range(len(docs))])
    whole = per_row(index.rank_flat(queries, rank, 10))
    monkeypatch.setattr(bm25_index, "RANK_CELLS", len(docs) * 3)  # 3 questions a chunk
    monkeypatch.setattr(bm25_index, "RANK_THREADS", threads)  # chunks side by side
    chunked = per_row(index.rank_flat(queries, rank, 10))
    for (a, sa), (b, sb) in zip(whole, chunked, strict=True):
        assert a.tolist() == b.tolist() and sa.tolist() == sb.tolist()


def test_rows_with_ties_at_the_cut_and_last_bit_noise_rank_as_top_k():
    noisy = 3.2492562503242204, 3.24925625032422  # one ulp apart: equal once rounded
    block = np.array(
        [
            [1.0, 2.0, 1.0, 0.0, 1.0, -1.0],
            [1.0] * 6,
            [noisy[0], noisy[1], 0.5, noisy[1], 0.0, noisy[0]],
            [0.0] * 6,
        ]
    )
    rank = id_ranks(["f", "a", "e", "b", "d", "c"])
    for depth in (1, 2, 3, 6, 10):
        got = per_row(top_k_flat(block, rank, depth))
        for row, (best, scores) in zip(block, got, strict=True):
            canon = canonical_scores(row)
            want = top_k(canon, rank, depth)
            assert best.tolist() == want.tolist(), (row, depth)
            assert scores.tolist() == canon[want].tolist()


@pytest.mark.parametrize("in_id_order", [True, False])
def test_random_blocks_with_many_ties_rank_as_top_k(in_id_order):
    rng = np.random.default_rng(5)
    names = [f"d{i:02d}" for i in range(40)]
    if not in_id_order:
        rng.shuffle(names)
    rank = id_ranks(names)
    for _ in range(30):
        block = rng.choice([0.0, 0.5, 1.0, 2.5, 7.25, -1.0], size=(9, 40))
        block[rng.random(block.shape) < 0.3] = rng.random()  # some distinct scores
        block = np.asfortranarray(block) if rng.random() < 0.3 else block  # any layout
        for depth in (1, 5, 17, 40, 60):
            got = per_row(top_k_flat(block, rank, depth))
            for row, (best, scores) in zip(block, got, strict=True):
                want = top_k(canonical_scores(row), rank, depth)
                assert best.tolist() == want.tolist(), (row, depth)
                assert scores.tolist() == canonical_scores(row)[want].tolist()


def test_retriever_rank_equals_search():
    docs = [Doc(f"d{i}", "", t) for i, t in enumerate(["a b c", "a a d", "b e e", "g", "a b"])]
    r = BM25Retriever(bm25_spec("r", "word"))
    r.prepare(docs, {})
    questions = [Question(f"q{i}", t) for i, t in enumerate(["a b", "e", "zzz", "a"])]
    assert r.rank(questions, 3, [{}] * 4) == [r.search(q.text, 3) for q in questions]


# -- stored term counts ---------------------------------------------------------------------

DOCS = [
    Doc("d1", "감쇠", "감쇠 보정은 CT 영상으로 감쇠 계수를 구한다."),
    Doc("d2", "금속", "금속 인공물이 감쇠 보정을 망친다. 금속 보정 방법."),
    Doc("d3", "팬텀", "문서번호 TD-2024-0137 팬텀 점검 절차."),
    Doc("d4", "공지", "점검 공지. 보정 일정."),
]
QUESTIONS = [
    Question("q1", "감쇠 보정은 어떻게 하나"),
    Question("q2", "팬텀 점검"),
    Question("q3", "금속 보정"),
]
NAMES = ["bm25-word", "bm25-bigram", "bm25-word+bigram"]


def make_ws(path, docs=DOCS):
    ws = new_workspace(path)
    ws.write_docs(docs)
    ws.write_questions(QUESTIONS)
    return ws


def rankings(ws):
    return {n: {q: (r.doc_ids, r.scores) for q, r in ws.runs(n).items()} for n in NAMES}


def test_counts_are_stored_and_a_reopen_reads_no_document(tmp_path, monkeypatch):
    ws = make_ws(tmp_path / "a.db")
    refresh_runs(ws, NAMES)
    stored = ws.conn.execute("SELECT count(*) FROM bm25_counts").fetchone()[0]
    assert stored == 3  # one per tokenizer
    first = rankings(ws)
    ws.close()

    ws = Workspace.open(tmp_path / "a.db")
    ws.write_questions([Question("q4", "보정 공지")])

    def no_docs():
        raise AssertionError("the corpus was read although its counts are stored")

    monkeypatch.setattr(ws, "docs", no_docs)
    report = refresh_runs(ws, NAMES)
    assert report.ran == dict.fromkeys(NAMES, 1)  # only the new question
    monkeypatch.undo()
    again = rankings(ws)
    ws.close()
    fresh = make_ws(tmp_path / "fresh.db")
    fresh.write_questions([Question("q4", "보정 공지")])
    refresh_runs(fresh, NAMES)
    assert again == rankings(fresh)
    assert {n: {q: again[n][q] for q in first[n]} for n in NAMES} == first
    fresh.close()


def test_after_editing_a_document_rankings_equal_a_fresh_build(tmp_path):
    ws = make_ws(tmp_path / "a.db")
    refresh_runs(ws, NAMES)
    before = rankings(ws)
    edited = Doc("d3", "팬텀", "금속 보정 금속 감쇠 점검")
    ws.write_docs([edited])
    refresh_runs(ws, NAMES)
    after = rankings(ws)
    assert after != before  # the edit matters to these questions
    fresh = make_ws(tmp_path / "fresh.db", [edited if d.id == "d3" else d for d in DOCS])
    refresh_runs(fresh, NAMES)
    assert after == rankings(fresh)
    key = BM25Retriever(bm25_spec("x", "word")).counts_key
    (stored_hash,) = ws.conn.execute(
        "SELECT corpus_hash FROM bm25_counts WHERE key = ?", (key,)
    ).fetchone()
    assert stored_hash == ws.corpus_hash()  # the stale counts were replaced
    ws.close()
    fresh.close()


def test_a_read_only_workspace_indexes_in_memory_and_writes_nothing(tmp_path):
    ws = make_ws(tmp_path / "a.db")
    ws.close()
    ro = Workspace.open(tmp_path / "a.db", readonly=True)
    r = BM25Retriever(bm25_spec("bm25-word", "word"))
    from engine.retrieve.base import PrepareEnv

    env = PrepareEnv(index_store=ro, corpus_hash=ro.corpus_hash())
    r.prepare(ro.docs(), {}, env)
    assert r.search("금속 보정", 10)[0][0] == "d2"
    assert ro.conn.execute("SELECT count(*) FROM bm25_counts").fetchone()[0] == 0
    ro.close()


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE bm25_counts SET indices = x'ffffffff'",
        "UPDATE bm25_counts SET indptr = x'00'",
        "UPDATE bm25_counts SET doc_ids = '[1, 2'",
        "UPDATE bm25_counts SET n_docs = n_docs + 1",
        'UPDATE bm25_counts SET terms = \'["a", "a"]\', n_terms = 2',
        "UPDATE bm25_counts SET tf = zeroblob(length(tf))",
    ],
)
def test_a_damaged_stored_record_is_ignored(tmp_path, damage):
    ws = make_ws(tmp_path / "a.db")
    refresh_runs(ws, NAMES)
    want = rankings(ws)
    ws.conn.execute(damage)
    ws.conn.commit()
    refresh_runs(ws, NAMES, force=True)
    assert rankings(ws) == want
    ws.close()


def test_counts_record_round_trips():
    docs, _ = random_corpus(3)
    counts = TermCounts.from_tokens(docs)
    ids = [f"d{i}" for i in range(len(docs))]
    back = TermCounts.from_record(counts.to_record(ids))
    assert back is not None
    got_ids, got = back
    assert got_ids == ids and got.vocab == counts.vocab
    assert_same_rows(got.tf, counts.tf)
    assert got.doc_len.tolist() == counts.doc_len.tolist()


def assert_same_rows(got: TermRows, want: TermRows) -> None:
    assert got.shape == want.shape
    assert got.indptr.tolist() == want.indptr.tolist()
    assert got.indices.tolist() == want.indices.tolist()
    assert got.data.tolist() == want.data.tolist()


# -- the rows against scipy.sparse --------------------------------------------------------------
# The index keeps its posting lists in numpy arrays (importing scipy.sparse would cost every
# pool process a fifth of its time); scipy's CSR matrices and their product are the reference.


@pytest.mark.parametrize("seed", range(5))
def test_rows_from_entries_equal_scipys_csr_with_duplicates_summed(seed):
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 40)), int(rng.integers(1, 30)))
    n = int(rng.integers(0, 300))
    rows = rng.integers(0, shape[0], n)
    cols = rng.integers(0, shape[1], n)
    data = rng.integers(1, 5, n).astype(np.float64)
    got = TermRows.from_entries(rows, cols, data, shape)
    want = sparse.csr_matrix((data, (rows, cols)), shape=shape)
    want.sum_duplicates()
    want.sort_indices()
    assert got.shape == want.shape and got.nnz == want.nnz
    assert got.indptr.tolist() == want.indptr.tolist()
    assert got.indices.tolist() == want.indices.tolist()
    assert got.data.tolist() == want.data.tolist()
    assert got.column_sums().tolist() == np.asarray(want.sum(axis=0)).ravel().tolist()


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seed", range(3))
def test_score_block_equals_scipys_sparse_product_bit_for_bit(variant, seed):
    # the product scipy computes from the same rows, with the query's terms in first-seen
    # order: each document's weights added in the same order, so the same floats
    sparse = pytest.importorskip("scipy.sparse")
    docs, queries = random_corpus(seed)
    index = BM25Index(docs, BM25Params(variant=variant))
    q = index.query_matrix(queries)
    w = index.weights
    qm = sparse.csr_matrix(
        (q.mult, q.terms.astype(np.int32), q.indptr.astype(np.int32)),
        shape=(len(queries), w.shape[0]),
    )
    qm.has_sorted_indices = False
    wm = sparse.csr_matrix((w.data, w.indices, w.indptr), shape=w.shape)
    want = (qm @ wm).toarray()
    got = bm25_index.score_block(q, w)
    assert got.shape == want.shape and got.tolist() == want.tolist()
    assert np.count_nonzero(got) > 0


@pytest.mark.parametrize("bound", [0, 1, 2, 300, 1 << 16, (1 << 16) + 1, 1 << 33])
def test_stable_order_is_numpys_stable_argsort(bound):
    rng = np.random.default_rng(bound)
    values = rng.integers(0, max(bound, 1), 5000) if bound else np.zeros(0, dtype=np.int64)
    values[: values.size // 2] //= 7  # many equal values: their order must be kept
    got = stable_order(values, bound)
    assert got.tolist() == np.argsort(values, kind="stable").tolist()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_empty_corpora_and_empty_batches_rank_as_one_question_at_a_time(variant):
    cases = [([], [["a"]]), ([[]], [["a"], []]), ([["a"]], []), ([["a", "b"], []], [["a", "zz"]])]
    for docs, queries in cases:
        index = BM25Index(docs, BM25Params(variant=variant))
        rank = id_ranks([f"d{i}" for i in range(len(docs))])
        got = [best.tolist() for best, _ in per_row(index.rank_flat(queries, rank, 5))]
        want = [top_k(canonical_scores(index.scores(q)), rank, 5).tolist() for q in queries]
        assert got == want, (docs, queries)


def test_score_block_a_few_questions_at_a_time_gives_the_same_block(monkeypatch):
    docs, queries = random_corpus(4)
    index = BM25Index(docs, BM25Params())
    q, w = index.query_matrix(queries), index.weights
    whole = bm25_index.score_block(q, w)
    monkeypatch.setattr(bm25_index, "EXPANDED_AT_ONCE", 7)  # about one question a piece
    assert bm25_index.score_block(q, w).tolist() == whole.tolist()
    assert bm25_index.score_block(q.rows(3, 3), w).shape == (0, len(docs))


# -- declared parameters --------------------------------------------------------------------


def test_bm25_defaults_are_the_declared_ones():
    declared = {p.name: p.default for p in KIND_PARAMS["bm25"]}
    spec = new_spec("x", "bm25", {})
    assert spec.params == {
        "tokenizer": declared["tokenizer"],
        "variant": declared["variant"],
        "k1": declared["k1"],
        "b": declared["b"],
        "fields": list(declared["fields"]),
    }
    assert bm25_spec("x", "word") == new_spec("x", "bm25", {"tokenizer": "word"})
    r = BM25Retriever(spec)
    assert (r.params.k1, r.params.b) == (1.5, 0.75)  # docs/numbers.md's defaults (Lucene BM25)


@pytest.mark.parametrize(
    ("kind", "values", "message"),
    [
        ("bm25", {"k1": -1}, "bm25 k1 must be from 0 to 1,000"),
        ("bm25", {"b": 2}, "bm25 b must be between 0 and 1"),
        (
            "bm25",
            {"variant": "bm25f"},
            "known variants: lucene, lucene-quantized, okapi, bm25l, bm25plus",
        ),
        ("bm25", {"k1": "x"}, "bm25 k1: expected a number"),
        ("rrf", {}, "a rrf retriever needs --of"),
        ("command", {"command": "  "}, "a command retriever needs --command"),
    ],
)
def test_declared_checks_name_the_parameter(kind, values, message):
    with pytest.raises(BadInput, match=message):
        new_spec("x", kind, values)


# -- live rescore -----------------------------------------------------------------------------


def test_live_means_from_kept_sums_equal_a_full_recount_bit_for_bit():
    from engine.gold import Gold, Status
    from engine.live import LiveScores

    rng = random.Random(7)
    docs = [f"d{i}" for i in range(40)]
    qids = [f"q{i}" for i in range(30)]
    rankings = {r: {q: rng.sample(docs, rng.randint(0, 15)) for q in qids} for r in ("a", "b", "c")}
    live = LiveScores(qids, {}, rankings)
    for step in range(300):
        q = rng.choice(qids)
        if step % 7 == 0:
            gold = Gold(q, Status.UNLABELED)
        else:
            gold = Gold(q, Status.LABELED, {d: rng.randint(1, 3) for d in rng.sample(docs, 3)})
        live.update(gold)
        if step % 11 == 0:
            live.set_ranking("b", q, rng.sample(docs, 10))
        assert live.means() == live.means_for(qids)  # exact equality, every metric


# -- counts derived from the word counts ------------------------------------------------------

DERIVED_TEXTS = [
    "감쇠 보정은 CT로 어떻게 하나? 보정 보정은 아아아 ct로",
    "ΟΔΟΣ ΟΔΟΣ 금속 인공물 2024-0137 TD-0137 가 나 가나다라",
    "",
    "İstanbul straße 감쇠감쇠 ﬁne Ⅻ 보정은",
    "금속 ct로 x 가",
]


def assert_same_counts(got: TermCounts, want: TermCounts) -> None:
    assert list(got.vocab.items()) == list(want.vocab.items())  # terms, ids and their order
    assert_same_rows(got.tf, want.tf)
    assert got.doc_len.tolist() == want.doc_len.tolist()


def postings(counts: TermCounts) -> dict[str, list[tuple[int, float]]]:
    """Each term's (document, count) entries, whatever the term's number."""
    tf = counts.tf
    return {
        term: list(
            zip(
                tf.indices[tf.indptr[i] : tf.indptr[i + 1]].tolist(),
                tf.data[tf.indptr[i] : tf.indptr[i + 1]].tolist(),
                strict=True,
            )
        )
        for term, i in counts.vocab.items()
    }


def assert_joined_counts(got: TermCounts, want: TermCounts, first: TermCounts) -> None:
    """``got`` holds ``want``'s counts; its terms are numbered as the join numbers them."""
    assert postings(got) == postings(want)
    assert list(got.vocab.values()) == list(range(len(got.vocab)))  # rows in order
    assert got.terms()[: len(first.vocab)] == first.terms()  # the first part's as they were
    assert got.tf.shape == want.tf.shape
    assert got.doc_len.tolist() == want.doc_len.tolist()


def counted_by_the_retriever(name: str, texts: list[str]) -> TermCounts:
    from engine.retrieve.base import PrepareEnv

    docs = [Doc(f"d{i:03d}", "", t) for i, t in enumerate(texts)]
    r = BM25Retriever(bm25_spec("x", name))
    return r._counted(name, docs, {}, PrepareEnv())[1]


@pytest.mark.parametrize("name", ["word", "bigram", "word+bigram"])
def test_bigram_and_joined_counts_equal_counting_the_tokens(name):
    from engine.tokenize import get_tokenizer

    tok = get_tokenizer(name)
    rng = random.Random(7)
    texts = DERIVED_TEXTS + [" ".join(rng.choices(DERIVED_TEXTS, k=3)) for _ in range(30)]
    want = TermCounts.from_tokens(tok.tokenize_many(texts))
    got = counted_by_the_retriever(name, texts)
    if name == "word+bigram":  # the join numbers the second part's new terms on
        assert_joined_counts(got, want, counted_by_the_retriever("word", texts))
    else:
        assert_same_counts(got, want)
    assert_same_counts(counted_by_the_retriever(name, []), TermCounts.from_tokens([]))


@pytest.mark.parametrize("name", ["bigram", "word+bigram"])
def test_derived_counts_equal_counting_the_tokens_on_korquad(name):
    from engine.formats.squad import read_squad
    from engine.tokenize import get_tokenizer
    from tests.conftest import shared_data

    squad = read_squad(shared_data("korquad_v1.0_dev", "KorQuAD_v1.0_dev.json"), "paragraph")
    texts = [d.text for d in squad.docs]
    want = TermCounts.from_tokens(get_tokenizer(name).tokenize_many(texts))
    got = counted_by_the_retriever(name, texts)
    if name == "word+bigram":
        assert_joined_counts(got, want, counted_by_the_retriever("word", texts))
    else:
        assert_same_counts(got, want)


def test_bigram_counts_come_from_a_stored_word_record_without_reading_documents(tmp_path):
    from engine.retrieve.base import PrepareEnv

    ws = make_ws(tmp_path / "a.db")
    refresh_runs(ws, ["bm25-word"])
    env = PrepareEnv(index_store=ws, corpus_hash=ws.corpus_hash())
    r = BM25Retriever(bm25_spec("x", "bigram"))
    ids, counts = r._counted("bigram", [], {}, env)  # no documents handed over
    docs = ws.docs()
    assert list(ids) == [d.id for d in docs]
    want = counted_by_the_retriever("bigram", [d.text for d in docs])
    assert_same_counts(counts, want)
    ws.close()


@pytest.mark.parametrize("ids", ["plain", "a NUL in an id"])
def test_rankings_stored_as_arrays_are_the_rows_write_runs_writes(tmp_path, ids):
    # one statement per batch (its ids in JSON), or row by row where an id has a NUL
    ws = make_ws(tmp_path / "a.db")
    if ids != "plain":
        ws.write_questions([Question("q\0nul", "감쇠 보정")])
    ws.write_questions([Question("q-none", "zzz")])  # ranks nothing
    refresh_runs(ws, NAMES)  # BM25's rankings are stored as arrays (write_batches)
    rows = (
        "SELECT retriever, question_id, depth, doc_ids, scores, typeof(doc_ids), latency_ms, "
        "input_hash, alone_ms FROM runs ORDER BY 1, 2"
    )
    by_batches = ws.conn.execute(rows).fetchall()
    questions = len(QUESTIONS) + 1 + (ids != "plain")
    assert len(by_batches) == len(NAMES) * questions
    assert any(len(r[3]) > 2 for r in by_batches)  # some ranking is not empty
    assert {r[5] for r in by_batches} == {"blob"}
    assert [r[3] for r in by_batches if r[1] == "q-none"] == [b""] * len(NAMES)
    assert all(r[6] > 0 and r[7] for r in by_batches)
    # every retriever's sample was timed alone (the last one's with its rankings)
    assert {r[0] for r in by_batches if r[8] is not None} == set(NAMES)
    if ids != "plain":
        assert [r[1] for r in by_batches].count("q\0nul") == len(NAMES)
    runs = [r for n in NAMES for r in ws.runs(n).values()]
    ws.conn.execute("DELETE FROM runs")
    ws.conn.commit()
    ws.write_runs(runs)
    assert ws.conn.execute(rows).fetchall() == by_batches  # byte for byte
    ws.conn.execute("DELETE FROM runs")
    ws.conn.commit()
    assert ws.write_batches([]) == 0
    assert ws.conn.execute(rows).fetchall() == []
    ws.close()


# -- the ranking thread ---------------------------------------------------------------------


def failing_for(name, monkeypatch):
    from engine.retrieve.base import RetrieverError

    real = BM25Retriever.rank_batch

    def rank_batch(self, questions, depth):
        if self.spec.name == name:
            raise RetrieverError(f"{name} broke")
        return real(self, questions, depth)

    monkeypatch.setattr(BM25Retriever, "rank_batch", rank_batch)


def test_a_retriever_failing_on_the_ranking_thread_is_reported_under_its_own_name(
    tmp_path, monkeypatch
):
    ws = make_ws(tmp_path / "a.db")
    failing_for("bm25-bigram", monkeypatch)
    report = refresh_runs(ws, NAMES, keep_going=True)
    assert report.errors == {"bm25-bigram": "bm25-bigram broke"}
    stored = {n: len(ws.runs(n)) for n in NAMES}
    assert stored == {"bm25-word": 3, "bm25-bigram": 0, "bm25-word+bigram": 3}
    ws.close()


def test_without_keep_going_a_failure_raises_and_what_ranked_before_it_stays(tmp_path, monkeypatch):
    from engine.retrieve.base import RetrieverError

    ws = make_ws(tmp_path / "a.db")
    failing_for("bm25-word+bigram", monkeypatch)
    with pytest.raises(RetrieverError, match="word\\+bigram broke"):
        refresh_runs(ws, NAMES)
    assert [len(ws.runs(n)) for n in NAMES] == [3, 3, 0]
    # the term counts went in with the rankings stored
    assert ws.conn.execute("SELECT count(*) FROM bm25_counts").fetchone()[0] == 3
    ws.close()
