"""The progress line of the label and questions screens: how far along you are."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from rich.text import Text

from engine.grades import is_relevant
from engine.session.labeling import LabelingSession, QuestionState
from tui.literal import visible


def next_question(order: Sequence[str], current: str | None) -> str | None:
    """The question after ``current`` in ``order`` (what `]` opens); None after the last."""
    if not order:
        return None
    if current is None or current not in order:
        return order[0]
    i = list(order).index(current)
    return order[i + 1] if i + 1 < len(order) else None


def next_unjudged(order: Sequence[str], current: str | None, judged: set[str]) -> str | None:
    """The first question after ``current`` in ``order`` that is not in ``judged``."""
    items = list(order)
    start = items.index(current) + 1 if current in items else 0
    return next((q for q in items[start:] if q not in judged), None)


def progress_text(
    session: LabelingSession,
    order: Sequence[str],
    current: str | None,
    *,
    advance: bool | None = None,
    handed_out: bool = False,
    viewer: bool = False,
) -> Text:
    """``you: 12/49 questions judged · q05: 3/14 candidates · ] opens q06 · auto-advance on``.

    "Judged" is :func:`engine.counters.is_judged` (a verdict, or every candidate graded).
    Questions a retriever that will rank them has not ranked yet (:mod:`engine.ranked`:
    their candidates are still to come) are counted after it, and the current one says so.
    ``advance`` is shown when given (the label screen, where `m` toggles it);
    ``handed_out``: served, `]` takes the next question the server hands out, not the next
    of ``order``; a ``viewer`` judges nothing, so the line says where they are instead.
    """
    if viewer:
        return _viewer_text(session, order, current)
    total = len(session.live.question_ids)
    mine = len(session.judged_questions() & set(session.live.question_ids))
    out = Text.assemble(
        ("you: ", "dim"),
        (f"{mine}/{total}", "bold"),
        (" questions judged", "dim"),
    )
    waiting = session.live.held()  # candidates still to come: a retriever will rank it
    if waiting:
        out.append(" · ", "dim")
        out.append(str(len(waiting)), "bold yellow")
        out.append(" not ranked yet", "dim")
    if current is not None and current in session.live.golds:
        pool = [c.doc_id for c in session.candidates(current)]
        graded = session.my_grades(current)
        done = sum(1 for d in pool if d in graded)
        out.append(" · ", "dim")
        out.append(visible(current), "bold")
        out.append(": ", "dim")
        out.append(f"{done}/{len(pool)}", "bold green" if pool and done == len(pool) else "bold")
        out.append(" candidates judged", "dim")
        if current in waiting:
            out.append(" (not ranked yet)", "yellow")
        verdict = session.my_verdict(current)
        if verdict is not None:
            out.append(f" ({verdict.verdict})", "dim")
    out.append(" · ", "dim")
    if handed_out:
        out.append("] takes the next question handed out to you", "dim")
    else:
        _append_next(out, order, current)
    if advance is not None:
        out.append(" · ", "dim")
        out.append("auto-advance ", "dim")
        out.append("on" if advance else "off", "bold green" if advance else "bold yellow")
        out.append(" (m)", "dim")
    return out


def _append_next(out: Text, order: Sequence[str], current: str | None) -> None:
    following = next_question(order, current)
    if following is None:
        out.append("] last question", "yellow")
    else:
        out.append("] opens ", "dim")
        out.append(visible(following), "bold")


def _viewer_text(session: LabelingSession, order: Sequence[str], current: str | None) -> Text:
    """A viewer's line: read-only, the question's status, what `]` opens."""
    out = Text("viewing, read-only", "dim")
    if current is not None and current in session.live.golds:
        out.append(" · ", "dim")
        out.append(visible(current), "bold")
        out.append(": ", "dim")
        out.append(session.live.golds[current].status.value, "bold")
    out.append(" · ", "dim")
    _append_next(out, order, current)
    return out


def stopped_text(stopped: Mapping[str, int], among: Collection[str] | None = None) -> str:
    """`` · 3 stopped (21 not judged)``: stopped questions and their candidates not judged.

    ``stopped`` is :meth:`engine.session.labeling.LabelingSession.stopped`; ``among``: only these
    questions (a tag's). Empty when none is stopped.
    """
    left = [n for q, n in stopped.items() if among is None or q in among]
    if not left:
        return ""
    return f" · {len(left)} stopped ({sum(left)} not judged)"


def you_text(state: QuestionState, session: LabelingSession) -> str:
    """What you said of the question: your verdict, else what your grades add up to.

    "judged" is :func:`engine.counters.is_judged`, as the progress line counts it.
    """
    if state.verdict is not None:
        return state.verdict.verdict
    if not state.mine:
        return "-"
    relevant = sum(1 for g in state.mine.values() if is_relevant(g))
    found = f"{relevant} relevant" if relevant else "none relevant"
    if state.question_id in session.judged_questions():
        return f"judged, {found}"
    return f"{found} so far"
