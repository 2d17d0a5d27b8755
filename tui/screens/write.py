"""The write screen: author a question blind (no document title or text is ever shown)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Footer, Header, Input, Label, ProgressBar, Static
from textual.worker import get_current_worker

from engine.overlap import EASY_THRESHOLD, Overlap, TitleOverlap
from engine.workspace import Workspace
from tui.actions import Command, bindings
from tui.screens.base import GoldpanScreen

SUGGESTED_TAGS = ("easy", "hard", "paraphrase", "partial-id", "conditional")


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

Tags (comma separated): `easy`, `hard`, `paraphrase`, `partial-id`, `conditional`, or
your own. `ctrl+s` saves: the question is pooled by every retriever and opens for judging.
"""

    AREA = "Write"
    LEAVE = "ctrl+p, then 'Go: questions' or another screen (letters type into the form here)"
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
            "clear",
            "Clear",
            "Clear the question and tags",
            "write.clear",
            title="Write: clear the form",
        ),
    )
    BINDINGS = bindings(ACTIONS)

    def compose(self) -> ComposeResult:
        """Question, tags, overlap meter."""
        yield Header()
        with Vertical(id="write-form"):
            yield Label(Text("Question (written blind: no document is shown here)", style="bold"))
            yield Input(
                placeholder="e.g. 예전 버전 말고 현행 매뉴얼에서 임신 종사자 선량 한도는?",
                id="write-text",
            )
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
        self._titles_lock = threading.Lock()  # one build, even when a keystroke cancels it
        for field in self.query(Input):
            field.cursor_blink = self.gp.blink
        self.query_one("#write-text", Input).focus()
        self.query_one("#overlap-note", Static).update(Text("Indexing titles…", style="dim"))
        self.measure("")

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
        q = self.gp.session.add_question(text, tags)
        self.action_clear()
        self.notify(f"Saved {q.id}; pooling it now.", markup=False)
        self.gp.judge(q.id, self.gp.session.live.question_ids)

    def action_clear(self) -> None:
        """Empty the form."""
        self.query_one("#write-text", Input).value = ""
        self.query_one("#write-tags", Input).value = ""
        self.query_one("#write-text", Input).focus()
