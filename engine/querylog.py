"""Questions from real users: read a query log, de-duplicate it, sample it by frequency band.

The best test questions are the ones users typed (questions written while reading a
document copy its words). A query log is read from plain text (one query a line), JSONL
(``query``, optional ``count`` and ``timestamp``) or CSV with the same columns, and:

1. **normalized** for de-duplication: Unicode NFKC (full-width forms become ASCII),
   case-folded, whitespace runs collapsed to one space; the original text is kept;
2. **exact duplicates** (the same normalized text) are merged, their counts summed; the
   group shows its most frequent original form;
3. **near-duplicates** are grouped: the Jaccard similarity of the sets of character
   3-grams of the normalized text with spaces removed (so ``감쇠보정`` and ``감쇠 보정``
   match) must reach ``similarity`` (default 0.7); :mod:`engine.neardup` finds the pairs
   without comparing all pairs. Groups are formed most frequent first: a group absorbs the
   not-yet-grouped groups similar to it (no chaining through a third query);
4. groups that are near-duplicates of a question already in the workspace are left out;
5. every group gets a **frequency band** by cumulative share of traffic, groups ordered
   by count (most frequent first): ``head`` = the groups that make up the first 50% of
   the queries, ``torso`` the next 30% (up to 80%), ``tail`` the rest (:data:`CUTS`).
   A group belongs to the band in which its first occurrence falls.

``--sample N`` draws N distinct groups, stratified by band with equal allocation (N/3
per band, the remainder to head then torso; a band with too few groups gives its share
to the others), uniformly at random within a band from a seeded generator: the same log,
seed and workspace give the same sample. Sampled groups become questions tagged
``from-log`` and their band. Without ``--sample`` the groups are stored in the workspace
for the write screen ("next query from the log").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from engine.errors import BadInput
from engine.formats.errors import IngestError
from engine.formats.tabular import _csv_records, _jsonl_records, _lines, read_text
from engine.neardup import char_ngrams, normalize, similar_pairs
from engine.types import Question
from engine.workspace import Workspace

DEFAULT_SIMILARITY = 0.7
CUTS = (("head", 0.5), ("torso", 0.8), ("tail", 1.0))
"""Band name and the cumulative share of traffic where it ends."""
BANDS = tuple(name for name, _ in CUTS)
LOG_FORMATS = ("auto", "text", "jsonl", "csv")
FROM_LOG_TAG = "from-log"


@dataclass(frozen=True)
class LogEntry:
    """One line of the log."""

    text: str
    count: int
    line: int


# -- reading -------------------------------------------------------------------------------


def detect_format(path: Path) -> str:
    """By suffix: ``.jsonl``/``.ndjson``/``.json`` JSONL, ``.csv`` CSV, else plain text."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    return "text"


_WHOLE = re.compile(r"[+-]?[0-9]{1,30}")  # ASCII digits only: int() also takes "1_0", "١"

MAX_COUNT = 2**63 - 1
"""The largest ``count`` (and sum of counts) a log may give: what SQLite's INTEGER holds."""


def _count(value: Any, path: Path, line: int) -> int:
    """The ``count`` field: a whole number from 1 to :data:`MAX_COUNT` (absent: 1)."""
    if value is None or value == "":
        return 1
    expected = f"expected a whole number from 1 to {MAX_COUNT:,}"
    if isinstance(value, str):
        text = value.strip()
        value = int(text) if _WHOLE.fullmatch(text) else value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if type(value) is not int:
        raise IngestError(path, line, f"field `count`: {value!r} is not a whole number; {expected}")
    if not 1 <= value <= MAX_COUNT:
        raise IngestError(path, line, f"field `count`: {value!r} is out of range; {expected}")
    return value


def _check_total(entries: list[LogEntry], path: Path) -> None:
    """Refuse counts whose sum a 64-bit column cannot hold, naming the line it passes at."""
    total = 0
    for e in entries:
        total += e.count
        if total > MAX_COUNT:
            raise IngestError(
                path,
                e.line,
                f"field `count`: the counts up to this line add up to more than {MAX_COUNT:,}",
            )


def _query(value: Any, path: Path, line: int) -> str:
    if not isinstance(value, str):
        got = "nothing" if value is None else type(value).__name__
        raise IngestError(path, line, f"`query` must be text, got {got}")
    if not value.strip():
        raise IngestError(path, line, "`query` is empty")
    return value.strip()


def read_querylog(path: Path, fmt: str = "auto") -> list[LogEntry]:
    """Every query of a log file with its count and line.

    Raises:
        IngestError: naming the file and line of the first bad record.
    """
    if fmt not in LOG_FORMATS:
        raise IngestError(path, None, f"unknown format {fmt!r}; expected one of {LOG_FORMATS}")
    if fmt == "auto":
        fmt = detect_format(path)
    out: list[LogEntry] = []
    if fmt == "text":
        for n, line in _lines(read_text(path)):
            out.append(LogEntry(line.strip(), 1, n))
    elif fmt == "jsonl":
        for n, record in _jsonl_records(path):
            if "query" not in record:
                raise IngestError(path, n, "expected a `query` field")
            out.append(
                LogEntry(_query(record["query"], path, n), _count(record.get("count"), path, n), n)
            )
    else:
        for n, row in _csv_records(path, columns=("query",)):
            out.append(
                LogEntry(_query(row["query"], path, n), _count(row.get("count"), path, n), n)
            )
    if not out:
        raise IngestError(path, None, "no queries in the file")
    _check_total(out, path)
    return out


# -- grouping ------------------------------------------------------------------------------


@dataclass
class QueryGroup:
    """Queries that are the same after normalization, or near-duplicates of each other."""

    norm: str
    text: str
    """The most frequent original form of the group's most frequent query."""
    count: int
    variants: list[str] = field(default_factory=list)
    """Every other original form in the group (exact and near duplicates)."""
    near: list[tuple[str, float]] = field(default_factory=list)
    """Near-duplicate queries merged into this group, with their similarity to it."""
    band: str = ""


@dataclass
class Grouping:
    """The log, grouped."""

    groups: list[QueryGroup]
    """Every group, most frequent first (ties: normalized text), bands assigned."""
    existing: list[tuple[QueryGroup, str]]
    """Groups left out as near-duplicates of a workspace question (and its id)."""
    lines: int
    queries: int
    """Total occurrences (the counts summed)."""
    distinct: int
    """Distinct normalized queries."""


def group_log(
    entries: Sequence[LogEntry],
    *,
    similarity: float = DEFAULT_SIMILARITY,
    existing: Sequence[Question] = (),
) -> Grouping:
    """Merge exact duplicates, group near-duplicates, assign bands, set aside known ones."""
    forms: dict[str, Counter[str]] = {}
    for e in entries:
        forms.setdefault(normalize(e.text), Counter())[e.text] += e.count
    exact = [
        QueryGroup(
            norm,
            # most frequent original; ties: the first seen (Counter keeps insertion order)
            max(c.items(), key=lambda kv: kv[1])[0],
            sum(c.values()),
        )
        for norm, c in forms.items()
    ]
    for g in exact:
        g.variants = [t for t in forms[g.norm] if t != g.text]
    exact.sort(key=lambda g: (-g.count, g.norm))
    q_norms = [normalize(q.text) for q in existing]
    sets = [char_ngrams(g.norm) for g in exact] + [char_ngrams(n) for n in q_norms]
    i, j, s = similar_pairs(sets, similarity)
    n = len(exact)
    known: dict[int, str] = {}
    for a, b in zip(i.tolist(), j.tolist(), strict=True):
        if a < n <= b:
            known.setdefault(a, existing[b - n].id)
    log_pairs = (i < n) & (j < n)
    adj = sp.csr_matrix((s[log_pairs], (i[log_pairs], j[log_pairs])), shape=(n, n))
    adj = (adj + adj.T).tocsr()
    owner = np.full(n, -1, dtype=np.int64)
    groups: list[QueryGroup] = []
    for k in range(n):  # most frequent first: a leader absorbs its free neighbours
        if owner[k] >= 0:
            continue
        owner[k] = k
        lead = exact[k]
        row = slice(adj.indptr[k], adj.indptr[k + 1])
        for m, sim in sorted(zip(adj.indices[row].tolist(), adj.data[row].tolist(), strict=True)):
            if owner[m] >= 0:
                continue
            owner[m] = k
            other = exact[m]
            lead.count += other.count
            lead.variants += [other.text, *other.variants]
            lead.near.append((other.text, float(sim)))
        groups.append(lead)
    groups.sort(key=lambda g: (-g.count, g.norm))
    assign_bands(groups)
    index = {g.norm: k for k, g in enumerate(exact)}
    out_groups, out_existing = [], []
    for g in groups:
        members = [index[g.norm]] + [index[normalize(t)] for t, _ in g.near]
        hit = next((known[m] for m in members if m in known), None)
        if hit is None:
            out_groups.append(g)
        else:
            out_existing.append((g, hit))
    return Grouping(
        out_groups,
        out_existing,
        lines=len(entries),
        queries=sum(e.count for e in entries),
        distinct=len(exact),
    )


def assign_bands(groups: Sequence[QueryGroup]) -> None:
    """Set each group's band from the cumulative share of traffic (groups most frequent first).

    A group is in the band where its first occurrence falls: ``head`` while the traffic
    before it is under 50%, ``torso`` under 80%, else ``tail``.
    """
    total = sum(g.count for g in groups) or 1
    before = 0
    for g in groups:
        share = before / total
        g.band = next(name for name, cut in CUTS if share < cut)
        before += g.count


def band_summary(groups: Sequence[QueryGroup]) -> dict[str, dict[str, Any]]:
    """Per band: its cut point, groups, traffic share and count range."""
    total = sum(g.count for g in groups) or 1
    out: dict[str, dict[str, Any]] = {}
    low = 0.0
    for name, cut in CUTS:
        members = [g for g in groups if g.band == name]
        counts = [g.count for g in members]
        out[name] = {
            "cut": [low, cut],
            "groups": len(members),
            "traffic": sum(counts) / total,
            "min_count": min(counts, default=0),
            "max_count": max(counts, default=0),
        }
        low = cut
    return out


def allocate(n: int, available: dict[str, int]) -> dict[str, int]:
    """Equal allocation of ``n`` draws over the bands, capped by what each band has."""
    want = dict.fromkeys(BANDS, 0)
    left = min(n, sum(available.values()))
    while left > 0:
        open_bands = [b for b in BANDS if want[b] < available.get(b, 0)]
        share, extra = divmod(left, len(open_bands))
        for k, b in enumerate(open_bands):
            give = min(share + (1 if k < extra else 0), available[b] - want[b])
            want[b] += give
            left -= give
    return want


def sample_groups(groups: Sequence[QueryGroup], n: int, seed: int) -> list[QueryGroup]:
    """``n`` distinct groups, stratified by band (equal allocation), seeded."""
    by_band = {b: sorted((g for g in groups if g.band == b), key=lambda g: g.norm) for b in BANDS}
    want = allocate(n, {b: len(v) for b, v in by_band.items()})
    rng = np.random.default_rng(seed)
    out: list[QueryGroup] = []
    for b in BANDS:
        pool = by_band[b]
        if want[b]:
            picks = rng.choice(len(pool), size=want[b], replace=False)
            out.extend(pool[k] for k in sorted(picks.tolist()))
    return out


# -- importing -----------------------------------------------------------------------------


@dataclass
class QueryLogReport:
    """What ``goldpan import querylog`` did."""

    source: str
    grouping: Grouping
    min_count: int
    similarity: float
    kept: list[QueryGroup]
    """Groups eligible after --min-count (the sample is drawn from these)."""
    sampled: list[tuple[QueryGroup, str]] = field(default_factory=list)
    """Sampled groups and the question id each became."""
    stored: tuple[int, int] | None = None
    """(added, merged) rows of the stored log, without --sample."""
    seed: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape."""
        g = self.grouping
        return {
            "source": self.source,
            "lines": g.lines,
            "queries": g.queries,
            "distinct": g.distinct,
            "groups": len(g.groups) + len(g.existing),
            "similarity": self.similarity,
            "min_count": self.min_count,
            "bands": band_summary(g.groups + [x for x, _ in g.existing]),
            "near_duplicates": [
                {"query": x.text, "count": x.count, "merged": [[t, round(s, 3)] for t, s in x.near]}
                for x in g.groups
                if x.near
            ],
            "existing": [{"query": x.text, "question": q} for x, q in g.existing],
            "eligible": len(self.kept),
            "seed": self.seed,
            "sampled": [
                {"question": qid, "query": x.text, "count": x.count, "band": x.band}
                for x, qid in self.sampled
            ],
            "stored": None
            if self.stored is None
            else {"added": self.stored[0], "merged": self.stored[1]},
        }


def _next_ids(taken: set[str], k: int) -> list[str]:
    out: list[str] = []
    n = 1
    while len(out) < k:
        qid = f"log{n:04d}"
        if qid not in taken:
            out.append(qid)
        n += 1
    return out


def import_querylog(
    ws: Workspace,
    path: Path,
    *,
    sample: int | None = None,
    seed: int = 0,
    min_count: int = 1,
    similarity: float = DEFAULT_SIMILARITY,
    fmt: str = "auto",
    author: str = "query-log",
) -> QueryLogReport:
    """Read, group and either sample (questions) or store (for the write screen) a log.

    One transaction: a bad line leaves the workspace unchanged.
    """
    if not 0 < similarity <= 1:
        raise BadInput(f"similarity {similarity}: expected a number in (0, 1]")
    if min_count < 1:
        raise BadInput(f"--min-count {min_count}: expected at least 1")
    if sample is not None and sample < 1:
        raise BadInput(f"--sample {sample}: expected at least 1")
    entries = read_querylog(path, fmt)
    grouping = group_log(entries, similarity=similarity, existing=ws.questions())
    kept = [g for g in grouping.groups if g.count >= min_count]
    report = QueryLogReport(path.name, grouping, min_count, similarity, kept, seed=seed)
    with ws.transaction():
        if sample is None:
            report.seed = None
            report.stored = ws.write_querylog(
                (
                    {
                        "text": g.text,
                        "norm": g.norm,
                        "count": g.count,
                        "band": g.band,
                        "variants": g.variants[:50],
                    }
                    for g in kept
                ),
                path.name,
            )
        else:
            chosen = sample_groups(kept, sample, seed)
            ids = _next_ids(set(ws.question_ids()), len(chosen))
            questions = [
                Question(
                    qid,
                    g.text,
                    (FROM_LOG_TAG, g.band),
                    author,
                    True,
                    f"query log {path.name}: {g.count} occurrence{'s' if g.count != 1 else ''}",
                )
                for qid, g in zip(ids, chosen, strict=True)
            ]
            ws.write_questions(questions)
            report.sampled = list(zip(chosen, ids, strict=True))
        ws.log_event(
            "import",
            author,
            f"querylog {path.name}: {grouping.lines} lines, {len(kept)} groups"
            + (f", sampled {sample} (seed {seed})" if sample is not None else ", stored"),
        )
    return report


def question_from_log(
    ws: Workspace, row: dict[str, Any], text: str, tags: Sequence[str], author: str
) -> tuple[Question, str]:
    """Make a logged query a question, as it is (``kept``) or rewritten (``rewritten``).

    A rewritten query is added with the log's text first and then edited, so the
    question's history keeps what the user typed. One transaction with the decision,
    taken only while the query is still pending: when another annotator decided it first,
    :class:`~engine.workspace.team.LogQueryDecided` says who, and nothing is written.
    """
    with ws.transaction():
        ws.claim_log_query(int(row["id"]))
        q = ws.add_question(row["text"], tags, author, written_blind=True)
        status = "kept"
        if text.strip() != row["text"].strip():
            q = ws.edit_question(q.id, text, None, author)
            status = "rewritten"
        ws.decide_log_query(int(row["id"]), status, author, q.id)
    return q, status
