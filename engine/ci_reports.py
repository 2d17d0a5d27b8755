r"""CI reports of a scoring: JUnit XML and a Markdown summary.

JUnit XML has one test case per question and retriever; the Markdown summary is made for
``$GITHUB_STEP_SUMMARY``.
A question's test case fails when it regressed against the snapshot (``score
--against``), or, without a snapshot, when its first gold is not within the top ``k``.
The failure message gives both ranks, the document that ranked first and the question
text. Question and document text is data: XML is built with :mod:`xml.etree` (which
escapes markup) after characters XML cannot hold are written as ``\\uXXXX``; Markdown
escapes ``|``, backticks, ``<``, ``&``, backslashes and line breaks.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.score_snapshots import SnapshotDiff
from engine.scoring import Scoreboard


@dataclass(frozen=True)
class QuestionCase:
    """One question scored by one retriever, as a CI test case."""

    retriever: str
    question: str
    text: str
    """The question's text."""
    gold: tuple[str, ...]
    rank_now: int
    """First-gold rank now (0: no gold ranked)."""
    rank_then: int | None
    """In the snapshot (None without one, or when the question was not scored then)."""
    winner: str | None
    """The document ranked first now."""
    failed: bool

    @property
    def name(self) -> str:
        """The test case's name: ``RETRIEVER::QUESTION_ID``."""
        return f"{self.retriever}::{self.question}"

    def message(self, k: int | None = None) -> str:
        """Why it failed (or how it stands): ranks, the winning document, the question."""
        now = _rank(self.rank_now)
        ranks = (
            f"first gold at rank {_rank(self.rank_then)} then, {now} now"
            if self.rank_then is not None
            else f"first gold at rank {now}" + (f" (needs 1-{k})" if k else "")
        )
        return (
            f"{ranks}; ranked first now: {self.winner or '-'}; "
            f"gold: {', '.join(self.gold) or '-'}; question: {self.text}"
        )


def _rank(rank: int | None) -> str:
    return "-" if not rank else str(rank)


def cases_against(
    diff: SnapshotDiff,
    board: Scoreboard,
    texts: Mapping[str, str],
    winners: Mapping[str, Mapping[str, str | None]],
    *,
    tolerance: float = 0,
) -> list[QuestionCase]:
    """A case per question scored now and retriever compared; failed: it regressed."""
    bad = diff.regressions(tolerance)
    cases = []
    for r, d in diff.retrievers.items():
        moved = {m.question: m for m in d.regressed + d.improved}
        failing = {m.question for m in bad.get(r, [])}
        rs = board.retrievers[r]
        not_then = set(d.only_now)
        for i, q in enumerate(board.question_ids):
            now = int(rs.first_gold_rank[i])
            then = None if q in not_then else (moved[q].rank_then if q in moved else now)
            cases.append(
                QuestionCase(
                    r,
                    q,
                    texts.get(q, ""),
                    tuple(board.golds[q].gold),
                    now,
                    then,
                    winners.get(r, {}).get(q),
                    q in failing,
                )
            )
    return cases


def cases_at_k(
    board: Scoreboard,
    k: int,
    texts: Mapping[str, str],
    winners: Mapping[str, Mapping[str, str | None]],
) -> list[QuestionCase]:
    """A case per scored question and retriever; failed: no gold within the top ``k``."""
    cases = []
    for r, rs in board.retrievers.items():
        for i, q in enumerate(board.question_ids):
            now = int(rs.first_gold_rank[i])
            cases.append(
                QuestionCase(
                    r,
                    q,
                    texts.get(q, ""),
                    tuple(board.golds[q].gold),
                    now,
                    None,
                    winners.get(r, {}).get(q),
                    not 0 < now <= k,
                )
            )
    return cases


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    r"""``text`` with the characters XML 1.0 cannot hold written as ``\uXXXX``."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def junit_xml(cases: Sequence[QuestionCase], suite: str, *, k: int | None = None) -> str:
    """The JUnit XML document of ``cases`` (one ``testsuite`` named ``suite``)."""
    failures = sum(c.failed for c in cases)
    root = ET.Element("testsuites", name="goldpan", tests=str(len(cases)), failures=str(failures))
    ts = ET.SubElement(
        root,
        "testsuite",
        name=_xml_text(suite),
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    for c in cases:
        tc = ET.SubElement(
            ts, "testcase", classname=_xml_text(f"goldpan.{c.retriever}"), name=_xml_text(c.name)
        )
        if c.failed:
            message = _xml_text(c.message(k))
            f = ET.SubElement(tc, "failure", message=message, type="regression")
            f.text = message
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


_MD_SPECIAL = re.compile(r"[\\|`<>&*_\[\]]")


def md(text: str) -> str:
    """``text`` safe in a Markdown table cell: no markup, no HTML, one line."""
    one_line = " ".join(text.splitlines()) if text else ""
    escapes = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
    return _MD_SPECIAL.sub(lambda m: escapes.get(m.group(), "\\" + m.group()), one_line)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _rankings_line(how: Mapping[str, str]) -> list[str]:
    if not how:
        return []
    return ["Rankings scored: " + "; ".join(f"{md(n)}: {md(w)}" for n, w in how.items()), ""]


def _failed_table(cases: Sequence[QuestionCase], heading: str) -> list[str]:
    failed = [c for c in cases if c.failed]
    if not failed:
        return [f"**{heading}: none.**", ""]
    rows = [
        [
            md(c.retriever),
            md(c.question),
            _rank(c.rank_then) if c.rank_then is not None else "",
            _rank(c.rank_now),
            md(c.winner or "-"),
            md(", ".join(c.gold)),
            md(c.text),
        ]
        for c in failed
    ]
    header = ["retriever", "question", "rank then", "rank now", "ranked first now", "gold", "text"]
    return [f"### {heading} ({len(failed)})", "", *_table(header, rows), ""]


def markdown_against(
    diff: SnapshotDiff, cases: Sequence[QuestionCase], how: Mapping[str, str], title: str
) -> str:
    """The summary of ``score --against``: metrics then / now and the regressed questions."""
    lines = [f"## {md(title)}", "", *_rankings_line(how)]
    rows = []
    for r, d in diff.retrievers.items():
        for m, c in d.metrics.items():
            lo, hi = c.ci95
            rows.append(
                [
                    md(r),
                    md(m),
                    f"{c.then:.3f}",
                    f"{c.now:.3f}",
                    f"{c.diff:+.3f}",
                    f"[{lo:+.3f}, {hi:+.3f}]",
                ]
            )
    lines += _table(["retriever", "metric", "then", "now", "diff", "95% interval"], rows)
    lines.append("")
    lines += _failed_table(cases, "Questions that got worse")
    return "\n".join(lines)


def markdown_scores(
    board: Scoreboard,
    metrics: Sequence[str],
    cases: Sequence[QuestionCase],
    how: Mapping[str, str],
    title: str,
    k: int,
) -> str:
    """The summary of ``score``: the score table and the questions without gold in the top k."""
    lines = [f"## {md(title)}", "", *_rankings_line(how)]
    rows = [[md(r), *(f"{rs.means[m]:.3f}" for m in metrics)] for r, rs in board.retrievers.items()]
    lines += _table(["retriever", *(md(m) for m in metrics)], rows)
    lines.append("")
    lines += _failed_table(cases, f"Questions without a gold in the top {k}")
    return "\n".join(lines)
