"""Every use of a private Textual name, behind one door.

goldpan leans on a few of Textual's private names where its public API has no way to say
what a screen needs (a grade or a move redrawn without measuring or drawing the whole
list again, rows measured again when the list's own
scrollbar narrows them, a crash ended without a traceback on the terminal). Each is used
here and only here, with why and the Textual version it was checked against;
``tests/tui/test_textual_compat.py`` fails, naming the name, when a Textual upgrade
renames or removes one. Everything else in goldpan, tests included, uses Textual's public
API or the functions below.

A use that only saves time stays only where it pays: 10% or more of its path, measured
by ``benchmarks/bench_textual_compat.py`` (a real process in tmux, the use swapped for
plain Textual; the gains are in its comment and in ``benchmarks/RESULTS.md``). Four
measured under that were removed: no frame rendered inside the app's start batch, one
layout pass per document shown, the option list's early return once every row is
measured, and a frame held while keys typed ahead waited.

textual-serve's private names (``goldpan serve``) have a door of their own beside this
one, :mod:`tui.textual_serve_compat`, so that the server process never imports Textual.

Checked against Textual :data:`TEXTUAL_CHECKED`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from textual.app import App
from textual.screen import Screen
from textual.widgets import DataTable, OptionList

if TYPE_CHECKING:
    from rich.text import Text
    from textual.geometry import Region
    from textual.strip import Strip
    from textual.widget import Widget

TEXTUAL_CHECKED = "8.2.8"
"""The Textual version every private name here was read against."""

ReturnType = TypeVar("ReturnType")


# -- the app -------------------------------------------------------------------------------


class QuietCrashApp(App[ReturnType]):
    """An app that ends on an unhandled exception without printing a traceback.

    ``goldpan open`` and a served session report the exception themselves, in one line,
    with the traceback in a crash log (:mod:`tui.crash`). Textual has no public switch for
    its own report, which prints a full traceback, locals included, to the terminal.
    """

    def _fatal_error(self) -> None:
        # Textual 8.2.8: App._fatal_error() runs on an unhandled exception: it renders a
        # traceback into the exit renderables, then closes the message queue. Kept: the
        # bell and the closing (App._close_messages_no_wait), not the traceback.
        self.bell()
        self._close_messages_no_wait()

    @property
    def crash(self) -> BaseException | None:
        """The unhandled exception that ended the app, if one did."""
        # Textual 8.2.8: App._exception holds it; no public accessor (return_code is 1)
        return self._exception


# -- screens -------------------------------------------------------------------------------


@contextmanager
def frames_rendered(each: Callable[[], None]) -> Iterator[None]:
    """Call ``each()`` before every full frame a screen renders (tests watch the frames)."""
    # Textual 8.2.8: a frame is rendered by Compositor.render_update(); the compositor is
    # a private module, so the patch is made and undone here
    from textual._compositor import Compositor

    render = Compositor.render_update

    def watched(self: Compositor, *args: Any, **kwargs: Any) -> Any:
        each()
        return render(self, *args, **kwargs)

    Compositor.render_update = watched  # type: ignore[method-assign]
    try:
        yield
    finally:
        Compositor.render_update = render  # type: ignore[method-assign]


def screen_strips(screen: Screen[object]) -> list[Strip]:
    """The screen's lines as drawn now, with their styles."""
    # Textual 8.2.8: Screen._compositor.render_strips() renders the whole screen's lines
    return screen._compositor.render_strips()


def screen_text(screen: Screen[object]) -> str:
    """The screen as drawn now, its lines joined by newlines (no styles)."""
    return "\n".join(strip.text for strip in screen_strips(screen))


def screen_frame(app: App[object]) -> str:
    """The whole screen as the terminal would be sent it: text and escape sequences."""
    # Textual 8.2.8: Compositor.render_update(full=True) is the frame App._display writes
    update = app.screen._compositor.render_update(full=True)
    render_segments = getattr(update, "render_segments", None)  # a CompositorUpdate
    return "" if render_segments is None else str(render_segments(app.console))


@contextmanager
def messages_dispatched(each: Callable[[object, object], None]) -> Iterator[None]:
    """Call ``each(node, message)`` for every message any node handles (tests count)."""
    # Textual 8.2.8: MessagePump._dispatch_message() hands each message to its handler
    from textual.message_pump import MessagePump

    dispatch = MessagePump._dispatch_message

    async def counted(pump: MessagePump, message: Any) -> Any:
        each(pump, message)
        return await dispatch(pump, message)

    MessagePump._dispatch_message = counted  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        MessagePump._dispatch_message = dispatch  # type: ignore[method-assign]


def table_measured(table: DataTable[Any]) -> bool:
    """Whether a data table has measured its columns for every cell it was given."""
    # Textual 8.2.8: DataTable._require_update_dimensions and DataTable._updated_cells are
    # set when cells change, cleared when the table measures them on its idle
    return not (table._require_update_dimensions or table._updated_cells)


def laid_out_region(screen: Screen[object], widget: Widget) -> Region | None:
    """Where ``widget`` is in the screen's last layout (None: not laid out)."""
    # Textual 8.2.8: Compositor._full_map maps each widget to its MapGeometry; the public
    # Widget.region lays the screen out again when asked mid-frame
    geometry = screen._compositor._full_map.get(widget)
    return None if geometry is None else geometry.region


def notification_messages(app: App[object]) -> list[str]:
    """The messages of the notifications on show, oldest first."""
    # Textual 8.2.8: App._notifications, the live Notifications (no public accessor)
    return [str(n.message) for n in app._notifications]


# -- widgets -------------------------------------------------------------------------------


class RemeasuringOptionList(OptionList):
    """An option list that measures its rows again when its width changes (correctness).

    Textual's OptionList measures the rows it has not measured yet at the width of the
    moment and forgets the measures only on a resize. Rows measured before the scrollbar
    appeared kept their height at the wider width, where the list is the same size but
    two cells narrower: a title that fitted by one or two cells then wrapped onto a line
    the list did not have, and was cut. Here a change of width measures every row again
    (narrower rows only grow, so the scrollbar, once there, stays).
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        """An empty list."""
        super().__init__(id=id)
        self._lines_width: int | None = None
        """The width the rows were last measured at."""

    def _update_lines(self) -> None:
        # Textual 8.2.8: OptionList._update_lines() measures the rows not measured yet
        # into OptionList._line_cache; the drawings are in OptionList._option_render_cache.
        # Textual forgets the measures only on a resize, and the list is not resized when
        # its own scrollbar comes: no public way (a correctness use, no speed claimed).
        for _ in range(2):
            width = self.scrollable_content_region.width
            if width != self._lines_width:
                self._option_render_cache.clear()
                self._line_cache.clear()
                self._lines_width = width
            super()._update_lines()  # may bring the scrollbar, and so change the width
            if self.scrollable_content_region.width == width:
                break

    def option_lines(self, index: int) -> tuple[int, int] | None:
        """The first line and the height of option ``index`` (None: not measured yet).

        What lets a cursor move redraw two rows, not the list (``CandidateList``):
        measured (``bench_textual_compat.py``, ``two-rows``), a move costs 11-24% more CPU
        and 16-21% more wall time when the whole list is redrawn instead.
        """
        # Textual 8.2.8: OptionList._index_to_line and OptionList._heights
        try:
            return self._index_to_line[index], self._heights[index]
        except KeyError:
            return None

    def set_prompt_same_width(self, index: int, prompt: Text) -> None:
        """Give option ``index`` a new prompt of the same width, its height unchanged.

        Textual's ``replace_option_prompt`` forgets every option's drawing and every line's
        height, so the whole list is measured and drawn again; here only this option's
        drawing is dropped. The caller redraws its lines. Measured
        (``bench_textual_compat.py``, ``same-width-prompt``): a grade costs 21-22% more
        CPU and 15-30% more wall time with ``replace_option_prompt_at_index`` instead.
        """
        option = self.get_option_at_index(index)
        # Textual 8.2.8: Option._set_prompt() sets the prompt without telling the list;
        # OptionList._option_render_cache keys its drawings by (option, style, padding)
        option._set_prompt(prompt)
        cache = self._option_render_cache
        for key in [k for k in cache.keys() if k[0] is option]:  # noqa: SIM118 (no __iter__)
            cache.discard(key)

    def option_height(self, index: int, width: int) -> int:
        """How many lines option ``index``'s prompt takes at ``width`` cells."""
        # Textual 8.2.8: OptionList._get_visual() is the option's prompt as drawn
        option = self.get_option_at_index(index)
        return self._get_visual(option).get_height(self.styles, width)  # type: ignore[arg-type]
