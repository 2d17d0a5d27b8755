"""The write screen: author a question blind (no document title or text is ever shown)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Footer, Header, Input, Label, ProgressBar, Static
from textual.worker import get_current_worker

from engine.analysis.overlap import EASY_THRESHOLD, Overlap, TitleOverlap
from engine.workspace import Workspace
from tui.actions import Command, bindings
from tui.literal import visible
from tui.screens.base import GoldpanScreen
from tui.screens.modals import ConfirmScreen

SUGGESTED_TAGS = ("easy", "hard", "paraphrase", "partial-id", "conditional")
"""Tags offered on a workspace whose questions have none yet."""
GENERIC_PLACEHOLDER = "Ask the way a user would, without looking at any document"


def workspace_tags(tag_lists: Iterable[Sequence[str]], most: int = 8) -> list[str]:
    """The workspace's own tags, most used first (ties by name)."""
    counts = Counter(t for tags in tag_lists for t in tags)
    return [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][:most]


class WriteScreen(GoldpanScreen):
    """Write a question the way a user would ask it, without looking at the corpus."""

    HELP = """
## Write

Write the question **before** looking at any document: questions written while reading
a document copy its words and make an easy test where every method scores about 1.0.
This screen never shows a document title or text.

The **overlap meter** shows the highest share of your question's words (whole words and
Hangul bigrams) found in any one document title, without saying which. Above 60% the
question is likely easy: rephrase it the way a user who does not know the title would.

Tags (comma separated): the field suggests this workspace's own tags, most used first;
`easy` and `hard` feed the review's by-tag panel. `write.save` saves: the question is pooled
by every retriever and opens for judging. `write.leave` goes back to the screen before
(asking first when there is unsaved text).

**From the query log** (`goldpan import querylog WS FILE` without `--sample` stores one):
`write.next_log` puts the most frequent query not decided yet in the editor, tagged `from-log`
and its frequency band. Keep it as the user typed it, or rewrite it (the user's text
stays in the question's history), and save with `write.save`; `write.discard_log` discards it (a
duplicate, not a question, personal data). Still blind: no document is shown.
"""

    AREA = "Write"
    LEAVE = (
        "`write.leave` goes back to the screen before (it asks first when there is unsaved text)"
    )
    ACTIONS = (
        Command(
            "ctrl+s",
            "save",
            "Save and judge",
            "Save the question, pool it and open it for judging",
            "write.save",
            title="Write: save and judge",
        ),
        Command(
            "escape",
            "leave",
            "Leave",
            "Back to the screen before (asks first when there is unsaved text)",
            "write.leave",
            title="Write: leave",
        ),
        Command(
            "ctrl+n",
            "next_from_log",
            "Next from log",
            "Put the next query of the imported query log in the editor",
            "write.next_log",
            title="Write: next query from the log",
            when="log_waiting",
        ),
        Command(
            "ctrl+t",
            "discard_log",
            "Discard log query",
            "Discard the query from the log and show the next one",
            "write.discard_log",
            title="Write: discard the query from the log",
            when="log_in_editor",
        ),
    )
    BINDINGS = bindings(ACTIONS)

    def compose(self) -> ComposeResult:
        """Question, tags, overlap meter."""
        yield Header()
        with Vertical(id="write-form"):
            yield Label(Text("Question (written blind: no document is shown here)", style="bold"))
            yield Input(placeholder=GENERIC_PLACEHOLDER, id="write-text")
            yield Label(Text("Tags", style="bold"))
            yield Input(placeholder=", ".join(SUGGESTED_TAGS), id="write-tags")
            yield Label(Text("Overlap with the closest document title", style="bold"))
            yield ProgressBar(total=100, show_eta=False, id="overlap-bar")
            yield Static(id="overlap-note")
        yield Footer()

    @dataclass
    class Measured(Message):
        """The overlap of ``text`` with the closest title was measured."""

        text: str
        overlap: Overlap

    def on_mount(self) -> None:
        """Focus the editor; index the titles (never displayed) in a worker."""
        self._titles: TitleOverlap | None = None
        self._log_row: dict[str, object] | None = None  # the logged query being written
        self._log_waiting = self.gp.session.next_log_query() is not None
        self._titles_lock = threading.Lock()  # one build, even when a keystroke cancels it
        for field in self.query(Input):
            field.cursor_blink = self.gp.blink
        self.query_one("#write-text", Input).focus()
        self.query_one("#overlap-note", Static).update(Text("Indexing titles…", style="dim"))
        self.measure("")

    def redraw(self) -> None:
        """Placeholder and tag suggestions from this workspace's own questions."""
        super().redraw()
        if not self.is_mounted:
            return
        questions = self.gp.session.questions()
        text = self.query_one("#write-text", Input)
        text.placeholder = (
            visible(f"e.g. like {questions[-1].id}: {questions[-1].text}")[:100]
            if questions
            else GENERIC_PLACEHOLDER
        )
        self.query_one("#write-tags", Input).placeholder = visible(
            ", ".join(workspace_tags([q.tags for q in questions]) or SUGGESTED_TAGS)
        )

    @on(Input.Changed, "#write-text")
    def typed(self, event: Input.Changed) -> None:
        """Update the meter as the author types (a keystroke cancels the last measure)."""
        self.measure(event.value)

    @work(thread=True, exclusive=True, group="overlap")
    def measure(self, text: str) -> None:
        """Measure the overlap off the UI thread (a large corpus has many titles)."""
        with self._titles_lock:
            if self._titles is None:
                ws = Workspace.open(self.gp.workspace_path, readonly=True)
                try:
                    self._titles = TitleOverlap(ws.titles())
                finally:
                    ws.close()
        overlap = self._titles.overlap(text)
        if not get_current_worker().is_cancelled:
            self.post_message(self.Measured(text, overlap))

    def on_write_screen_measured(self, message: WriteScreen.Measured) -> None:
        """Show the latest measure."""
        if message.text == self.query_one("#write-text", Input).value:
            self._show_meter(message.text, message.overlap)

    def _show_meter(self, text: str, overlap: Overlap) -> None:
        pct = round(overlap.score * 100)
        self.query_one("#overlap-bar", ProgressBar).update(progress=pct)
        note = self.query_one("#overlap-note", Static)
        if not text.strip():
            note.update(Text("Type a question; the meter follows.", style="dim"))
        elif overlap.likely_easy:
            note.update(
                Text(
                    f"{pct}% of its words are in one document title: likely an easy question. "
                    "Try the words a user who does not know the title would use.",
                    style="bold yellow",
                )
            )
        else:
            note.update(
                Text(
                    f"{pct}% overlap (warning from {round(EASY_THRESHOLD * 100)}%): "
                    f"word {overlap.by_tokenizer['word']:.0%}, "
                    f"bigram {overlap.by_tokenizer['bigram']:.0%}",
                    style="green",
                )
            )

    def action_save(self) -> None:
        """Save (committed), pool in a worker, open the judge screen."""
        if self.refuse_read_only("Saving a question"):
            return
        text = self.query_one("#write-text", Input).value.strip()
        if not text:
            self.notify("Write a question first.", severity="warning")
            return
        raw = self.query_one("#write-tags", Input).value
        tags = [t.strip() for t in raw.replace(";", ",").split(",") if t.strip()]
        if self._log_row is not None:
            session = self.gp.session
            logged = str(self._log_row["text"])
            if text == visible(logged).strip():  # untouched: the user's text, as typed
                text = logged
            from engine.workspace.team import LogQueryDecided

            try:
                q, status = session.question_from_log(self._log_row, text, tags)
            except LogQueryDecided as exc:  # another annotator kept it at the same time
                self._set_log(None)  # the text stays: ctrl+s now saves it as a new question
                self.notify(visible(str(exc)), title="Taken", severity="warning", markup=False)
                return
            self.action_clear()
            self.notify(f"Saved {q.id} from the log ({status}); pooling it now.", markup=False)
            self.gp.judge(q.id, session.live.question_ids)
            return
        q = self.gp.session.add_question(text, tags)
        self.action_clear()
        self.notify(f"Saved {q.id}; pooling it now.", markup=False)
        self.gp.judge(q.id, self.gp.session.live.question_ids)

    def on_screen_resume(self) -> None:
        """A log may have been imported meanwhile: offer ctrl+n only when one waits."""
        self._set_log(self._log_row)

    def _set_log(self, row: dict[str, object] | None) -> None:
        self._log_row = row
        self._log_waiting = self.gp.session.next_log_query() is not None
        self.refresh_bindings()

    @property
    def log_waiting(self) -> bool:
        """A query of the imported log waits to be taken (``ctrl+n``)."""
        return bool(getattr(self, "_log_waiting", False))

    @property
    def log_in_editor(self) -> bool:
        """The editor holds a query from the log (``ctrl+t`` discards it)."""
        return getattr(self, "_log_row", None) is not None

    def action_next_from_log(self) -> None:
        """Put the most frequent undecided query of the log in the editor."""
        if self.refuse_read_only("Taking a query from the log"):
            return
        row = self.gp.session.next_log_query()
        if row is None:
            self.notify(
                "No query waiting in the log (goldpan import querylog WS FILE stores one).",
                severity="warning",
            )
            return
        self._set_log(row)
        # The editor shows the log's control characters as pictures (a logged OSC 52
        # would write the clipboard); saving the text untouched keeps the user's own.
        self.query_one("#write-text", Input).value = visible(str(row["text"]))
        from engine.querylog import FROM_LOG_TAG

        self.query_one("#write-tags", Input).value = visible(f"{FROM_LOG_TAG}, {row['band']}")
        self.query_one("#write-text", Input).focus()
        self.notify(
            f"From the log ({row['count']}x, {row['band']}): keep it or rewrite it, then "
            "ctrl+s; ctrl+t discards it.",
            markup=False,
        )

    def action_discard_log(self) -> None:
        """Discard the logged query in the editor, then show the next one."""
        if self._log_row is None:
            self.notify("No query from the log in the editor (ctrl+n takes one).")
            return
        if self.refuse_read_only("Discarding a query"):
            return
        session = self.gp.session
        from engine.workspace.team import LogQueryDecided

        try:
            session.discard_log_query(int(str(self._log_row["id"])))
        except LogQueryDecided as exc:  # decided meanwhile by someone else: theirs stands
            self.notify(visible(str(exc)), title="Taken", severity="warning", markup=False)
        self.action_clear()
        self.action_next_from_log()

    @work
    async def action_leave(self) -> None:
        """Back to the screen before; asks first when there is unsaved text."""
        text = self.query_one("#write-text", Input).value.strip()
        tags = self.query_one("#write-tags", Input).value.strip()
        if text or tags:
            discard = await self.app.push_screen_wait(
                ConfirmScreen(
                    "Leave and discard the unsaved question?",
                    "ctrl+s saves it instead; n keeps you here with the text as it is.",
                )
            )
            if not discard:
                return
            self.action_clear()
        back = self.state.previous_mode
        self.gp.switch_mode(back if back != "write" else "questions")

    def action_clear(self) -> None:
        """Empty the form."""
        self._set_log(None)
        self.query_one("#write-text", Input).value = ""
        self.query_one("#write-tags", Input).value = ""
        self.query_one("#write-text", Input).focus()
