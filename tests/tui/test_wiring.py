"""The app stays wiring: short, no import circle in tui/, screens reading through the session.

issue 48: the app had grown to 605 lines of workers, heap freezing, the served handshake
and the error policy, 12 tui modules formed one import circle around it, and screens read
the workspace's connection (``session.ws``) directly.
"""

from __future__ import annotations

import re

import grimp

from tests.conftest import ROOT

APP_MOST_LINES = 300


def test_the_app_module_is_wiring_only():
    lines = (ROOT / "tui" / "app.py").read_text(encoding="utf-8").count("\n")
    assert lines <= APP_MOST_LINES, f"tui/app.py has {lines} lines: move work to controllers"


def circles(graph: grimp.ImportGraph, package: str) -> list[set[str]]:
    """The import circles among ``package``'s modules (strongly connected, > 1 module)."""
    modules = {m for m in graph.modules if m.split(".")[0] == package}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm (recursion: a few hundred modules)
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.find_modules_directly_imported_by(v) & modules:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(part)

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_circle_in_tui():
    """Imports made when code runs count (inside functions too); type hints' do not."""
    graph = grimp.build_graph("tui", "engine", exclude_type_checking_imports=True)
    assert circles(graph, "tui") == []
    assert circles(graph, "engine") == []


def test_the_circle_finder_finds_one():
    graph = grimp.ImportGraph()
    for a, b in [("tui.a", "tui.b"), ("tui.b", "tui.c"), ("tui.c", "tui.a"), ("tui.c", "tui.d")]:
        graph.add_import(importer=a, imported=b)
    assert circles(graph, "tui") == [{"tui.a", "tui.b", "tui.c"}]


def test_screens_read_through_the_session_never_its_connection():
    pattern = re.compile(r"session\.ws\b|\bgp\.ws\b")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("screens", "widgets")
        for path in sorted((ROOT / "tui" / folder).glob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == [], found
