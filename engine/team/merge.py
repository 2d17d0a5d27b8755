"""Merging workspaces labeled separately (``goldpan merge OUT IN [IN ...]``).

Every workspace must hold the same corpus. Questions are matched by id; labels and
verdicts keep their annotators; adjudications are copied; retrievers missing from OUT are
added with the same spec, while cached runs are not copied (the next pool recomputes them).

When the sources disagree on a row, the kept value is chosen as follows, and every
disagreement is listed in :attr:`MergeReport.conflicts`. The sources are OUT (when it
already exists) followed by the inputs, in the order given.

- A question's text: the first source's (OUT's, or the first input's holding it). Its
  labels are copied all the same: the report tells people which text they were made on.
- A label (question, document, annotator), a verdict (question, annotator) or an
  adjudication (question): the value written last, when every disagreeing source's time
  can be read, else the first source's. The time is read from each workspace's event log
  (the newest event for that row, provided it set the value now held): the log is the
  only public record of when a row was written. A row written by an earlier merge carries
  the time of that merge, not of the original judgment.
- A retriever spec: the first source's.

Deletions do not travel: a label removed from one input but kept in another is kept.
Only rows that differ from OUT are written, so merging the same inputs again changes
nothing, not even the event log. The merge is one transaction on OUT: if it fails, OUT is
left as it was. A new OUT is built aside (a temp file in its folder) and renamed into place
when the merge succeeded, so a merge that fails or is killed leaves no OUT.

Retrievers that run a program or send questions out (``command``, the search engines)
brought into OUT are listed in :attr:`MergeReport.commands_added` and stay untrusted there
(:mod:`engine.trust`): OUT never runs a colleague's program, nor sends its questions to a
colleague's address, unasked.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, TypeVar

from engine.formats.outfiles import atomic_database
from engine.trust import is_untrusted_kind, what_runs
from engine.types import Adjudication, Label, Question, RetrieverSpec, Verdict, canonical_json
from engine.workspace import JudgmentTimes, Workspace, WorkspaceError, identify
from engine.workspace_setup import new_workspace

__all__ = ["MergeReport", "merge_workspaces"]

T = TypeVar("T")
K = TypeVar("K")


@dataclass
class MergeReport:
    """What a merge changed in OUT, and where the sources disagreed."""

    questions_added: int = 0
    labels_added: int = 0
    labels_changed: int = 0
    verdicts_added: int = 0
    verdicts_changed: int = 0
    adjudications_added: int = 0
    adjudications_changed: int = 0
    retrievers_added: int = 0
    created: bool = False
    """OUT did not exist and was created from the first input's corpus."""
    conflicts: list[str] = field(default_factory=list)
    """One line per disagreement, saying what each source held and what was kept."""
    commands_added: list[tuple[str, str]] = field(default_factory=list)
    """(name, what it runs or sends: :func:`engine.trust.what_runs`) of each retriever of
    an untrusted kind that OUT did not have: never trusted by the merge (see
    :mod:`engine.trust`), so skipped until the user reviews it."""

    @property
    def changed(self) -> bool:
        """Whether anything was written to OUT."""
        counts = (
            self.questions_added,
            self.labels_added,
            self.labels_changed,
            self.verdicts_added,
            self.verdicts_changed,
            self.adjudications_added,
            self.adjudications_changed,
            self.retrievers_added,
        )
        return self.created or any(counts)

    def summary(self) -> str:
        """One line for people."""
        parts = []
        if self.created:
            parts.append("workspace created")
        for what, added, changed in (
            ("questions", self.questions_added, 0),
            ("labels", self.labels_added, self.labels_changed),
            ("verdicts", self.verdicts_added, self.verdicts_changed),
            ("adjudications", self.adjudications_added, self.adjudications_changed),
            ("retrievers", self.retrievers_added, 0),
        ):
            if added or changed:
                parts.append(f"{what}: {added} added" + (f", {changed} changed" if changed else ""))
        if self.commands_added:
            n = len(self.commands_added)
            parts.append(
                f"{n} retriever{'' if n == 1 else 's'} running a command or sending questions "
                "out brought in, untrusted"
            )
        if self.conflicts:
            n = len(self.conflicts)
            parts.append(f"{n} conflict{'' if n == 1 else 's'}")
        return "; ".join(parts) or "nothing new: it held everything the others hold already"


class _Source:
    """One workspace taking part in a merge, with the times its rows were last written."""

    def __init__(self, name: str, ws: Workspace) -> None:
        self.name = name
        self.ws = ws

    @cached_property
    def _times(self) -> JudgmentTimes:
        return self.ws.judgment_times()

    def label_time(self, lab: Label) -> str | None:
        """When this label got its grade, or None when the log does not say."""
        return self._times.label_time(lab)

    def verdict_time(self, v: Verdict) -> str | None:
        """When this verdict was last written, or None when the log does not say."""
        return self._times.verdict_time(v)

    def adjudication_time(self, adj: Adjudication) -> str | None:
        """When this adjudication was last written, or None when the log does not say."""
        return self._times.adjudication_time(adj)


def _parse_time(stamp: str | None) -> dt.datetime | None:
    if stamp is None:
        return None
    try:
        when = dt.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)


@dataclass
class _Candidate(Generic[T]):
    source: _Source
    value: T
    time: str | None


def _resolve(
    what: str,
    candidates: Sequence[_Candidate[T]],
    describe: Callable[[T], str],
    conflicts: list[str],
) -> T:
    """The value to keep among the sources' values for one row (see the module docstring)."""
    first = candidates[0]
    if all(c.value == first.value for c in candidates[1:]):
        return first.value
    times = [t for t in (_parse_time(c.time) for c in candidates) if t is not None]
    if len(times) == len(candidates):
        # Latest time wins; on a tie the earlier source does.
        best = max(range(len(candidates)), key=lambda i: (times[i], -i))
        kept, why = candidates[best], "the latest"
    else:
        kept, why = first, "the first source's: not every time could be read"
    held = ", ".join(
        f"{c.source.name} {describe(c.value)}" + (f" ({c.time})" if c.time else "")
        for c in candidates
    )
    conflicts.append(f"{what}: {held}; kept {kept.source.name}'s {describe(kept.value)}, {why}")
    return kept.value


def _describe_verdict(v: Verdict) -> str:
    return v.verdict + (f" ({v.note!r})" if v.note else "")


def _describe_adjudication(adj: Adjudication) -> str:
    gold = "no answer" if adj.no_answer else canonical_json(dict(adj.gold))
    return f"{gold} by {adj.by}" + (f" ({adj.note!r})" if adj.note else "")


def _names(out_path: Path, inputs: Sequence[Path]) -> list[str]:
    """How the report names OUT and each input: file names, or paths when names repeat."""
    paths = [out_path, *inputs]
    names = [p.name for p in paths]
    if len({str(p) for p in paths}) != len(set(names)):
        return [str(p) for p in paths]
    return names


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def _check_corpus(ref: _Source, other: _Source) -> None:
    """Raise naming the first document (in id order) that differs between two corpora."""
    if ref.ws.corpus_hash() == other.ws.corpus_hash():
        return
    ref_docs = {d.id: d.hash for d in ref.ws.docs()}
    other_docs = {d.id: d.hash for d in other.ws.docs()}
    for doc_id in sorted(ref_docs.keys() | other_docs.keys()):
        if doc_id not in other_docs:
            why = f"document {doc_id!r} is in {ref.name} but not in {other.name}"
        elif doc_id not in ref_docs:
            why = f"document {doc_id!r} is in {other.name} but not in {ref.name}"
        elif ref_docs[doc_id] != other_docs[doc_id]:
            why = f"document {doc_id!r} differs between {ref.name} and {other.name}"
        else:
            continue
        raise WorkspaceError(
            f"cannot merge {other.name}: the corpus must be the same in every workspace, but {why}"
        )


def merge_workspaces(out_path: Path, inputs: Sequence[Path]) -> MergeReport:
    """Merge the questions, labels, verdicts and adjudications of ``inputs`` into OUT.

    Args:
        out_path: the workspace to merge into; created (with the first input's documents
            and retrievers) when it does not exist.
        inputs: the workspaces to merge, opened read-only; earlier ones win ties.

    Returns:
        What changed in OUT, and every conflict between the sources.

    Raises:
        WorkspaceError: no input, an input is OUT itself, a workspace cannot be opened,
            or the corpora differ (the message names the first differing document).
    """
    out_path, inputs = Path(out_path), [Path(p) for p in inputs]
    if not inputs:
        raise WorkspaceError("nothing to merge: give at least one input workspace")
    for p in inputs:
        if _same_file(p, out_path):
            raise WorkspaceError(f"cannot merge {p} into itself")
    for p in ([out_path] if out_path.exists() else []) + inputs:
        if p.exists() and not p.is_dir():
            identify(p)  # every file is goldpan's before any is opened
    out_name, *in_names = _names(out_path, inputs)
    sources: list[_Source] = []
    try:
        for name, p in zip(in_names, inputs, strict=True):
            sources.append(_Source(name, Workspace.open(p, readonly=True)))
            # A row naming what is gone would fail OUT's foreign keys half-way: say which
            # input is damaged, before anything is written.
            dangling = sources[-1].ws.foreign_key_problems(1)
            if dangling:
                raise WorkspaceError(
                    f"{p}: {dangling[0]} (the workspace is damaged); nothing was written. "
                    f"`goldpan check {p}` lists every problem"
                )
        if out_path.exists():
            with Workspace.open(out_path) as out:
                return _merge_into(_Source(out_name, out), sources, created=False)
        for src in sources[1:]:  # checked before the file exists, so a refusal leaves none
            _check_corpus(sources[0], src)
        return _merge_into_new(out_path, out_name, sources, inputs)
    finally:
        for src in sources:
            src.ws.close()


def _merge_into_new(
    out_path: Path, out_name: str, sources: Sequence[_Source], inputs: Sequence[Path]
) -> MergeReport:
    """Build the new OUT aside (a temp file in its folder) and move it into place whole.

    :func:`engine.formats.outfiles.atomic_database` does it, never over a file that appeared
    meanwhile, nor over an input's side file.

    A merge killed half-way (``kill -9``, a power cut) leaves no OUT, only its temp file
    (``.OUT.merging-PID.tmp``), which the next merge into the same OUT removes once its
    process is gone.
    """
    with atomic_database(out_path, protect=inputs, label="merging") as tmp:
        out = new_workspace(tmp)
        try:
            report = _merge_into(_Source(out_name, out), sources, created=True)
            out.checkpoint()  # every page in the file itself: the -wal is not moved with it
        finally:
            out.close()
    return report


def _merge_into(out: _Source, sources: Sequence[_Source], *, created: bool) -> MergeReport:
    report = MergeReport(created=created)
    ws = out.ws
    with ws.transaction():
        if created:
            ws.write_docs(sources[0].ws.docs())
            _reset_retrievers(ws, sources[0].ws.retrievers())
            report.commands_added = [
                (s.name, what_runs(s)) for s in ws.retrievers() if is_untrusted_kind(s.kind)
            ]
        else:
            for src in sources:
                _check_corpus(out, src)
        # An existing OUT is the first source: its rows win unless an input's are newer.
        everyone = list(sources) if created else [out, *sources]
        report.retrievers_added = _merge_retrievers(
            out, everyone, report.conflicts, report.commands_added
        )
        report.questions_added = _merge_questions(out, everyone, report.conflicts)
        report.labels_added, report.labels_changed = _merge_rows(
            {(x.question_id, x.doc_id, x.annotator): x for x in ws.labels()},
            _collect(
                everyone,
                lambda s: s.ws.labels(),
                lambda x: (x.question_id, x.doc_id, x.annotator),
                _Source.label_time,
            ),
            lambda k: f"label {k[0]}/{k[1]} by {k[2]}",
            lambda x: str(x.grade),
            lambda rows: ws.write_labels(rows, event="merge"),
            report.conflicts,
        )
        report.verdicts_added, report.verdicts_changed = _merge_rows(
            {(x.question_id, x.annotator): x for x in ws.verdicts()},
            _collect(
                everyone,
                lambda s: s.ws.verdicts(),
                lambda x: (x.question_id, x.annotator),
                _Source.verdict_time,
            ),
            lambda k: f"verdict on {k[0]} by {k[1]}",
            _describe_verdict,
            lambda rows: ws.write_verdicts(rows, event="merge"),
            report.conflicts,
        )
        report.adjudications_added, report.adjudications_changed = _merge_rows(
            {x.question_id: x for x in ws.adjudications()},
            _collect(
                everyone,
                lambda s: s.ws.adjudications(),
                lambda x: x.question_id,
                _Source.adjudication_time,
            ),
            lambda k: f"adjudication of {k}",
            _describe_adjudication,
            lambda rows: _write_adjudications(ws, rows),
            report.conflicts,
        )
        if report.changed:
            names = ", ".join(s.name for s in sources)
            ws.log_event("merge", "merge", f"{names}: {report.summary()}")
    return report


def _reset_retrievers(ws: Workspace, specs: Sequence[RetrieverSpec]) -> None:
    """Give a new OUT exactly the first input's retrievers, in its order."""
    if ws.retrievers() == list(specs):
        return
    for spec in ws.retrievers():
        ws.remove_retriever(spec.name)
    for spec in specs:
        ws.add_retriever(spec)


def _merge_retrievers(
    out: _Source,
    everyone: Sequence[_Source],
    conflicts: list[str],
    commands: list[tuple[str, str]],
) -> int:
    kept: dict[str, tuple[_Source, RetrieverSpec]] = {s.name: (out, s) for s in out.ws.retrievers()}
    added = 0
    for src in everyone:
        for spec in src.ws.retrievers():
            if spec.name not in kept:
                out.ws.add_retriever(spec)
                if is_untrusted_kind(spec.kind):
                    commands.append((spec.name, what_runs(spec)))
                kept[spec.name] = (src, spec)
                added += 1
            elif kept[spec.name][1] != spec:
                holder, old = kept[spec.name]
                conflicts.append(
                    f"retriever {spec.name}: {holder.name} has {old.kind} "
                    f"{canonical_json(dict(old.params))}, {src.name} has {spec.kind} "
                    f"{canonical_json(dict(spec.params))}; kept {holder.name}'s"
                )
    return added


def _merge_questions(out: _Source, everyone: Sequence[_Source], conflicts: list[str]) -> int:
    by_id: dict[str, list[tuple[_Source, Question]]] = {}
    for src in everyone:
        for q in src.ws.questions():
            by_id.setdefault(q.id, []).append((src, q))
    known = set(out.ws.question_ids())
    new: list[Question] = []
    for qid in sorted(by_id):
        (first_src, first), *rest = by_id[qid]
        differing = [(s, q) for s, q in rest if q.text != first.text]
        if differing:
            others = "; ".join(f"{s.name} has {q.text!r}" for s, q in differing)
            conflicts.append(
                f"question {qid}: the text differs; kept {first_src.name}'s {first.text!r}; "
                f"{others}"
            )
        if qid not in known:
            new.append(first)
    added, _, _ = out.ws.write_questions(new)
    return added


def _collect(
    everyone: Sequence[_Source],
    rows: Callable[[_Source], Iterable[T]],
    key: Callable[[T], K],
    time: Callable[[_Source, T], str | None],
) -> dict[K, list[_Candidate[T]]]:
    """Every source's value for each row key, in source order (times read lazily)."""
    found: dict[K, list[tuple[_Source, T]]] = {}
    for src in everyone:
        for row in rows(src):
            found.setdefault(key(row), []).append((src, row))
    out: dict[K, list[_Candidate[T]]] = {}
    for k, held in found.items():
        first = held[0][1]
        disagree = any(row != first for _, row in held[1:])
        # Only a disagreement needs times, and reading them means reading the event log.
        out[k] = [_Candidate(s, row, time(s, row) if disagree else None) for s, row in held]
    return out


def _merge_rows(
    current: Mapping[K, T],
    candidates: Mapping[K, Sequence[_Candidate[T]]],
    what: Callable[[K], str],
    describe: Callable[[T], str],
    write: Callable[[list[T]], Any],
    conflicts: list[str],
) -> tuple[int, int]:
    """Write each row whose kept value differs from OUT's; returns (added, changed)."""
    rows: list[T] = []
    added = changed = 0
    for k in sorted(candidates, key=repr):
        kept = _resolve(what(k), candidates[k], describe, conflicts)
        old = current.get(k)
        if old is None:
            added += 1
        elif old != kept:
            changed += 1
        else:
            continue
        rows.append(kept)
    if rows:
        write(rows)
    return added, changed


def _write_adjudications(ws: Workspace, rows: Iterable[Adjudication]) -> None:
    for adj in rows:
        ws.write_adjudication(adj)
