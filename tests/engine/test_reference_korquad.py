"""goldpan's BM25 retrievers against an independent reference on KorQuAD 1.0 dev.

The reference below is written from "How the numbers are made" (docs/numbers.md)
alone, in plain Python (dicts, ``math.log``); nothing from ``engine`` is used to compute
it. The goldpan side goes through the engine entries the CLI's ``new``, ``import squad``,
``pool`` and ``score --json`` call (``new_workspace``, ``import_squad``, ``refresh_runs``,
``score_workspace``), then the cached runs of the workspace.

What must agree:

* Hit@1/3/5/10 and MRR of ``bm25-word``, ``bm25-bigram`` and ``bm25-word+bigram`` at
  article level (140 docs) and paragraph level (964 docs), every one of the 5,774
  questions, to 1e-9 (and Recall@k / nDCG@10, which are functions of the gold rank when a
  question has exactly one gold document);
* the rank of the gold document of every question, for every retriever;
* the whole cached depth-100 ranking (ids in order, and scores) of every retriever.
  The reference adds a document's term weights with ``math.fsum``, so a mathematically
  exact tie (same document length, same (tf, df) of the matched terms) gives equal
  scores whatever the query term order, and the tie goes to the larger doc id;
* the tokenizers, token for token, on every document and question;
* ``BM25Index`` scores: ``okapi`` / ``bm25l`` / ``bm25plus`` against rank_bm25's
  ``BM25Okapi`` / ``BM25L`` / ``BM25Plus``, and ``lucene`` against the reference formula.

The data (CC BY-ND) is read at run time from ``shared/data`` beside the repository and
never copied; the tests skip when it is absent.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
KORQUAD = DATA / "korquad_v1.0_dev" / "KorQuAD_v1.0_dev.json"

N_QUESTIONS = 5774
DEPTH = 100
K1 = 1.5
B = 0.75
TOL = 1e-9
RETRIEVERS = ("bm25-word", "bm25-bigram", "bm25-word+bigram")

# -- the reference, from docs/numbers.md's text ---------------------------------------------

_WORD_RUN = re.compile(r"\w+")


def ref_word(text: str) -> list[str]:
    """``word``: the lowercase ``\\w+`` runs."""
    return [run.lower() for run in _WORD_RUN.findall(text)]


def _is_hangul_syllable(ch: str) -> bool:
    return 0xAC00 <= ord(ch) <= 0xD7A3


def ref_bigram(text: str) -> list[str]:
    """``bigram``: a word with a Hangul syllable -> its overlapping 2-char pieces."""
    out: list[str] = []
    for word in ref_word(text):
        if len(word) >= 2 and any(_is_hangul_syllable(ch) for ch in word):
            for i in range(len(word) - 1):
                out.append(word[i] + word[i + 1])
        else:
            out.append(word)  # a one-character word, or a word without Hangul
    return out


def ref_word_bigram(text: str) -> list[str]:
    """``word+bigram``: both lists, concatenated."""
    return ref_word(text) + ref_bigram(text)


REF_TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "bm25-word": ref_word,
    "bm25-bigram": ref_bigram,
    "bm25-word+bigram": ref_word_bigram,
}


class RefLuceneBM25:
    """Lucene BM25 (k1 1.5 unless given, b 0.75), query terms counted once (docs/numbers.md)."""

    def __init__(self, doc_tokens: list[list[str]], k1: float = K1) -> None:
        n_docs = len(doc_tokens)
        avgdl = sum(len(toks) for toks in doc_tokens) / n_docs
        postings: dict[str, list[tuple[int, int, int]]] = {}
        for doc, toks in enumerate(doc_tokens):
            for term, tf in Counter(toks).items():
                postings.setdefault(term, []).append((doc, tf, len(toks)))
        # term -> [(doc index, weight)] for every document containing the term
        self.weights: dict[str, list[tuple[int, float]]] = {}
        for term, plist in postings.items():
            n = len(plist)
            idf = math.log(1 + (n_docs - n + 0.5) / (n + 0.5))
            self.weights[term] = [
                (doc, idf * tf / (tf + k1 * (1 - B + B * dl / avgdl))) for doc, tf, dl in plist
            ]
        self.n_docs = n_docs

    def scores(self, query_tokens: list[str]) -> dict[int, float]:
        """doc index -> score, for the documents sharing a term with the query.

        The term weights of a document are added with ``math.fsum`` (exactly rounded), so
        the score does not depend on the order of the query terms: two documents whose
        matched terms have the same weights get bit-identical scores, an exact tie that
        the doc id then breaks, as the convention says.
        """
        parts: dict[int, list[float]] = {}
        for term in set(query_tokens):  # distinct terms, counted once
            for doc, w in self.weights.get(term, ()):
                parts.setdefault(doc, []).append(w)
        return {doc: math.fsum(ws) for doc, ws in parts.items()}

    def dense(self, query_tokens: list[str]) -> list[float]:
        """The score of every document, 0.0 for those without a query term."""
        acc = self.scores(query_tokens)
        return [acc.get(doc, 0.0) for doc in range(self.n_docs)]


def ref_ranking(scores: dict[str, float], depth: int = DEPTH) -> list[tuple[str, float]]:
    """(doc id, score) by score descending, then doc id descending; score 0 not ranked."""
    ranked = sorted(((s, d) for d, s in scores.items() if s > 0), reverse=True)
    return [(d, s) for s, d in ranked[:depth]]


@dataclass
class RefCollection:
    """KorQuAD at one level, built straight from the JSON."""

    doc_ids: list[str]
    doc_texts: list[str]
    questions: list[tuple[str, str, str]]
    """(question id, question text, gold doc id)."""


def ref_collection(data: dict[str, Any], level: str) -> RefCollection:
    doc_ids: list[str] = []
    doc_texts: list[str] = []
    questions: list[tuple[str, str, str]] = []
    for article in data["data"]:
        title = article["title"]
        contexts = []
        for i, para in enumerate(article["paragraphs"]):
            contexts.append(para["context"])
            doc_id = title if level == "article" else f"{title}#{i}"
            if level == "paragraph":
                doc_ids.append(doc_id)
                doc_texts.append(para["context"])
            for qa in para["qas"]:
                questions.append((qa["id"], qa["question"], doc_id))
        if level == "article":
            doc_ids.append(title)
            doc_texts.append(title.replace("_", " ") + "\n" + "\n".join(contexts))
    return RefCollection(doc_ids, doc_texts, questions)


@dataclass
class RefRuns:
    """One tokenizer's reference rankings and the metrics over them."""

    rankings: dict[str, list[tuple[str, float]]]
    gold_rank: dict[str, int]
    """question id -> 1-based rank of the gold doc within depth 100, 0 when not there."""
    metrics: dict[str, float]


def ref_runs(coll: RefCollection, tokenize: Callable[[str], list[str]]) -> RefRuns:
    index = RefLuceneBM25([tokenize(t) for t in coll.doc_texts])
    rankings: dict[str, list[tuple[str, float]]] = {}
    gold_rank: dict[str, int] = {}
    for qid, text, gold in coll.questions:
        scores = index.scores(tokenize(text))
        ranking = ref_ranking({coll.doc_ids[d]: s for d, s in scores.items()})
        rankings[qid] = ranking
        ids = [d for d, _ in ranking]
        gold_rank[qid] = ids.index(gold) + 1 if gold in ids else 0
    ranks = list(gold_rank.values())
    n = len(ranks)
    metrics = {f"hit@{k}": sum(1 for r in ranks if 0 < r <= k) / n for k in (1, 3, 5, 10)}
    metrics["mrr"] = sum(1 / r for r in ranks if r) / n
    # One gold doc per question: Recall@k = Hit@k, nDCG@10 = 1 / log2(rank + 1).
    metrics.update({f"recall@{k}": metrics[f"hit@{k}"] for k in (1, 3, 5, 10)})
    metrics["ndcg@10"] = sum(1 / math.log2(r + 1) for r in ranks if 0 < r <= 10) / n
    return RefRuns(rankings, gold_rank, metrics)


# -- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def korquad() -> dict[str, Any]:
    if not KORQUAD.is_file():
        pytest.skip(f"KorQuAD 1.0 dev not found at {KORQUAD} (shared/data is not beside the repo)")
    with KORQUAD.open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


@dataclass
class LevelSetup:
    level: str
    workspace: Path
    coll: RefCollection
    ref: dict[str, RefRuns]


@pytest.fixture(scope="module", params=["article", "paragraph"])
def level_setup(
    request: pytest.FixtureRequest,
    korquad: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> LevelSetup:
    from engine.ingest import import_squad
    from engine.workspace_setup import new_workspace
    from tests.conftest import pool

    level: str = request.param
    ws = tmp_path_factory.mktemp(f"korquad-{level}") / "ws.db"
    with new_workspace(ws) as handle:
        import_squad(handle, KORQUAD, level)
    pool(ws, RETRIEVERS)
    coll = ref_collection(korquad, level)
    assert len(coll.questions) == N_QUESTIONS
    ref = {name: ref_runs(coll, REF_TOKENIZERS[name]) for name in RETRIEVERS}
    return LevelSetup(level, ws, coll, ref)


# -- tests ----------------------------------------------------------------------------------


def test_metrics_match_reference(level_setup: LevelSetup) -> None:
    from engine.scoring import score_workspace
    from engine.workspace import Workspace

    with Workspace.open(level_setup.workspace, readonly=True) as ws:
        board = json.loads(json.dumps(score_workspace(ws, retrievers=RETRIEVERS).to_json()))
    assert board["questions"] == {
        "scored": N_QUESTIONS,
        "not_ranked": 0,
        "no_answer": 0,
        "disputed": 0,
        "recheck": 0,
        "unlabeled": 0,
        "stopped": 0,
        "not_judged_stopped": 0,
    }
    for name in RETRIEVERS:
        got = board["retrievers"][name]
        want = level_setup.ref[name].metrics
        for metric, value in want.items():
            assert got[metric] == pytest.approx(value, abs=TOL, rel=0), (
                f"{level_setup.level} {name} {metric}: goldpan {got[metric]!r}, reference {value!r}"
            )


def cached_runs(level_setup: LevelSetup) -> dict[str, dict[str, Any]]:
    """retriever -> question id -> goldpan's cached ranking (a CachedRun)."""
    from engine.workspace import Workspace

    ws = Workspace.open(level_setup.workspace, readonly=True)
    try:
        return {name: ws.runs(name) for name in RETRIEVERS}
    finally:
        ws.close()


def test_gold_rank_matches_reference(level_setup: LevelSetup) -> None:
    cached = cached_runs(level_setup)
    gold = {qid: g for qid, _, g in level_setup.coll.questions}
    for name in RETRIEVERS:
        runs = cached[name]
        ref = level_setup.ref[name]
        assert set(runs) == set(gold), f"{name}: cached questions differ from the JSON's"
        wrong = []
        for qid, want in ref.gold_rank.items():
            ids = runs[qid].doc_ids
            got = ids.index(gold[qid]) + 1 if gold[qid] in ids else 0
            if got != want:
                wrong.append((qid, got, want, ids[:5], [d for d, _ in ref.rankings[qid][:5]]))
        assert not wrong, (
            f"{level_setup.level} {name}: gold rank differs on {len(wrong)} questions; "
            f"first (qid, goldpan rank, reference rank, goldpan top 5, reference top 5): "
            f"{wrong[:3]}"
        )


def test_rankings_match_reference(level_setup: LevelSetup) -> None:
    cached = cached_runs(level_setup)
    # The whole depth-100 rankings: order (ties: id descending), scores, and no document
    # with score 0.
    problems = []
    for name in RETRIEVERS:
        runs = cached[name]
        for qid, want in level_setup.ref[name].rankings.items():
            got = list(zip(runs[qid].doc_ids, runs[qid].scores, strict=True))
            if [d for d, _ in got] != [d for d, _ in want]:
                i = 0
                while i < min(len(got), len(want)) and got[i][0] == want[i][0]:
                    i += 1
                problems.append(
                    f"{name} {qid} from rank {i + 1}: goldpan {got[i : i + 2]}, "
                    f"reference {want[i : i + 2]}"
                )
                continue
            worst = max((abs(g - w) for (_, g), (_, w) in zip(got, want, strict=True)), default=0)
            if worst > TOL:
                problems.append(f"{name} {qid}: a score off by {worst}")
    assert not problems, (
        f"{level_setup.level}: {len(problems)} rankings differ from the reference:\n"
        + "\n".join(problems[:10])
    )


def test_tokenizers_match_reference(korquad: dict[str, Any]) -> None:
    from engine.tokenize import bigram_tokens, word_bigram_tokens, word_tokens

    pairs = [
        (word_tokens, ref_word),
        (bigram_tokens, ref_bigram),
        (word_bigram_tokens, ref_word_bigram),
    ]
    texts = []
    for article in korquad["data"]:
        texts.append(article["title"])
        for para in article["paragraphs"]:
            texts.append(para["context"])
            texts.extend(qa["question"] for qa in para["qas"])
    for goldpan_tok, ref_tok in pairs:
        for text in texts:
            assert goldpan_tok(text) == ref_tok(text), (ref_tok.__name__, text[:80])


def test_bm25_variants_match_rank_bm25_and_reference(korquad: dict[str, Any]) -> None:
    rank_bm25 = pytest.importorskip("rank_bm25")
    from engine.retrieve.bm25 import BM25Index, BM25Params

    coll = ref_collection(korquad, "paragraph")
    questions = [text for _, text, _ in coll.questions[::19]]  # 304 questions, every article
    assert len(questions) > 290
    references = {
        "okapi": rank_bm25.BM25Okapi,
        "bm25l": rank_bm25.BM25L,
        "bm25plus": rank_bm25.BM25Plus,
    }
    for tokenize in (ref_word, ref_bigram):
        docs = [tokenize(t) for t in coll.doc_texts]
        queries = [tokenize(q) for q in questions]
        for variant, cls in references.items():
            ours = BM25Index(docs, BM25Params(variant=variant, k1=K1, b=B))
            theirs = cls(docs, k1=K1, b=B)
            for q, toks in zip(questions, queries, strict=True):
                got = ours.scores(toks)
                want = theirs.get_scores(toks)
                assert got.shape == want.shape
                worst = float(abs(got - want).max())
                assert worst <= TOL, f"{variant} {tokenize.__name__} {q!r}: off by {worst}"
        ours = BM25Index(docs, BM25Params(variant="lucene", k1=K1, b=B))
        ref = RefLuceneBM25(docs)
        for q, toks in zip(questions, queries, strict=True):
            got = ours.scores(toks).tolist()
            want = ref.dense(toks)
            worst = max(abs(g - w) for g, w in zip(got, want, strict=True))
            assert worst <= TOL, f"lucene {tokenize.__name__} {q!r}: off by {worst}"
