"""Plain records that flow between the engine's modules (no behaviour, no SQL)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is not imported at run time: the CLI's fast commands never load it
    import numpy as np
    import numpy.typing as npt

VERDICTS = ("answerable", "no_answer", "ambiguous", "skip")
"""What an annotator can say of a question as a whole."""

JUDGING_ORDERS = ("maxmean", "fused", "mtf", "hash")
"""The orders the Label screen can show candidates in (:mod:`engine.judging.order`); the
first is the default."""

JUDGING_KEYS = ("judging_order", "stop_after", "stop_below")
"""The meta keys of a workspace's judging settings (``goldpan judging``): the candidate
order, and the stopping rule's run of not relevant judgments and estimate bound."""

RETRIEVER_KIND_NAMES = (
    "bm25",
    "dense",
    "e5",
    "rerank",
    "rrf",
    "fuse",
    "idboost",
    "command",
    "http",
    "opensearch",
    "elasticsearch",
    "postgres",
    "external",
)
"""Every retriever kind a workspace may hold (the registry in :mod:`engine.retrieve` and
the stored ``external`` kind; a test keeps them in agreement)."""

EXTERNAL_KIND = "external"
"""The kind of a retriever whose rankings come from an imported run file."""

STORED_KINDS = frozenset({EXTERNAL_KIND})
"""Kinds whose rankings come from outside (an imported run file): never run again.

(Here, not in :mod:`engine.retrieve`, whose import loads every retriever and numpy: the
label screen asks it before its first paint.)"""

MAX_JSON_DEPTH = 64
"""Deepest nesting of a JSON value goldpan stores or reads back (deeper values would
overflow the recursion of the code that copies, hashes and prints them)."""

MAX_DEPTH = 100_000
"""The deepest ranking a pool keeps or a retriever reads (``--depth``, a fusion's ``depth``)."""

TIMEOUT_RANGE = (0.1, 604_800.0)
"""Seconds any timeout may be, from a tenth of a second to a week: a retriever's request
or pool run, a query's, a command judge's run. Less cannot even connect; more is no
deadline (and ``1e300`` overflowed the clocks that wait for it)."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the same value always gives the same text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256_text(*parts: str) -> str:
    """sha256 of the parts, each terminated by a NUL so that boundaries count."""
    return TextHasher()(*parts)


class TextHasher:
    """:func:`sha256_text` of many part lists that share their first parts.

    ``TextHasher(a, b)(c)`` is ``sha256_text(a, b, c)``; the shared parts are hashed once
    (a pool hashes thousands of questions after the same corpus and retriever hashes).
    """

    def __init__(self, *prefix: str) -> None:
        """Hash the shared first parts."""
        self._h = hashlib.sha256()
        self._add(self._h, prefix)

    @staticmethod
    def _add(h: Any, parts: Sequence[str]) -> None:
        """Each part's UTF-8 and a NUL, in one update (UTF-8 of a join is the join)."""
        if parts:
            h.update("\0".join(parts).encode("utf-8", "surrogatepass") + b"\0")

    def __call__(self, *parts: str) -> str:
        """The hash of the shared parts followed by ``parts``."""
        h = self._h.copy()
        self._add(h, parts)
        return str(h.hexdigest())


@dataclass(frozen=True)
class Doc:
    """A document of the corpus."""

    id: str
    title: str
    text: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    @property
    def hash(self) -> str:
        """Content hash: changes when title, text or fields change."""
        return sha256_text(self.id, self.title, self.text, canonical_json(dict(self.fields)))


@dataclass(frozen=True)
class Question:
    """A question of the test set."""

    id: str
    text: str
    tags: tuple[str, ...] = ()
    author: str = ""
    written_blind: bool = False
    note: str = ""


@dataclass(frozen=True)
class Label:
    """One annotator's grade for one (question, document) pair; 0 = judged not relevant."""

    question_id: str
    doc_id: str
    annotator: str
    grade: int


@dataclass(frozen=True)
class Verdict:
    """One annotator's verdict on a question as a whole."""

    question_id: str
    annotator: str
    verdict: str
    note: str = ""


@dataclass(frozen=True)
class Adjudication:
    """The final word on a question: a gold set, or no answer in the corpus."""

    question_id: str
    no_answer: bool
    gold: Mapping[str, int]
    by: str
    note: str = ""


@dataclass(frozen=True)
class Stop:
    """An annotator stopped judging a question: its candidates left are not judged (stopped)."""

    question_id: str
    annotator: str
    rule: str
    """Why the stop was offered, as the Label screen said it (e.g. ``5 not relevant in a
    row``)."""


@dataclass(frozen=True)
class Proposal:
    """A document outside the pool that feedback proposed as a candidate of a question."""

    question_id: str
    doc_id: str
    method: str
    """How it was found (e.g. ``rocchio``): the name of the feedback method."""
    by: str
    """Who asked for it."""
    proposed: str = ""
    """When (UTC ISO 8601): the documents of one round share it."""


MODEL_JUDGE_KINDS = ("dense", "cross-encoder", "command")
"""The kinds of model judge (``goldpan judge --kind``): a bi-encoder's cosine, a
cross-encoder's score (both mapped to grades by calibrated thresholds), or a team's own
command that answers with grades."""


@dataclass(frozen=True)
class ModelJudge:
    """A model (or a team's own command) that grades pooled documents as its own annotator.

    Its grades are :class:`ModelLabel` rows, kept apart from people's labels: they never
    become gold by themselves.
    """

    annotator: str
    """``model:NAME``."""
    kind: str
    """One of :data:`MODEL_JUDGE_KINDS`."""
    model: str
    """The model's name or folder, or the command line."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """What the grades were made with: fields, thresholds, the calibration shown."""


@dataclass(frozen=True)
class ModelLabel:
    """A model judge's grade for one (question, document) pair, with the model's score."""

    question_id: str
    doc_id: str
    annotator: str
    grade: int
    score: float | None = None
    """The raw score the grade was mapped from (None: a command judge's own grade)."""

    @property
    def label(self) -> Label:
        """The grade as a :class:`Label` (for agreement figures)."""
        return Label(self.question_id, self.doc_id, self.annotator, self.grade)


@dataclass(frozen=True)
class RetrieverSpec:
    """A configured retriever: its name, kind and parameters."""

    name: str
    kind: str
    params: Mapping[str, Any]

    @property
    def hash(self) -> str:
        """Hash of kind and parameters: a cached run is valid while it is unchanged."""
        return sha256_text(self.kind, canonical_json(dict(self.params)))


@dataclass(frozen=True)
class CachedRun:
    """One retriever's cached ranking for one question."""

    retriever: str
    question_id: str
    doc_ids: tuple[str, ...]
    scores: tuple[float, ...]
    latency_ms: float
    """Its share of the time of the batch it was ranked in (throughput)."""
    input_hash: str
    depth: int
    alone_ms: float | None = None
    """The time of this question ranked by itself (None: not measured)."""


@dataclass(frozen=True)
class RankedBatch:
    """Several questions' rankings end to end, as arrays (one sparse product's output).

    Question ``i``'s ranking is the documents ``doc_ids[c]`` for ``c`` in
    ``cols[ends[i-1]:ends[i]]`` (``ends[-1]`` is 0), with ``scores`` over the same slice.
    Kept as arrays from ranking to storing, so that a pool of thousands of questions
    never builds a Python list per ranking.
    """

    doc_ids: Sequence[str]
    """The corpus's document ids, by document index."""
    cols: npt.NDArray[np.int64]
    scores: npt.NDArray[np.float64]
    ends: npt.NDArray[np.int64]

    def rankings(self) -> list[tuple[list[str], list[float]]]:
        """Each question's (doc ids, scores), in order."""
        ids, scores = self.doc_ids, self.scores.tolist()
        cols, ends = self.cols.tolist(), self.ends.tolist()
        out = []
        start = 0
        for end in ends:
            out.append(([ids[c] for c in cols[start:end]], scores[start:end]))
            start = end
        return out


@dataclass(frozen=True)
class BatchRun:
    """One retriever's cached rankings of several questions, as a :class:`RankedBatch`."""

    retriever: str
    question_ids: Sequence[str]
    input_hashes: Sequence[str]
    latency_ms: float
    """Per question (the batch's time over its questions)."""
    depth: int
    ranked: RankedBatch
    alone_ms: Mapping[str, float] = field(default_factory=dict)
    """Question id -> its time ranked by itself, for the questions timed so (a sample)."""
