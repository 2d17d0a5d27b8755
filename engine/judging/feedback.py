"""Gold beyond the pool: relevance feedback over the whole corpus.

A depth-10 pool of a few retrievers holds about half of a question's relevant documents
(Cranfield 1400: 44%). The judgments made so far say what a relevant document of this
question looks like; continuous active learning (Cormack & Grossman, the TREC Total Recall
track) turns them into a ranking of the whole corpus and proposes its best documents
that nobody judged, a few at a time, each new judgment feeding the next round.

Here the learner is Rocchio's relevance feedback (Rocchio 1971, with SMART's weights: the
question, plus 0.75 times the centroid of the relevant documents, minus 0.15 times the
centroid of the judged non-relevant ones), in each space the workspace has:

* the workspace's own tokens: the ``bigram`` tokenizer's term counts of the documents'
  text (whole words, Hangul words as their two-letter pieces), as BM25 keeps them, each
  document a vector of log(1 + tf) x idf, length one;
* each dense retriever's stored document embeddings (no model is loaded: the vectors
  are the ones the retriever stored when it pooled), the centroids only (the question's
  own embedding would need the model).

The spaces' rankings are fused by reciprocal rank (k = 60) and the documents nobody
judged are proposed best first (a pooled candidate not judged yet among them: feedback
ranks it with the rest). They join the question's candidates, judged blind like any
other, and come first among those not judged yet. How many relevant documents are left
is estimated from the yield of the rounds so far (:func:`relevant_left`).

``goldpan simulate`` measured the flow this module is for: judge the candidates in the
judging order until the first relevant document, then ask for feedback round after round
(benchmarks/RESULTS.md: on Cranfield 1400 it finds 8 points more of the relevant
documents in 20 judgments per question than a deeper pool, 10 points more in 50).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from engine.errors import GoldpanError
from engine.grades import is_relevant

if TYPE_CHECKING:
    from engine.workspace import Workspace

FloatArray = npt.NDArray[np.float64]

ROCCHIO = (1.0, 0.75, 0.15)
"""The weights of the question, the relevant centroid and the non-relevant centroid
(SMART's classic values, Buckley & Salton's experiments)."""

FUSION_K = 60
"""Reciprocal rank fusion of the spaces' rankings (the ``rrf`` retriever's k)."""

BATCH = 5
"""Documents proposed at a time: judged before the next round learns from them."""

TOKENIZER = "bigram"
"""The tokens of the lexical space: whole words, and Hangul words as two-letter pieces."""


class Space:
    """One vector space of the corpus: a document's similarity to every document."""

    name: str
    matrix: Any
    """Documents x features, each row of length one (or zero)."""

    def __init__(self, name: str, matrix: Any) -> None:
        """``matrix``: a numpy array or a scipy sparse matrix."""
        self.name = name
        self.matrix = matrix
        self._columns: dict[int, FloatArray] = {}

    def similarity(self, doc: int) -> FloatArray:
        """Every document's cosine with document ``doc`` (kept for the next round)."""
        col = self._columns.get(doc)
        if col is None:
            row = self.matrix[doc]
            product = self.matrix @ row.T
            col = np.asarray(product.todense() if hasattr(product, "todense") else product)
            col = col.reshape(-1).astype(np.float64)
            self._columns[doc] = col
        return col

    def centroids(self, relevant: Sequence[int], other: Sequence[int]) -> FloatArray:
        """Rocchio's feedback part: relevant centroid minus non-relevant centroid."""
        _, beta, gamma = ROCCHIO
        out = np.zeros(self.matrix.shape[0])
        if relevant:
            out += beta * np.sum([self.similarity(i) for i in relevant], axis=0) / len(relevant)
        if other:
            out -= gamma * np.sum([self.similarity(i) for i in other], axis=0) / len(other)
        return out


@dataclass
class Feedback:
    """Relevance feedback over one workspace's corpus (read once, then used per question)."""

    doc_ids: list[str]
    spaces: list[Space]
    questions: dict[str, dict[str, FloatArray]] = field(default_factory=dict)
    """Space name -> question id -> every document's cosine with the question."""
    corpus_hash: str = ""
    """The corpus the spaces were made from (another one: load them again)."""

    def __post_init__(self) -> None:
        """Index the documents."""
        self._index = {d: i for i, d in enumerate(self.doc_ids)}
        self._lexical: Callable[[Mapping[str, str]], dict[str, FloatArray]] | None = None
        self._dense: dict[str, str] = {}
        """Space name -> the dense retriever whose vectors it holds."""

    def learn_questions(self, ws: Workspace, question_ids: Sequence[str]) -> None:
        """Each question's cosine with every document, in every space, where not known yet.

        The lexical space tokenizes the question's text; a dense space reads its
        retriever's cached ranking of the question (no model is loaded).
        """
        names = [s.name for s in self.spaces]
        lexical = self.questions.setdefault(names[0], {})
        missing = [q for q in dict.fromkeys(question_ids) if q not in lexical]
        if not missing:
            return
        texts = {q.id: q.text for q in ws.questions() if q.id in set(missing)}
        if self._lexical is not None:
            lexical.update(self._lexical(texts))
        for space, retriever in self._dense.items():
            known = self.questions.setdefault(space, {})
            known.update(_cosines(ws, retriever, self.doc_ids, set(missing)))

    @property
    def method(self) -> str:
        """The method, named as reports say it."""
        return "rocchio (" + ", ".join(s.name for s in self.spaces) + ")"

    def scores(self, question_id: str, grades: Mapping[str, int]) -> FloatArray:
        """Every document's fused feedback score for the question (higher: more likely)."""
        index = self._index
        relevant = [index[d] for d, g in grades.items() if d in index and is_relevant(g)]
        other = [index[d] for d, g in grades.items() if d in index and not is_relevant(g)]
        fused = np.zeros(len(self.doc_ids))
        for space in self.spaces:
            q = self.questions.get(space.name, {}).get(question_id)
            if q is None and not relevant:
                continue  # neither the question nor a centroid: nothing to say
            s = space.centroids(relevant, other)
            if q is not None:
                s = s + ROCCHIO[0] * q
            fused += 1.0 / (FUSION_K + _ranks(s))
        return fused

    def propose(
        self, question_id: str, grades: Mapping[str, int], leave: set[str], k: int = BATCH
    ) -> list[str]:
        """The ``k`` best documents not in ``leave`` (candidates and judged ones)."""
        s = self.scores(question_id, grades)
        out: list[str] = []
        for i in np.argsort(-s, kind="stable").tolist():
            d = self.doc_ids[i]
            if d not in leave and d not in grades:
                out.append(d)
                if len(out) == k:
                    break
        return out


def _ranks(scores: FloatArray) -> FloatArray:
    """1-based ranks by score, highest first (ties in document order)."""
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(scores.size, dtype=np.float64)
    ranks[order] = np.arange(1, scores.size + 1)
    return ranks


MAX_RATIO = 0.9
"""The largest share of a round's yield the next round is assumed to keep (without a cap, a
flat run of rounds would promise an endless tail)."""


def relevant_left(rounds: Sequence[tuple[int, int]]) -> float | None:
    """Relevant documents left for feedback to find, from the yield of its rounds so far.

    ``rounds``: (documents proposed, relevant among them) per round, oldest first. The
    relevant share falls from round to round as the best documents are used up; a
    geometric decay fitted to the shares (least squares on their logarithms, each share
    (relevant + 1/2) / (proposed + 1), Jeffreys' prior) gives the ratio r between rounds
    (at most :data:`MAX_RATIO`), and the rounds to come hold ``last * r / (1 - r)``, with
    ``last`` the last round's expected relevant documents: Cormack & Grossman's gain curve
    in its simplest form. None before two rounds (no decay to fit yet).
    """
    judged = [(n, rel) for n, rel in rounds if n > 0]
    if len(judged) < 2:
        return None
    shares = np.array([(rel + 0.5) / (n + 1) for n, rel in judged])
    slope = float(np.polyfit(np.arange(shares.size), np.log(shares), 1)[0])
    ratio = min(math.exp(slope), MAX_RATIO)
    last = float(shares[-1]) * judged[-1][0]
    return last * ratio / (1 - ratio)


def load_feedback(ws: Workspace, question_ids: Sequence[str] = ()) -> Feedback:
    """The workspace's feedback spaces (its tokens; each dense retriever's vectors).

    ``question_ids``: the questions to learn at once (:meth:`Feedback.learn_questions`).
    """
    from engine.retrieve import build_retriever
    from engine.retrieve.base import PrepareEnv
    from engine.retrieve.bm25 import BM25Retriever
    from engine.types import RetrieverSpec

    docs = ws.docs()
    corpus = ws.corpus_hash()
    lexical = build_retriever(RetrieverSpec("feedback", "bm25", {"tokenizer": TOKENIZER}))
    assert isinstance(lexical, BM25Retriever)
    lexical.prepare(docs, {}, PrepareEnv(index_store=_ReadOnly(ws), corpus_hash=corpus))
    doc_ids, counts = lexical.term_counts()
    matrix, idf = _tf_idf(counts)
    spaces = [Space(f"{TOKENIZER} tokens", matrix)]
    dense: dict[str, str] = {}
    for spec in ws.retrievers():
        if spec.kind == "dense":
            vectors = _dense_vectors(ws, spec, docs)
            if vectors is not None:
                spaces.append(Space(f"{spec.name} embeddings", vectors))
                dense[spaces[-1].name] = spec.name

    def lexical_cosines(texts: Mapping[str, str]) -> dict[str, FloatArray]:
        out = {}
        vocab = counts.vocab
        for qid, terms in zip(texts, lexical.question_terms(list(texts.values())), strict=True):
            weights: dict[int, float] = {}
            for t in terms:
                at = vocab.get(t)
                if at is not None:
                    weights[at] = weights.get(at, 0.0) + 1.0
            if weights:
                cols = np.fromiter(weights, dtype=np.int64)
                w = np.log1p(np.fromiter(weights.values(), dtype=np.float64)) * idf[cols]
                w /= np.linalg.norm(w)
                out[qid] = np.asarray(matrix[:, cols] @ w).reshape(-1)
        return out

    feedback = Feedback(list(doc_ids), spaces, corpus_hash=corpus)
    feedback._lexical = lexical_cosines
    feedback._dense = dense
    feedback.learn_questions(ws, question_ids)
    return feedback


def _cosines(
    ws: Workspace, retriever: str, doc_ids: Sequence[str], wanted: set[str] | None
) -> dict[str, FloatArray]:
    """Question id -> every document's cosine with it, from a dense retriever's ranking.

    Its cached ranking holds the cosines of its top documents; every other document is
    below the last of them, and is given that one (nothing is embedded again).
    """
    at = {d: i for i, d in enumerate(doc_ids)}
    out = {}
    for qid, run in ws.runs(retriever, None if wanted is None else sorted(wanted)).items():
        scores = np.asarray(run.scores, dtype=np.float64)
        if not scores.size or not np.all(np.isfinite(scores)):
            continue
        col = np.full(len(doc_ids), float(scores.min()))
        for d, v in zip(run.doc_ids, scores.tolist(), strict=True):
            if d in at:
                col[at[d]] = v
        out[qid] = col
    return out


def _tf_idf(counts: Any) -> tuple[Any, FloatArray]:
    """Documents x terms, log(1 + tf) x idf, rows of length one; and the idf."""
    import scipy.sparse as sp

    tf = counts.tf
    n_terms, n_docs = tf.shape
    terms_by_docs = sp.csr_matrix((tf.data, tf.indices, tf.indptr), shape=(n_terms, n_docs))
    m = terms_by_docs.T.tocsr()
    df = np.diff(tf.indptr).astype(np.float64)
    idf = np.log((n_docs + 1) / (df + 1)) + 1
    m.data = np.log1p(m.data)
    m = m @ sp.diags(idf)
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).reshape(-1))
    norms[norms == 0] = 1.0
    return (sp.diags(1.0 / norms) @ m).tocsr(), idf


def _dense_vectors(ws: Workspace, spec: Any, docs: Sequence[Any]) -> FloatArray | None:
    """A dense retriever's stored vectors of the current documents (None: some missing)."""
    from engine.retrieve import build_retriever

    try:
        key = build_retriever(spec).store_key  # type: ignore[attr-defined]
    except GoldpanError:  # the extra is not installed, or its parameters are bad
        return None
    stored = ws.embeddings(key)
    rows = []
    for d in docs:
        found = stored.get(d.id)
        if found is None or found[0] != d.hash:
            return None
        rows.append(np.frombuffer(found[1], dtype="<f4"))
    if not rows or len({r.size for r in rows}) != 1:
        return None
    m = np.vstack(rows).astype(np.float64)
    m[~np.isfinite(m)] = 0.0
    norms = np.linalg.norm(m, axis=1)
    norms[norms == 0] = 1.0
    out: FloatArray = m / norms[:, None]
    return out


class _ReadOnly:
    """The workspace as an index store that is never written to (feedback only reads)."""

    readonly = True

    def __init__(self, ws: Workspace) -> None:
        self._ws = ws

    def term_counts(self, key: str, corpus_hash: str) -> dict[str, Any] | None:
        return self._ws.term_counts(key, corpus_hash)

    def write_term_counts(self, key: str, corpus_hash: str, record: dict[str, Any]) -> None:
        raise AssertionError("feedback never writes term counts")


@dataclass(frozen=True)
class Round:
    """One round of feedback on a question: what it proposes, and what it expects left."""

    question_id: str
    docs: list[str]
    """Documents to judge next, best first."""
    relevant_left: float | None
    """Relevant documents estimated still to find (:func:`relevant_left`; None: unknown)."""
    method: str


def judged_grades(labels: Sequence[Any], question_id: str) -> dict[str, int]:
    """What feedback learns from on a question: each judged document's highest grade.

    Any annotator's relevant grade makes a document relevant for the learner (a disputed
    document is better read than missed), every other judged one is not relevant.
    """
    out: dict[str, int] = {}
    for lab in labels:
        if lab.question_id == question_id:
            out[lab.doc_id] = max(out.get(lab.doc_id, 0), lab.grade)
    return out


def rounds_of(proposals: Sequence[Any], grades: Mapping[str, int]) -> list[tuple[int, int]]:
    """A question's past rounds as (judged proposals, relevant among them), oldest first.

    A round is the proposals made at one time; a proposal nobody judged yet is left out.
    """
    by_round: dict[str, list[str]] = {}
    for p in proposals:
        by_round.setdefault(p.proposed, []).append(p.doc_id)
    out = []
    for stamp in sorted(by_round):
        judged = [grades[d] for d in by_round[stamp] if d in grades]
        out.append((len(judged), sum(1 for g in judged if is_relevant(g))))
    return out


def next_round(
    feedback: Feedback,
    question_id: str,
    grades: Mapping[str, int],
    proposals: Sequence[Any],
    k: int = BATCH,
) -> Round:
    """The next ``k`` documents feedback proposes for a question, and what it expects left.

    Every document nobody judged may be proposed, a pooled candidate not judged yet
    included (feedback ranks it with the rest); one proposed already and not judged yet
    is not proposed again.
    """
    waiting = {p.doc_id for p in proposals if p.doc_id not in grades}
    docs = feedback.propose(question_id, grades, waiting, k)
    return Round(question_id, docs, relevant_left(rounds_of(proposals, grades)), feedback.method)
