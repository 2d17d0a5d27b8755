"""The rankings a score reads, and how each was made: what a gate may vouch for.

``goldpan score`` (and ``score --against``) scores the workspace's retrievers from their
cached rankings, after pooling what is stale, or the code given on the command line:
``--run FILE[=NAME]`` (a TREC run the CI job made) and ``--run-command "CMD"[=NAME]``
(run now, as a command retriever would be). Given rankings are held in memory
(:class:`~engine.types.CachedRun` per question, as the workspace would hand them out) and
given to :func:`~engine.scoring.score_workspace` / :func:`~engine.ci.snapshots.diff_against`;
the workspace is only read. A command typed by the user is theirs to trust: it runs
without the workspace trust record (which is for commands a workspace file names).

:func:`scored_rankings` decides, per retriever, whether its rankings were made now or
are cached and why that is valid (:attr:`Rankings.how`), and which did not run here or
cannot be vouched for (:attr:`Rankings.not_run`); :mod:`engine.ci.gate` refuses a gate
that covers one. (A cached ranking made for other inputs than now's is never scored:
:mod:`engine.ranked` counts its question as not ranked yet.) A workspace retriever that
reads a ranking the command line replaced (``--run today.run=mine`` where ``fz`` fuses
``mine``) is fused again now from the given rankings when it only recombines rankings
(:data:`MADE_AGAIN_KINDS`); any other (a reranker, which would load a model) is not run
(:attr:`Rankings.replaced`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.ranked import workspace_not_ranked
from engine.retrieve import (
    DEFAULT_DEPTH,
    STORED_KINDS,
    PrepareEnv,
    bases_of,
    build_retriever,
    trec_order,
)
from engine.retrieve.runner import RunReport, run_order
from engine.trust import COMMAND_KIND, is_untrusted_kind, not_trusted
from engine.types import CachedRun, RetrieverSpec
from engine.workspace import Workspace

Given = dict[str, CachedRun]
"""Question id -> ranking, for one retriever."""

MADE_AGAIN_KINDS = frozenset({"rrf", "fuse", "idboost"})
"""Kinds that only recombine their bases' rankings (no model, no program): made again in
memory when the command line replaces one of their bases."""


@dataclass
class GivenRuns:
    """The code under test given on the command line: retriever name -> value."""

    files: dict[str, str] = field(default_factory=dict)
    """``--run FILE=NAME``: the run file's path."""
    commands: dict[str, str] = field(default_factory=dict)
    """``--run-command "CMD"=NAME``: the command line."""

    def __bool__(self) -> bool:
        """True when anything was given."""
        return bool(self.files or self.commands)

    def names(self) -> set[str]:
        """The retrievers given."""
        return {*self.files, *self.commands}


@dataclass
class Rankings:
    """The rankings a score reads: given now, and how each retriever's were made."""

    given: dict[str, dict[str, CachedRun]] = field(default_factory=dict)
    """Retriever -> question -> ranking, for those made in memory now (given on the
    command line, or fused again from given rankings)."""
    how: dict[str, str] = field(default_factory=dict)
    """Retriever -> ranked now, or cached and why that is valid."""
    not_run: dict[str, str] = field(default_factory=dict)
    """Retrievers that did not run here, or whose cached rankings cannot be vouched for,
    and why (a gate covering one is refused)."""
    replaced: dict[str, str] = field(default_factory=dict)
    """Retrievers that read a ranking the command line replaced and cannot be made again
    from it here, and why (a gate covering one is refused)."""

    def cannot_rank(self) -> set[str]:
        """The retrievers that cannot rank now: :attr:`not_run` and :attr:`replaced`.

        Their unranked questions hold no other retriever's out of a score
        (:func:`engine.ranked.holding`).
        """
        return set(self.not_run) | set(self.replaced)


def rankings_from_file(ws: Workspace, path: Path, name: str) -> Given:
    """A TREC run file's rankings of the workspace's questions, as ``import run`` reads it.

    Every line is checked (ids unknown to the workspace are refused, file and line named);
    a question the file lacks gets an empty ranking (a miss).

    Raises:
        IngestError: a bad line or an unknown question or document.
    """
    # the importers (YAML, every format's reader) load only for a score that reads a file
    from engine.formats.trec import read_trec_run, run_scores
    from engine.ingest import _check_run_refs as check_run_refs

    lines = read_trec_run(path)
    check_run_refs(ws, path, lines)
    ranked = {qid: trec_order(s, len(s)) for qid, s in run_scores(lines).items()}
    out: Given = {}
    for qid in ws.question_ids():
        ids, scores = ranked.get(qid, ([], []))
        out[qid] = CachedRun(name, qid, tuple(ids), tuple(scores), 0.0, "", len(ids))
    return out


def rankings_from_command(
    ws: Workspace, command: str, name: str, *, depth: int = DEFAULT_DEPTH, timeout: float = 600.0
) -> Given:
    """Run ``command`` now, as a ``command`` retriever would be, over every question.

    Raises:
        BadInput: a command line that cannot be split.
        RetrieverError: it failed, timed out or printed a bad run (line named).
    """
    spec = RetrieverSpec(name, COMMAND_KIND, {"command": command, "timeout": timeout})
    return _rank_now(ws, spec, {}, depth)


def _rank_now(
    ws: Workspace, spec: RetrieverSpec, base_runs: Mapping[str, Mapping[str, CachedRun]], depth: int
) -> Given:
    """``spec``'s rankings of every question, made now in memory from ``base_runs``."""
    retriever = build_retriever(spec)
    retriever.prepare(ws.docs(), {}, PrepareEnv())
    questions = ws.questions()
    base = [
        {
            b: (list(r.doc_ids), list(r.scores))
            for b, runs in base_runs.items()
            if (r := runs.get(q.id))
        }
        for q in questions
    ]
    started = time.perf_counter()
    rankings = retriever.rank(questions, depth, base)
    ms = (time.perf_counter() - started) * 1000.0 / max(1, len(questions))
    return {
        q.id: CachedRun(spec.name, q.id, tuple(ids), tuple(scores), ms, "", depth)
        for q, (ids, scores) in zip(questions, rankings, strict=True)
    }


def scored_rankings(
    ws: Workspace,
    given: GivenRuns,
    wanted: Sequence[str],
    report: RunReport | None,
    not_pooled: str,
) -> Rankings:
    """What a score reads for ``wanted`` (the workspace's retrievers scored) and ``given``.

    Args:
        ws: the workspace.
        given: the rankings given on the command line (made here, now).
        wanted: the workspace's retrievers to score beside them (by name).
        report: what pooling ``wanted`` did; None when nothing was pooled (then their
            cached rankings are read as they are).
        not_pooled: why nothing was pooled (``--no-pool``, a read-only workspace).

    Raises:
        IngestError: a bad ``--run`` file. RetrieverError: a ``--run-command`` that failed.
    """
    out = Rankings()
    specs = {s.name: s for s in ws.retrievers()}
    own = [n for n in wanted if n not in given.names()]
    if report is not None:
        out.how.update({n: w for n, w in report.how.items() if n in own})
        for n, what in report.untrusted.items():
            kind = report.untrusted_kinds.get(n, COMMAND_KIND)
            out.not_run[n] = f"{not_trusted(kind, what)} on this machine"
        out.not_run.update(report.errors)
    else:
        for n in own:
            kind = specs[n].kind if n in specs else ""
            out.how[n] = (
                "imported run (never run)" if kind in STORED_KINDS else f"cached ({not_pooled})"
            )
            why = _not_vouched(specs, n, not_pooled)
            if why:
                out.not_run[n] = why
    for n, reason in out.not_run.items():
        if n in own:
            out.how[n] = f"not run: {reason}"
    for name, path in given.files.items():
        out.given[name] = rankings_from_file(ws, Path(path), name)
        out.how[name] = f"run file {path} (--run)"
    for name, command in given.commands.items():
        out.given[name] = rankings_from_command(ws, command, name)
        out.how[name] = "ranked now (--run-command)"
    if given:
        _make_again(ws, specs, own, out, not_pooled)
    return out


def _not_vouched(specs: Mapping[str, RetrieverSpec], name: str, not_pooled: str) -> str | None:
    """Why ``name``'s cached rankings, read without pooling, cannot be vouched for.

    A kind that runs the team's code or asks an engine (or a retriever that reads one)
    can change while its inputs do not. A built-in's cached ranking made for other inputs
    than now's is not scored at all (:mod:`engine.ranked`: not ranked yet).
    """
    spec = specs.get(name)
    if spec is None or spec.kind in STORED_KINDS:
        return None
    order = run_order(list(specs.values()), [spec])
    if any(is_untrusted_kind(s.kind) for s in order):
        return f"its rankings are cached and it was not run ({not_pooled})"
    return None


def _make_again(
    ws: Workspace,
    specs: Mapping[str, RetrieverSpec],
    own: Sequence[str],
    out: Rankings,
    not_pooled: str,
) -> None:
    """Make again, from the given rankings, the wanted retrievers that read one of them.

    Their other bases are read from the workspace as they are, so each must be vouched
    for (:func:`_not_vouched`) and have ranked every question for its inputs now
    (:mod:`engine.ranked`), or the fusion is not run.
    """
    made = dict(out.given)
    blocked: dict[str, str] = {}  # retriever -> why it cannot be made again
    chosen = [specs[n] for n in own if n in specs]
    for spec in run_order(list(specs.values()), chosen):
        if spec.name in made:  # given on the command line: replaced, not derived
            continue
        bases = bases_of(spec)
        replaced = [b for b in bases if b in made or b in blocked]
        if not replaced:
            continue
        if spec.kind not in MADE_AGAIN_KINDS:
            blocked[spec.name] = (
                f"it reads {replaced[0]}, whose rankings the command line replaced, and a "
                f"{spec.kind} retriever is not made again here; give its rankings too "
                f"(--run FILE={spec.name})"
            )
        elif broken := [b for b in bases if b in blocked]:
            blocked[spec.name] = f"it reads {broken[0]}, which cannot be made again here"
        elif unvouched := [
            (b, why) for b in bases if b not in made and (why := _not_vouched(specs, b, not_pooled))
        ]:
            out.not_run[spec.name] = f"it reads {unvouched[0][0]}: {unvouched[0][1]}"
        elif behind := {
            b: len(qs)
            for b, qs in workspace_not_ranked(ws, [b for b in bases if b not in made]).items()
            if qs
        }:
            b, n = next(iter(behind.items()))
            out.not_run[spec.name] = (
                f"it reads {b}, which has not ranked {n} question(s) for their inputs now "
                f"({not_pooled}; goldpan pool ranks them)"
            )
        else:
            base_runs = {b: made[b] if b in made else ws.runs(b) for b in bases}
            made[spec.name] = _rank_now(ws, spec, base_runs, DEFAULT_DEPTH)
            if spec.name in own:
                out.given[spec.name] = made[spec.name]
                out.how[spec.name] = f"fused again now from the given {', '.join(replaced)}"
                out.not_run.pop(spec.name, None)
            continue
        if spec.name in own:
            if spec.name in blocked:  # one reason is enough: it cannot be made again
                out.not_run.pop(spec.name, None)
            why = blocked.get(spec.name) or out.not_run[spec.name]
            out.how[spec.name] = f"not run: {why}"
    out.replaced.update({n: why for n, why in blocked.items() if n in own})


def winners(
    ws: Workspace, rankings: Rankings, names: Sequence[str], question_ids: Sequence[str]
) -> dict[str, dict[str, str | None]]:
    """Per retriever and question, the document ranked first (what a report shows)."""
    out: dict[str, dict[str, str | None]] = {}
    for name in names:
        runs: Mapping[str, CachedRun] = rankings.given.get(name) or ws.runs(name, question_ids)
        out[name] = {
            q: (r.doc_ids[0] if (r := runs.get(q)) is not None and r.doc_ids else None)
            for q in question_ids
        }
    return out
