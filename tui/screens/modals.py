"""Small modal screens: a one-line prompt, a yes / no question, corpus search, trust.

Their keys are declared as :class:`~tui.actions.Command` objects like every screen's
(``ACTIONS``, ``BINDINGS = bindings(ACTIONS)``): docs/tui.md's key table lists them after
the screens' (:data:`DIALOGS`), and each dialog's hint line takes its keys from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from engine.grades import GRADE_RANGE, GRADES, RELEVANT
from engine.types import Question, RetrieverSpec
from engine.workspace import Workspace
from tui.actions import Command, bindings, by_id
from tui.literal import literal, one_line, visible
from tui.widgets.document_view import DocumentView, question_terms

if TYPE_CHECKING:
    from tui.app import GoldpanApp


def search_spec() -> RetrieverSpec:
    """Corpus search: BM25 over titles and text, words and Hangul bigrams."""
    from engine.retrieve import bm25_spec  # the retriever modules load on first search

    return bm25_spec("corpus-search", "word+bigram", fields=("title", "text"))


ResultT = TypeVar("ResultT")


class Dialog(ModalScreen[ResultT]):
    """A goldpan dialog: a modal screen whose keys are declared as commands."""

    AREA: ClassVar[str] = ""
    """The dialog's name as people see it (docs/tui.md's key table)."""
    ACTIONS: ClassVar[tuple[Command, ...]] = ()
    """Every key of the dialog, declared once (see :mod:`tui.actions`)."""


class PromptScreen(Dialog[str | None]):
    """Ask for one line of text; enter returns it, escape cancels (None)."""

    AREA = "Prompt"
    ACTIONS = (Command("escape", "cancel", "Cancel", "Close without saving", "prompt.cancel"),)
    BINDINGS = bindings(ACTIONS)

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        """A prompt with a title line and an optional starting value."""
        super().__init__()
        self.prompt_title = title
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        """Title and input."""
        with Vertical(classes="dialog"):
            yield Label(literal(self.prompt_title, style="bold"))
            yield Input(value=self.value, placeholder=self.placeholder, id="prompt")

    def on_mount(self) -> None:
        """Focus the input."""
        field = self.query_one(Input)
        field.cursor_blink = getattr(self.app, "blink", True)
        field.focus()

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        """Return the text."""
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Return None."""
        self.dismiss(None)


class ConfirmScreen(Dialog[bool]):
    """Ask a yes / no question: `y` or enter says yes, `n` or escape no."""

    AREA = "Confirm"
    ACTIONS = (
        Command("y,enter", "answer(True)", "Yes", "Answer yes", "confirm.yes"),
        Command("n,escape", "answer(False)", "No", "Answer no", "confirm.no"),
    )
    BINDINGS = bindings(ACTIONS)

    def __init__(self, question: str, detail: str = "") -> None:
        """A question and a line saying what yes does."""
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        """The question and the keys."""
        with Vertical(classes="dialog"):
            yield Label(literal(self.question, style="bold"))
            if self.detail:
                yield Label(literal(self.detail))
            keys = "    ".join(f"{c.keys}: {c.footer.lower()}" for c in self.ACTIONS)
            yield Label(Text(keys, style="dim"))

    def action_answer(self, yes: bool) -> None:
        """Close with the answer."""
        self.dismiss(yes)


class SearchScreen(Dialog[tuple[str, int] | None]):
    """Search the whole corpus (titles shown) for a document the pool missed.

    Returns ``(doc id, grade)``: enter picks the highlighted result as relevant (1), the
    keys `0`-`3` pick it with that grade; None when closed with escape.
    """

    @dataclass
    class Found(Message):
        """A search finished: (doc id, title) pairs, best first."""

        results: list[tuple[str, str]]
        query: str = ""
        """What was searched for (said back when nothing matches)."""

    AREA = "Corpus search"
    ACTIONS = (
        Command("escape", "cancel", "Cancel", "Close without adding a document", "search.cancel"),
        Command(
            "down", "focus_results", "Results", "Move to the results", "search.results", show=False
        ),
        *(
            Command(
                str(g),
                f"pick({g})",
                "Grade",
                f"Add the highlighted document with grade {g}",
                f"search.grade{g}",
                show=g == 0,
                doc_key=GRADE_RANGE,
                doc_help="Add the highlighted document with that grade",
            )
            for g in GRADES
        ),
    )
    BINDINGS = bindings(ACTIONS)

    def __init__(self, question: str) -> None:
        """Start with the question's text as the query."""
        super().__init__()
        self.query_text = question
        self.terms = question_terms(question)

    @property
    def gp(self) -> GoldpanApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        """Query input, results beside a preview of the highlighted document."""
        down, cancel = (by_id(self.ACTIONS, f"search.{i}") for i in ("results", "cancel"))
        grade = by_id(self.ACTIONS, f"search.grade{RELEVANT}")
        with Vertical(classes="dialog search"):
            yield Label(
                Text(
                    f"Search the corpus · {down.keys}: results · enter: add as relevant "
                    f"({RELEVANT}) · {grade.keys}: add with that grade · {cancel.keys}: close",
                    style="bold",
                )
            )
            yield Input(value=self.query_text, id="search-query")
            with Horizontal(id="search-body"):
                yield OptionList(id="search-results")
                yield DocumentView(id="search-preview")

    def on_mount(self) -> None:
        """Focus the query and search at once."""
        field = self.query_one(Input)
        field.cursor_blink = self.gp.blink
        field.focus()
        self.query_one(DocumentView).show(
            None, [], "Press down to move to the results: the highlighted one is shown here."
        )
        self.search(field.value)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Grade keys only while a result is highlighted in the list (digits type a query)."""
        if action == "pick":
            results = self.query_one(OptionList)
            return results.has_focus and results.highlighted is not None
        return True

    @on(Input.Changed)
    def changed(self, event: Input.Changed) -> None:
        """Search as the user types (a new keystroke cancels the last search)."""
        self.search(event.value)

    @on(Input.Submitted)
    def submitted(self) -> None:
        """Enter in the query picks the first result."""
        results = self.query_one(OptionList)
        if results.option_count:
            self.dismiss((str(results.get_option_at_index(0).id), RELEVANT))

    @on(OptionList.OptionSelected)
    def picked(self, event: OptionList.OptionSelected) -> None:
        """Enter on a result: relevant (grade :data:`RELEVANT`)."""
        self.dismiss((str(event.option.id), RELEVANT))

    @on(OptionList.OptionHighlighted)
    def previewed(self, event: OptionList.OptionHighlighted) -> None:
        """Show the highlighted document."""
        doc = self.gp.session.doc(str(event.option.id))
        self.query_one(DocumentView).show(doc, self.terms)

    def action_pick(self, grade: int) -> None:
        """Add the highlighted document with a grade."""
        results = self.query_one(OptionList)
        if results.highlighted is not None:
            self.dismiss((str(results.get_option_at_index(results.highlighted).id), grade))

    def action_focus_results(self) -> None:
        """Move from the query to the results, on the first one."""
        results = self.query_one(OptionList)
        results.focus()
        if results.option_count and results.highlighted is None:
            results.highlighted = 0

    def action_cancel(self) -> None:
        """Return None."""
        self.dismiss(None)

    @work(thread=True, exclusive=True, group="search")
    def search(self, query: str) -> None:
        """BM25 over the whole corpus, in a thread with its own connection."""
        ws = Workspace.open(self.gp.workspace_path)
        try:
            corpus = ws.corpus_hash()
            spec = search_spec()
            docs = [] if self.gp.pooling.prepared.has(spec, corpus) else ws.docs()
            retriever = self.gp.pooling.prepared.get(spec, corpus, docs)
            ids, _ = retriever.rank([Question("search", query)], 30, [{}])[0]
            titles = [(d, (ws.doc(d) or None)) for d in ids]
        finally:
            ws.close()
        if get_current_worker().is_cancelled:
            return
        self.post_message(self.Found([(d, doc.title if doc else "") for d, doc in titles], query))

    def on_search_screen_found(self, message: SearchScreen.Found) -> None:
        """Show the results of the latest search."""
        results = self.query_one(OptionList)
        results.clear_options()
        results.add_options(
            [
                Option(Text.assemble(one_line(title, 60), (visible("  " + d), "dim")), id=d)
                for d, title in message.results
            ]
        )
        if not message.results:  # say so: an empty list looks like a search still running
            said = one_line(message.query, 60)
            self.query_one(DocumentView).show(
                None,
                [],
                f"No document matches {said}. Try other words."
                if str(said).strip()
                else "Type words to search the corpus.",
            )


TRUST_WORD = "trust"
"""What the trust dialog needs typed: a word, so that no stray key or key of another
screen (``y``, ``n``, enter, a grade) can answer it."""


class TrustScreen(Dialog[bool]):
    """Ask once, in a terminal, before running a workspace's untrusted command retrievers.

    Typing ``trust`` and enter trusts every listed command for this workspace (recorded in
    the user's config folder, as ``goldpan trust`` does); escape pools without them. Every
    single key goes into the field, so none answers by itself. A served (browser) session
    never shows this dialog: only the machine's owner trusts.
    """

    AREA = "Trust"
    ACTIONS = (
        Command(
            "escape", "answer(False)", "Skip them", "Pool without these commands", "trust.skip"
        ),
    )
    BINDINGS = bindings(ACTIONS)

    def __init__(self, workspace: str, commands: list[tuple[str, str]]) -> None:
        """``commands``: (retriever name, command as shown) pairs."""
        super().__init__()
        self.workspace = workspace
        self.commands = commands

    def compose(self) -> ComposeResult:
        """The warning, each command, the field to type the confirmation in."""
        text = Text.assemble(
            ("Run this workspace's commands?\n\n", "bold"),
            visible(
                f"{self.workspace} has command retrievers this user has not trusted. Each "
                "runs a program on this machine, with your rights, whenever a question is "
                "pooled. Trust only commands you have read and expect.\n\n"
            ),
        )
        for name, command in self.commands:
            text.append(visible(name), style="bold")
            text.append(" runs: ")
            text.append(visible(command), style="yellow")
            text.append("\n")
        skip = by_id(self.ACTIONS, "trust.skip").keys
        text.append(
            f"\ntype {TRUST_WORD} and enter: trust and run them   {skip}: pool without them",
            style="dim",
        )
        with Vertical(classes="dialog trust"):
            yield Static(text, id="trust-commands")
            yield Input(placeholder=f"type {TRUST_WORD} to run them", id="trust-word")

    def on_mount(self) -> None:
        """Focus the field: keys typed land there, never on the screen below."""
        field = self.query_one(Input)
        field.cursor_blink = getattr(self.app, "blink", True)
        field.focus()

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        """Trust only on the exact word; anything else leaves the dialog as it is."""
        event.stop()
        if event.value.strip().lower() == TRUST_WORD:
            self.dismiss(True)
        else:
            event.input.value = ""
            self.notify(
                f"Type {TRUST_WORD} to run them, or escape to pool without them.",
                severity="warning",
            )

    def action_answer(self, trust: bool) -> None:
        """Return the answer."""
        self.dismiss(trust)


DIALOGS: tuple[type[Dialog[Any]], ...] = (PromptScreen, ConfirmScreen, SearchScreen, TrustScreen)
"""The dialogs whose keys docs/tui.md's key table lists (with the help screen's)."""
