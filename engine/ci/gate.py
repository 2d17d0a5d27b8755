"""A gate's verdict: the one home of what a gate compared, whether it passes, and its refusals.

A gate turns scores into a pass or a fail, as a unit-test suite does for code:
``goldpan score --fail-under`` (floors), ``score --against --fail-on-regression`` (no
question worse than a snapshot), the Python API (``goldpan.evaluate``, ``compare_to``),
the pytest plugin (a test per question), and the CI reports that present them (JUnit
XML, Markdown, :mod:`engine.ci.reports`). Each front end asks this module for a
:class:`Verdict` and presents it; none decides by itself. Callers:
``tui.cli.commands.scores.cmd_score``, ``tui.cli.commands.snapshots.cmd_score_against``,
``goldpan.api`` and ``goldpan.pytest_plugin``.

A verdict holds

* what was compared: per retriever, each question scored now (a question not ranked yet
  for its inputs now is left out of every score, :mod:`engine.ranked`) and, against a
  snapshot, scored then too (:func:`engine.ci.snapshots.paired_questions`); what was
  left out and why;
* the failures: floors missed, questions more than ``tolerance`` ranks worse than the
  snapshot (:func:`engine.ranks.is_worse`), or, for the questions' own gate, without a
  gold in the top k;
* the refusals (:data:`REFUSALS`): a gate that cannot vouch for what it compared is
  refused (exit 2), never passed; compared nothing is never a pass;
* warnings: what a reader should know that does not change the verdict (the place for,
  e.g., a low Judged@10 of the questions compared); every front end shows them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.ci.holes import DEFAULT_MIN_JUDGED, hole_warnings
from engine.ci.rankings import Rankings
from engine.ci.snapshots import SnapshotDiff
from engine.errors import GoldpanError
from engine.ranked import left_out
from engine.ranks import is_worse
from engine.scoring import Scoreboard, lacking


@dataclass(frozen=True)
class Rule:
    """One refusal: its key and the promise it keeps, as docs/ci.md's list words it."""

    key: str
    promise: str


NOTHING_COMPARED = Rule(
    "nothing-compared",
    "Compared nothing is never a pass: a floor over no scored question or on a retriever "
    "that has not ranked some scored question and cannot rank it now (never ranked here, "
    "not trusted, failed), or a retriever with no question scored both in the snapshot and "
    "now (another test set, a `--tag` that matches none, labels not committed, questions "
    "not ranked yet), is refused.",
)
MISSING_NOW = Rule(
    "missing-now",
    "A retriever of the snapshot that the workspace no longer has (removed or renamed) "
    "is refused, never left out.",
)
UNKNOWN_NAME = Rule(
    "unknown-name",
    "A name the gate is given that matches nothing to compare (a `--run` or "
    "`--run-command` NAME or `--retriever` the snapshot lacks, a floor's retriever not "
    "scored, the API's or the plugin's name) is refused.",
)
NOT_RUN = Rule(
    "not-run",
    "A retriever it covers whose rankings were not made this run and cannot be vouched "
    "for (an untrusted command; a read-only workspace or `--no-pool` with code that can "
    "change) is refused.",
)
REPLACED_INPUT = Rule(
    "replaced-input",
    "A retriever that reads a ranking the command line replaced is fused again from the "
    "given rankings, or refused when it cannot be (a reranker).",
)
REFUSALS: tuple[Rule, ...] = (NOTHING_COMPARED, MISSING_NOW, UNKNOWN_NAME, NOT_RUN, REPLACED_INPUT)
"""Every refusal a gate makes, in the order docs/ci.md's "What a gate guarantees" lists them."""


class GateRefused(GoldpanError):
    """A gate that cannot vouch for what it compared (exit 2); the message says why."""

    def __init__(self, verdict: Verdict) -> None:
        """Carry the verdict; its refusals are the message."""
        super().__init__(verdict.refusal_message())
        self.verdict = verdict


@dataclass(frozen=True)
class Refusal:
    """Why a gate cannot pass or fail: one of :data:`REFUSALS`, with the names and the fix."""

    rule: Rule
    text: str


@dataclass(frozen=True)
class QuestionResult:
    """One question of one retriever as the gate saw it."""

    retriever: str
    question: str
    rank_now: int
    """First-gold rank now (0: no gold ranked)."""
    rank_then: int | None = None
    """In the snapshot (None without one, or when not compared)."""
    failed: bool = False
    not_compared: str | None = None
    """Why it was left out of the comparison (then it neither passed nor failed)."""


@dataclass(frozen=True)
class Floor:
    """``--fail-under [RETRIEVER:]METRIC=VALUE``: a metric's mean must be VALUE or more."""

    retriever: str | None
    """None: every retriever scored."""
    metric: str
    value: float


@dataclass(frozen=True)
class FloorResult:
    """A floor held against one retriever's mean."""

    retriever: str
    metric: str
    floor: float
    mean: float

    @property
    def missed(self) -> bool:
        """The mean is below the floor."""
        return self.mean < self.floor

    def text(self) -> str:
        """``mysearch hit@1 0.7500 < 1`` (or ``>=`` when held)."""
        op = "<" if self.missed else ">="
        return f"{self.retriever} {self.metric} {self.mean:.4f} {op} {self.floor:g}"


@dataclass
class Verdict:
    """What a gate compared, what failed, and what it refuses."""

    gate: str
    """``floors``, ``regressions`` or ``top k``: what fails it."""
    questions: list[QuestionResult] = field(default_factory=list)
    """Per retriever compared (or scored, for floors) and question scored now."""
    floors: list[FloorResult] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    not_compared: dict[str, str] = field(default_factory=dict)
    """Retrievers scored now that the gate left out, and why (not in the snapshot)."""
    warnings: list[str] = field(default_factory=list)
    """What a reader should know that does not change the verdict."""
    against: str | None = None
    """The snapshot's name (``regressions``)."""
    tolerance: float = 0
    k: int | None = None
    """The cutoff of the questions' own results (``top k``, and floors' reports)."""

    @property
    def retrievers(self) -> list[str]:
        """The retrievers whose questions were gated, in order."""
        return list(dict.fromkeys(q.retriever for q in self.questions))

    def compared(self) -> dict[str, list[str]]:
        """Per retriever, the questions compared."""
        out: dict[str, list[str]] = {r: [] for r in self.retrievers}
        for q in self.questions:
            if q.not_compared is None:
                out[q.retriever].append(q.question)
        return out

    def failed_questions(self) -> dict[str, list[QuestionResult]]:
        """Per retriever, the questions that failed (only those with one)."""
        out: dict[str, list[QuestionResult]] = {}
        for q in self.questions:
            if q.failed:
                out.setdefault(q.retriever, []).append(q)
        return out

    @property
    def failures(self) -> list[str]:
        """What fails the gate, one line each (empty when it passes or is refused)."""
        if self.refusals:
            return []
        if self.gate == "floors":
            return [f.text() for f in self.floors if f.missed]
        lines = []
        for r, failed in self.failed_questions().items():
            ranks = ", ".join(
                f"{q.question} {q.rank_then or '-'}->{q.rank_now or '-'}"
                if q.rank_then is not None
                else f"{q.question} {q.rank_now or '-'}"
                for q in failed[:5]
            )
            more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
            lines.append(f"{r}: {len(failed)} question(s) ({ranks}{more})")
        return lines

    @property
    def passed(self) -> bool:
        """Nothing refused and nothing failed."""
        return not self.refusals and not self.failures

    @property
    def exit_code(self) -> int:
        """0 passed, 1 failed, 2 refused (the CLI's exit codes)."""
        return 2 if self.refusals else 1 if self.failures else 0

    def refusal_message(self) -> str:
        """The refusals, one sentence each."""
        return "; ".join(r.text for r in self.refusals)

    def failure_message(self) -> str:
        """The failures as one line, headed by what failed."""
        if self.gate == "floors":
            return "below the floor: " + "; ".join(self.failures)
        if self.gate == "regressions":
            head = f"regressed since {self.against} (tolerance {self.tolerance:g} ranks): "
        else:
            head = f"no gold in the top {self.k}: "
        return head + "; ".join(self.failures)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` ``gate`` key."""
        return {
            "gate": self.gate,
            "passed": self.passed,
            "refusals": [{"rule": r.rule.key, "text": r.text} for r in self.refusals],
            "failures": self.failures,
            "compared": {r: len(qs) for r, qs in self.compared().items()},
            "not_compared": self.not_compared,
            "warnings": self.warnings,
        }


def _with_tag(tag: str | None) -> str:
    return f" with tag {tag!r}" if tag is not None else ""


def _held(counts: Mapping[str, int]) -> str:
    held = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items() if n)
    return held or "no questions"


def _run_refusals(
    rankings: Rankings | None, covered: Collection[str], workspace: str
) -> list[Refusal]:
    """The covered retrievers that did not run here, or cannot be made again."""
    if rankings is None:
        return []
    out = []
    missed = {n: why for n, why in rankings.not_run.items() if n in covered}
    if missed:
        first = next(iter(missed))
        reasons = "; ".join(f"{n}: {why}" for n, why in missed.items())
        out.append(
            Refusal(
                NOT_RUN,
                f"the gate covers {', '.join(missed)}, which did not run here ({reasons}). "
                "A gate never passes on what it did not run: trust the command in this job "
                f"(`goldpan trust {workspace} --yes` as a CI step), or give the code on the "
                f'command line (--run-command "CMD"={first} or --run FILE={first})',
            )
        )
    for n, why in rankings.replaced.items():
        if n in covered:
            out.append(
                Refusal(REPLACED_INPUT, f"the gate covers {n}, which cannot be scored: {why}")
            )
    return out


def _left_out(board: Scoreboard, names: Sequence[str]) -> list[QuestionResult]:
    """The questions with gold left out of ``board`` as not ranked yet, for each of ``names``.

    A question a retriever that will rank it has not ranked (for its inputs now) is left
    out of every retriever's means (:mod:`engine.ranked`): for the gate it was not compared.
    """
    unranked = {r: rs.not_ranked for r, rs in board.retrievers.items()}
    left = sorted(left_out(unranked, board.holding))
    return [QuestionResult(r, q, 0, not_compared="not ranked yet") for r in names for q in left]


def _at_k(board: Scoreboard, names: Sequence[str], k: int) -> list[QuestionResult]:
    """Each scored question's result at ``k``.

    One a retriever has not ranked (it cannot rank now:
    :attr:`~engine.scoring.RetrieverScores.lacks`) is not compared, never a failure.
    """
    return [
        QuestionResult(r, q, rank, failed=not 0 < rank <= k)
        if rank >= 0
        else QuestionResult(r, q, 0, not_compared="not ranked now")
        for r in names
        for q, rank in zip(
            board.question_ids, board.retrievers[r].first_gold_rank.tolist(), strict=True
        )
    ]


def floor_verdict(
    board: Scoreboard,
    floors: Sequence[Floor],
    *,
    k: int,
    rankings: Rankings | None = None,
    tag: str | None = None,
    workspace: str = "WS",
    min_judged: float = DEFAULT_MIN_JUDGED,
) -> Verdict:
    """The verdict of ``score --fail-under``: each floor against the means now.

    Also each question's result at ``k`` (a gold in the top k), for the reports. With no
    floor, the gate is that one (``top k``), as the pytest plugin without a snapshot runs.

    Args:
        board: the scores now.
        floors: the floors asked (empty: the questions' own gate at ``k``).
        k: the cutoff of each question's own result.
        rankings: how the rankings were made (those not run are refused when covered).
        tag: the ``--tag`` the board was scored with (named in a refusal).
        workspace: the workspace as the user named it (in the fix a refusal gives).
        min_judged: the least mean Judged@10 not warned about (:mod:`engine.ci.holes`).
    """
    gate = "floors" if floors else "top k"
    every = not floors or any(f.retriever is None for f in floors)
    asked = [f.retriever for f in floors if f.retriever is not None]
    covered = set(board.retrievers) if every else set(asked)
    not_run = set(rankings.not_run) | set(rankings.replaced) if rankings else set()
    ran = [r for r in board.retrievers if r not in not_run]
    verdict = Verdict(gate, questions=_at_k(board, ran, k) + _left_out(board, ran), k=k)
    unknown = sorted({r for r in asked if r not in board.retrievers})
    if unknown:
        verdict.refusals.append(
            Refusal(
                UNKNOWN_NAME,
                f"--fail-under names {', '.join(map(repr, unknown))}, which is not scored "
                f"here (scored: {', '.join(board.retrievers) or 'none'}); with --run or "
                "--run-command only those and the --retriever ones are scored",
            )
        )
    if not board.question_ids:
        head = "--fail-under: " if floors else ""
        todo = (
            "rank them first (goldpan pool)"
            if board.counts.get("not_ranked")
            else "label gold documents (or import qrels) first"
        )
        verdict.refusals.append(
            Refusal(
                NOTHING_COMPARED,
                f"{head}no question{_with_tag(tag)} is scored ({_held(board.counts)}), so "
                f"nothing was compared (a mean over no question reads 0); {todo}",
            )
        )
    verdict.refusals += _run_refusals(rankings, covered, workspace)
    for r in ran:  # no means: it lacks scored questions it cannot rank now
        lacks = board.retrievers[r].lacks
        if floors and r in covered and lacks:
            verdict.refusals.append(
                Refusal(
                    NOTHING_COMPARED,
                    lacking(r, lacks, "a floor on it compares nothing; rank them first")
                    + " (goldpan pool)",
                )
            )

    for f in floors:
        for r, rs in board.retrievers.items():
            means = rs.means
            if f.retriever in (None, r) and r in ran and means is not None and board.question_ids:
                verdict.floors.append(FloorResult(r, f.metric, f.value, means[f.metric]))
    verdict.warnings += [w.message() for w in hole_warnings(board, min_judged=min_judged)]
    return verdict


def regression_verdict(
    diff: SnapshotDiff,
    *,
    tolerance: float = 0,
    rankings: Rankings | None = None,
    named: Collection[str] = (),
    workspace: str = "WS",
) -> Verdict:
    """The verdict of a comparison with a snapshot: no question worse beyond ``tolerance``.

    Args:
        diff: the comparison (:func:`engine.ci.snapshots.diff_against`).
        tolerance: ranks a gold may slip before it counts (a lost gold always counts).
        rankings: how the rankings were made (those not run are refused when covered).
        named: retrievers the gate was asked for by name (``--run``/``--run-command``
            NAME, ``--retriever``, the API's name): each must be in the snapshot.
        workspace: the workspace as the user named it (in the fix a refusal gives).
    """
    verdict = Verdict("regressions", against=diff.against, tolerance=tolerance)
    snap = f"snapshot {diff.against}"
    for r in diff.missing:
        verdict.refusals.append(
            Refusal(
                MISSING_NOW,
                f"{r} is in {snap} but the workspace has no retriever {r} now (removed or "
                f"renamed): nothing of it was compared; give its code (--run FILE={r} or "
                f'--run-command "CMD"={r}), or save a new snapshot',
            )
        )
    holds = ", ".join(diff.snapshot_retrievers) or "none"
    for r in sorted(set(named) - set(diff.retrievers) - set(diff.missing)):
        verdict.refusals.append(
            Refusal(
                UNKNOWN_NAME,
                f"{snap} has no retriever {r} (it has: {holds}), so nothing of it was "
                "compared; check the name given (--run/--run-command NAME, --retriever, "
                "evaluate(name=...), --goldpan-name)",
            )
        )
    covered = set(diff.retrievers) | set(named)
    not_run = set(rankings.not_run) | set(rankings.replaced) if rankings else set()
    for r in diff.scored_now:
        if r not in diff.retrievers and r not in named:
            verdict.not_compared[r] = f"not in {snap}"
    for r, d in diff.retrievers.items():
        if r in not_run:  # refused below for that; nothing of it is listed
            continue
        if not d.compared:
            left = [f"{len(d.only_then)} scored only then", f"{len(d.only_now)} only now"]
            if d.not_ranked:
                left.append(f"{len(d.not_ranked)} not ranked yet")
            if d.not_ranked_now:
                left.append(f"{len(d.not_ranked_now)} not ranked by it, which cannot rank now")
            verdict.refusals.append(
                Refusal(
                    NOTHING_COMPARED,
                    f"{r}: no question is scored both in {snap} and now ({', '.join(left)}), "
                    "so nothing was compared; check the labels, --tag and that the snapshot "
                    "is of this test set, or save a new snapshot",
                )
            )
        moved = {m.question: m for m in d.regressed + d.improved}
        compared = set(d.compared)
        only_now = set(d.only_now)
        for q, now in d.ranks_now.items():
            if q in compared:
                then = moved[q].rank_then if q in moved else now
                verdict.questions.append(
                    QuestionResult(r, q, now, then, failed=is_worse(then, now, tolerance))
                )
            else:
                why = f"not in {snap}" if q in only_now else "not ranked now"
                verdict.questions.append(QuestionResult(r, q, now, not_compared=why))
        verdict.questions += [
            QuestionResult(r, q, 0, not_compared="not ranked yet") for q in d.not_ranked
        ]
    if not diff.retrievers and not verdict.refusals:
        verdict.refusals.append(
            Refusal(
                NOTHING_COMPARED,
                f"no retriever scored now is in {snap} (it has: {holds}), so nothing was compared",
            )
        )
    verdict.refusals += _run_refusals(rankings, covered, workspace)
    verdict.warnings += [w.message() for w in diff.warnings]  # its top 10 little judged
    return verdict
