"""Every key is declared once; docs/tui.md's table, the palette and help derive from it."""

from __future__ import annotations

import io

from rich.console import Console
from textual.widgets import Markdown, Static

from tests.conftest import ROOT
from tests.tui.conftest import APP_SIZE, wait_for
from tui import app_commands
from tui.actions import Command
from tui.app import GoldpanApp
from tui.help import HelpScreen, keys_table, with_keys
from tui.screens.base import GoldpanScreen

SCREENS: dict[str, type[GoldpanScreen]] = dict(app_commands.SCREENS)


def as_text(renderable) -> str:
    console = Console(width=62, file=io.StringIO(), record=True)
    console.print(renderable)
    return console.export_text()


def every_class():
    yield GoldpanApp
    yield from SCREENS.values()


def test_every_binding_comes_from_a_command_with_help_and_a_palette_title():
    for cls in every_class():
        commands = {c.id: c for c in cls.ACTIONS}
        assert len(commands) == len(cls.ACTIONS), f"{cls.__name__}: duplicate ids"
        assert len(cls.BINDINGS) == len(cls.ACTIONS)
        for b in cls.BINDINGS:
            c = commands[b.id]
            assert isinstance(c, Command)
            assert (b.key, b.action, b.description, b.tooltip) == (
                c.key,
                c.action,
                c.footer,
                c.help,
            )
            assert c.help and c.footer and c.title, c
            area = "Go" if c.action.startswith("switch_mode") else None
            if cls is not GoldpanApp:
                area = cls.AREA
            if area:
                assert c.title.startswith(f"{area}: "), c.title


def test_the_key_table_in_docs_is_the_generated_one():
    page = (ROOT / "docs" / "tui.md").read_text(encoding="utf-8")
    assert with_keys(page) == page, "run `python -m tui.help` to update docs/tui.md"
    table = keys_table()
    for cls in SCREENS.values():
        for c in cls.ACTIONS:
            assert f"| {cls.AREA.lower()} | `{c.keys}` | {c.footer} |" in table


def test_footers_show_at_most_seven_keys():
    app_shown = [b for b in GoldpanApp.BINDINGS if b.show]
    for cls in SCREENS.values():
        entries = set()
        for b in cls.BINDINGS:
            if b.show:
                entries.add(b.group.description if b.group else b.key)
        assert len(entries) + len(app_shown) <= 7, cls.__name__


async def test_every_available_binding_is_in_the_palette_on_every_screen(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        app.state.current_question = "q01"
        for mode, cls in SCREENS.items():
            app.switch_mode(mode)
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, cls)
            titles = {c.title for c in app.get_system_commands(screen)}
            for c in (*GoldpanApp.ACTIONS, *cls.ACTIONS):
                if screen.check_action(c.name, ()) is False:
                    assert c.title not in titles, f"{mode}: {c.title} offered but unavailable"
                else:
                    assert c.title in titles, f"{mode}: {c.key} has no palette entry"


async def test_palette_finds_order_and_view_on_questions_and_runs_the_keys_action(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        screen = app.screen
        assert not screen.queue_order
        for word in ("order", "view"):
            await pilot.press("ctrl+p")
            await pilot.press(*word)
            palette = app.screen
            await wait_for(
                pilot,
                lambda p=palette, w=word: any(
                    w in str(o.prompt).lower() for o in p.query_one("CommandList").options
                ),
            )
            prompts = [
                str(o.prompt).splitlines()[0] for o in palette.query_one("CommandList").options
            ]
            assert any(p.startswith("Questions: ") for p in prompts), prompts
            if word == "order":
                assert prompts[0] == "Questions: queue order", prompts
                await pilot.press("enter")
                await wait_for(pilot, lambda: screen.queue_order)
            else:
                await pilot.press("escape")
                await pilot.pause()


async def test_palette_leaves_out_what_does_not_work_now(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge("q01")
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Label: undo" not in titles  # nothing to undo yet
        await pilot.press("1")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Label: undo" in titles
        assert "Keys" not in titles  # Textual's own help panel is replaced by goldpan's help


async def test_help_shows_screens_first_then_this_screens_keys_and_concepts(app_factory):
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        for mode in ("write", "judge", "review", "adjudicate"):
            app.switch_mode(mode)
            await pilot.pause()
            under = app.screen
            await pilot.press("f1")
            help_screen = app.screen
            assert isinstance(help_screen, HelpScreen)
            nav = str(help_screen.query_one("#help-nav", Static).render())
            first, second = nav.splitlines()[:2]
            for k, name in (("q", "Questions"), ("w", "Write"), ("l", "Label"), ("r", "Review")):
                assert f"{k} {name}" in first
            assert "d Adjudicate" in first and f"{under.AREA} (here)" in first
            assert second.startswith("Leave")
            await pilot.pause()
            # everything fits at 120x40: nothing clipped, nothing to scroll to
            assert help_screen.query_one("#help-body").max_scroll_y == 0, mode
            keys = as_text(help_screen.query_one("#help-keys", Static).content)
            live = {c.key for c in under.ACTIONS if under.check_action(c.name, ()) is not False}
            for c in under.ACTIONS:
                # of a key's two states (auto-advance on / off) help shows the live one
                if under.check_action(c.name, ()) is False and c.key in live:
                    assert c.footer not in keys
                    continue
                assert c.footer in keys
            assert help_screen.query_one(Markdown).source == under.HELP
            await pilot.press("escape")
            assert app.screen is under
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")
        assert not isinstance(app.screen, HelpScreen)


async def test_help_on_a_small_terminal_stacks_and_scrolls(app_factory):
    app = app_factory()
    async with app.run_test(size=(80, 24)) as pilot:
        app.judge("q01")
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen) and help_screen.has_class("-narrow")
        body = help_screen.query_one("#help-body")
        assert body.max_scroll_y > 0 and help_screen.focused is body
        assert "scroll" in str(help_screen.query_one("#help-dialog").border_subtitle)
        await pilot.press("end")
        await pilot.pause()
        assert body.scroll_y == body.max_scroll_y  # the end of the text is reachable


async def test_the_way_out_of_write_that_help_names_works(app_factory):
    from tui.screens.write import WriteScreen

    assert WriteScreen.LEAVE.startswith("escape")
    app = app_factory()
    async with app.run_test(size=APP_SIZE) as pilot:
        await pilot.press("r", "w")
        assert isinstance(app.screen, WriteScreen)
        await pilot.press("escape")  # an empty form: no question asked, back to Review
        await wait_for(pilot, lambda: app.current_mode == "review")
