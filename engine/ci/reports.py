r"""CI reports of a gate's verdict: JUnit XML and a Markdown summary.

Both present a :class:`~engine.ci.gate.Verdict` and decide nothing. JUnit XML has one test
case per question and retriever that ran (``RETRIEVER::QUESTION_ID``): failed when the
verdict failed it (it regressed against the snapshot beyond the tolerance, or, without a
snapshot, its first gold is not within the top ``k``), skipped when it was not compared
(scored only now, not ranked now); one case per floor (``floor::RETRIEVER:METRIC``),
failed when missed; and, when the gate is refused, one error case (``goldpan::gate``)
that says why, so a report of a gate that compared nothing never reads as a pass. The
Markdown summary is made for ``$GITHUB_STEP_SUMMARY``.

Question and document text is data: every text is first made visible and one line
(:func:`engine.visible.visible_line`: ESC, BEL, CSI, OSC, line breaks and tabs as
control pictures), so a question can neither write a line of its choosing nor drive a
terminal. XML is then built with :mod:`xml.etree` (which escapes markup) after what XML
cannot hold is written as ``\uXXXX``; Markdown escapes ``|``, backticks, ``<``, ``&``,
``*``, ``_``, brackets and backslashes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.ci.gate import Verdict
from engine.ci.snapshots import SnapshotDiff
from engine.scoring import Scoreboard
from engine.verdict import rule
from engine.visible import visible_line


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
    """In the snapshot (None without one, or when the question was not compared)."""
    winner: str | None
    """The document ranked first now."""
    failed: bool
    not_compared: str | None = None
    """Why the gate left it out (a skipped case)."""

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


def question_cases(
    verdict: Verdict,
    board: Scoreboard,
    texts: Mapping[str, str],
    winners: Mapping[str, Mapping[str, str | None]],
) -> list[QuestionCase]:
    """A case per question result of the verdict (every retriever that ran)."""
    return [
        QuestionCase(
            r.retriever,
            r.question,
            texts.get(r.question, ""),
            tuple(board.golds[r.question].gold),
            r.rank_now,
            r.rank_then,
            winners.get(r.retriever, {}).get(r.question),
            r.failed,
            r.not_compared,
        )
        for r in verdict.questions
    ]


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    r"""``text`` made visible on one line, what XML 1.0 cannot hold written as ``\uXXXX``."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", visible_line(text))


def junit_xml(cases: Sequence[QuestionCase], suite: str, verdict: Verdict) -> str:
    """The JUnit XML document of ``cases`` and ``verdict`` (one ``testsuite`` named ``suite``)."""
    root = ET.Element("testsuites", name="goldpan")
    ts = ET.SubElement(root, "testsuite", name=_xml_text(suite))
    failures = errors = skipped = 0
    if verdict.refusals:
        errors += 1
        tc = ET.SubElement(ts, "testcase", classname="goldpan", name="goldpan::gate")
        message = _xml_text("refused: " + verdict.refusal_message())
        ET.SubElement(tc, "error", message=message, type="refused").text = message
    for f in verdict.floors:
        tc = ET.SubElement(
            ts,
            "testcase",
            classname=_xml_text(f"goldpan.{f.retriever}"),
            name=_xml_text(f"floor::{f.retriever}:{f.metric}"),
        )
        if f.missed:
            failures += 1
            message = _xml_text(f"below the floor: {f.text()}")
            ET.SubElement(tc, "failure", message=message, type="floor").text = message
    for c in cases:
        tc = ET.SubElement(
            ts, "testcase", classname=_xml_text(f"goldpan.{c.retriever}"), name=_xml_text(c.name)
        )
        if c.not_compared is not None:
            skipped += 1
            ET.SubElement(tc, "skipped", message=_xml_text(f"not compared: {c.not_compared}"))
        elif c.failed:
            failures += 1
            message = _xml_text(c.message(verdict.k))
            kind = "regression" if verdict.gate == "regressions" else "gold not in the top k"
            ET.SubElement(tc, "failure", message=message, type=kind).text = message
    counts = {"tests": len(ts), "failures": failures, "errors": errors}
    for element in (root, ts):
        for key, value in counts.items():
            element.set(key, str(value))
    ts.set("skipped", str(skipped))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


_MD_SPECIAL = re.compile(r"[\\|`<>&*_\[\]]")


def md(text: str) -> str:
    """``text`` safe in a Markdown table cell: visible, one line, no markup, no HTML."""
    escapes = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
    return _MD_SPECIAL.sub(lambda m: escapes.get(m.group(), "\\" + m.group()), visible_line(text))


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _head(title: str, verdict: Verdict, how: Mapping[str, str]) -> list[str]:
    """The title, the refusals (a gate that cannot pass says so first) and the rankings."""
    lines = [f"## {md(title)}", ""]
    if verdict.refusals:
        lines += ["**The gate is refused (nothing it can vouch for was compared):**", ""]
        lines += [f"- {md(r.text)}" for r in verdict.refusals]
        lines.append("")
    if how:
        lines += ["Rankings scored: " + "; ".join(f"{md(n)}: {md(w)}" for n, w in how.items())]
        lines.append("")
    if verdict.not_compared:
        left = "; ".join(f"{md(r)}: {md(why)}" for r, why in verdict.not_compared.items())
        lines += [f"Not compared: {left}", ""]
    lines += [f"Warning: {md(w)}" for w in verdict.warnings]
    return lines


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
    diff: SnapshotDiff,
    verdict: Verdict,
    cases: Sequence[QuestionCase],
    how: Mapping[str, str],
    title: str,
) -> str:
    """The summary of ``score --against``: metrics then / now and the regressed questions."""
    lines = _head(title, verdict, how)
    rows = []
    for r, d in diff.retrievers.items():
        if r not in verdict.retrievers:
            continue  # it did not run here: its numbers are not of the code now
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
                    md(c.verdict.short()),
                ]
            )
    header = ["retriever", "metric", "then", "now", "diff", "95% interval", "verdict"]
    lines += _table(header, rows)
    lines += ["", f"The verdict column: {rule()}.", ""]
    lines += _failed_table(cases, "Questions that got worse")
    return "\n".join(lines)


def markdown_scores(
    board: Scoreboard,
    metrics: Sequence[str],
    verdict: Verdict,
    cases: Sequence[QuestionCase],
    how: Mapping[str, str],
    title: str,
) -> str:
    """The summary of ``score``: scores, floors, and the questions without gold in the top k."""
    lines = _head(title, verdict, how)
    ran = verdict.retrievers
    rows = [
        [md(r), *(f"{rs.means[m]:.3f}" if rs.means is not None else "-" for m in metrics)]
        for r, rs in board.retrievers.items()
        if r in ran
    ]
    lines += _table(["retriever", *(md(m) for m in metrics)], rows)
    lines.append("")
    if verdict.floors:
        missed = [f for f in verdict.floors if f.missed]
        lines += [f"**Floors: {len(verdict.floors) - len(missed)} held, {len(missed)} missed.**"]
        lines += [f"- {md(f.text())}" for f in verdict.floors]
        lines.append("")
    lines += _failed_table(cases, f"Questions without a gold in the top {verdict.k}")
    return "\n".join(lines)
