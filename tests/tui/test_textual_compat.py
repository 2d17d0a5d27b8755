"""The private Textual names goldpan uses are still there, and used behind one door only.

tui.textual_compat uses a few private Textual names; a Textual upgrade that renames or
removes one fails here, naming it, instead of breaking a screen unannounced.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from textual.app import App
from textual.message_pump import MessagePump
from textual.widgets import DataTable, OptionList
from textual.widgets.option_list import Option

from tests.tools.house_tree import load_house
from tui import textual_compat, textual_serve_compat

ROOT = Path(__file__).resolve().parents[2]

METHODS = [
    (App, "_fatal_error", ["self"]),
    (App, "_close_messages_no_wait", ["self"]),
    (OptionList, "_update_lines", ["self"]),
    (OptionList, "_get_visual", ["self", "option"]),
    (Option, "_set_prompt", ["self", "prompt"]),
    (MessagePump, "_dispatch_message", ["self", "message"]),
]
"""(Textual class, private method, its parameters) as textual_compat overrides or calls it."""

ATTRIBUTES = [
    "App._exception",
    "App._notifications",
    "Screen._compositor",
    "OptionList._line_cache",
    "OptionList._option_render_cache",
    "OptionList._index_to_line",
    "OptionList._heights",
    "DataTable._require_update_dimensions",
    "DataTable._updated_cells",
]
"""Private attributes textual_compat reads, as ``Class._name`` (checked on live objects)."""

PRIVATE_NAMES = sorted(
    {name for _, name, _ in METHODS}
    | {a.split(".")[1] for a in ATTRIBUTES}
    | {"_update_lines", "_full_map", "_make_app", "_build_environment", "_process_messages"}
    | {"_process"}
    | {"_size_updated", "_compositor_refresh", "_batch_count", "_repaint_required"}  # gone
    | {"_on_timer_update", "_message_queue"}  # gone
)
"""Every private name guarded; the last two lines' uses were removed (under 10% of their path,
benchmarks/bench_textual_compat.py) and must not come back outside the door."""


def test_checked_against_the_textual_installed():
    """A new Textual: read each name below in its source, then raise TEXTUAL_CHECKED."""
    from importlib.metadata import version

    assert version("textual") == textual_compat.TEXTUAL_CHECKED, (
        "Textual changed: check every private name in tui/textual_compat.py against it"
    )


@pytest.mark.parametrize(("owner", "name", "params"), METHODS, ids=lambda v: str(v))
def test_private_method_is_still_there(owner, name, params):
    method = getattr(owner, name, None)
    assert callable(method), f"Textual's {owner.__name__}.{name} is gone"
    assert list(inspect.signature(method).parameters) == params, (
        f"Textual's {owner.__name__}.{name} takes other arguments now"
    )


async def test_private_attributes_are_still_there():
    """Each attribute, read on a running app the way textual_compat reads it."""

    class Probe(App[None]):
        def compose(self):
            yield OptionList("one", "two")
            yield DataTable()

    app = Probe()
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        objects = {
            "App": app,
            "MessagePump": app,
            "Screen": app.screen,
            "OptionList": app.query_one(OptionList),
            "DataTable": app.query_one(DataTable),
        }
        for attribute in ATTRIBUTES:
            owner, name = attribute.split(".")
            assert hasattr(objects[owner], name), f"Textual's {attribute} is gone"
        options = app.query_one(OptionList)
        assert options._line_cache.heights == {0: 1, 1: 1}  # one measure per option
        cache = options._option_render_cache
        assert callable(cache.keys) and callable(cache.discard)
        keys = list(cache.keys())
        assert keys and all(isinstance(key[0], Option) for key in keys)
        assert textual_compat.screen_text(app.screen).count("one") == 1
        assert textual_compat.screen_frame(app)


async def test_the_compositor_hooks_still_work():
    """Frames are still rendered by the method frames_rendered patches; layouts still kept."""
    frames: list[int] = []

    class Probe(App[None]):
        def compose(self):
            yield OptionList("one", "two")

    app = Probe()
    with textual_compat.frames_rendered(lambda: frames.append(1)):
        async with app.run_test(size=(40, 10)) as pilot:
            await pilot.pause()
            options = app.query_one(OptionList)
            region = textual_compat.laid_out_region(app.screen, options)
            assert region is not None and region.width == 40
    assert frames, "Compositor.render_update no longer renders the frames"


def test_no_private_textual_name_outside_the_compat_module():
    """tui/ and tests/ use private Textual names only through tui/textual_compat.py.

    What counts as a use is tools/house.py's rule: code, not a string or a comment (the
    house tool's tests hold the names as data).
    """
    allowed = {ROOT / "tui" / "textual_compat.py", ROOT / "tui" / "textual_serve_compat.py"}
    allowed.add(Path(__file__).resolve())
    pattern = re.compile(
        r"\b(" + "|".join(map(re.escape, PRIVATE_NAMES)) + r")\b|\btextual(_serve)?\._"
    )
    found = []
    for folder in ("tui", "tests", "engine", "goldpan", "benchmarks", "docs"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.resolve() in allowed:
                continue
            code = load_house()._code_lines(path.read_text(encoding="utf-8"))
            for number, line in enumerate(code, 1):  # strings and comments are data
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "private Textual names outside tui/textual_compat.py:\n" + "\n".join(found)


def test_textual_serve_names_are_still_there():
    """goldpan serve's three textual-serve names (a new textual-serve: read each, then raise
    TEXTUAL_SERVE_CHECKED)."""
    from importlib.metadata import version

    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    assert version("textual-serve") == textual_serve_compat.TEXTUAL_SERVE_CHECKED
    assert inspect.iscoroutinefunction(Server._make_app) or callable(Server._make_app)
    assert list(inspect.signature(AppService._build_environment).parameters) == [
        "self",
        "width",
        "height",
    ]
    assert "self._process" in inspect.getsource(AppService.__init__)
    env = textual_serve_compat.tab_environment(False, 80, 24)
    assert env["COLUMNS"] == "80" and env["ROWS"] == "24"


def test_a_server_with_an_application_of_its_own_serves_it():
    """with_application's subclass answers textual-serve's call with make_application()."""
    import asyncio

    class Base:
        async def _make_app(self) -> str:
            return "textual-serve's"

    class Mine(textual_serve_compat.with_application(Base)):
        async def make_application(self) -> str:
            return "goldpan's"

    assert asyncio.run(Mine()._make_app()) == "goldpan's"
