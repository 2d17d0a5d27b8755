"""A labeling session's undo: changes grouped, reverted while the workspace still holds them.

A mixin of :class:`~engine.session.labeling.LabelingSession`, which keeps the undo stack and
commits each revert as it commits any change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from engine.session.state import Change, SessionHost
from engine.types import Label, Question, Stop, Verdict

if TYPE_CHECKING:
    pass


class _Superseded(Exception):
    """The row no longer holds what this session wrote (another session changed it)."""


class SessionUndo(SessionHost):
    """Undo of a session's own changes (a mixin of the session)."""

    if TYPE_CHECKING:

        def _edit(self, question_id: str, text: str, tags: Sequence[str] | None) -> Question: ...

    @contextlib.contextmanager
    def grouped(self) -> Iterator[None]:
        """Changes made inside are undone together, by one :meth:`undo`."""
        mark = len(self.undo_stack)
        yield
        changes = tuple(self.undo_stack[mark:])
        if len(changes) > 1:
            del self.undo_stack[mark:]
            self.undo_stack.append(Change("group", changes[0].question_id, None, changes))

    def undo(self) -> Change | None:
        """Revert this session's last change that still stands; None when none is left.

        Only what this session wrote is undone: a change whose row another session has
        changed since (the same annotator in another tab, an import) is dropped from the
        stack untouched, and the undo goes on to the change before it. A group is undone
        as far as its parts still stand.
        """
        while self.undo_stack:
            change = self.undo_stack.pop()
            parts = change.old if change.kind == "group" else (change,)
            assert isinstance(parts, tuple)
            undone = 0
            for part in reversed(parts):
                try:
                    self._revert(part, check=True)
                    undone += 1
                except _Superseded:
                    continue
            if undone:
                return change
        return None

    def _holds(self, change: Change) -> bool:
        """Whether the workspace still holds what ``change`` wrote (read now)."""
        q, ws = change.question_id, self.ws
        if change.kind == "label":
            found = [
                lab.grade
                for lab in ws.labels_for(q)
                if lab.annotator == self.annotator and lab.doc_id == change.doc_id
            ]
            return (found[0] if found else None) == change.new
        if change.kind == "verdict":
            mine = [
                (v.verdict, v.note) for v in ws.verdicts_for(q) if v.annotator == self.annotator
            ]
            return (mine[0] if mine else None) == change.new
        if change.kind == "stop":
            rules = [s.rule for s in ws.stops([q]) if s.annotator == self.annotator]
            return (rules[0] if rules else None) == change.new
        question = ws.question(q)
        return question is not None and question.text == change.new

    def _revert(self, change: Change, *, check: bool = False) -> None:
        """Write back what ``change`` replaced.

        With ``check``, only while the row still holds what the change wrote, checked in
        the transaction of the write (raises :class:`_Superseded` otherwise).
        """
        if check:
            with self.ws.transaction():
                if not self._holds(change):
                    raise _Superseded
                self._revert(change)
            return
        q = change.question_id
        if change.kind == "label":
            doc = change.doc_id
            assert doc is not None
            if change.old is None:
                self._commit(
                    q,
                    lambda: self.ws.delete_label(q, doc, self.annotator),
                    lambda s: s.with_label(doc, None),
                )
            else:
                grade = int(str(change.old))
                self._commit(
                    q,
                    lambda: self.ws.write_labels([Label(q, doc, self.annotator, grade)]),
                    lambda s: s.with_label(doc, grade),
                )
        elif change.kind == "verdict":
            if change.old is None:
                self._commit(
                    q,
                    lambda: self.ws.delete_verdict(q, self.annotator),
                    lambda s: s.with_verdict(None),
                )
            else:
                old = change.old
                assert isinstance(old, tuple)
                verdict = Verdict(q, self.annotator, str(old[0]), str(old[1]))
                self._commit(
                    q, lambda: self.ws.write_verdicts([verdict]), lambda s: s.with_verdict(verdict)
                )
        elif change.kind == "stop":
            if change.old is None:
                self._commit(
                    q,
                    lambda: self.ws.delete_stop(q, self.annotator),
                    lambda s: s.with_stop(None),
                )
            else:
                stop = Stop(q, self.annotator, str(change.old))
                self._commit(q, lambda: self.ws.write_stop(stop), lambda s: s.with_stop(stop))
        else:
            self._edit(q, str(change.old), None)
