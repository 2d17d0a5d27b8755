"""Measures of the house any reader can rerun (issue 48's "Must show").

    python tools/house.py            # the measures, with their targets
    python tools/house.py --json     # the same as one JSON object
    python tools/house.py --check    # exit 1 when a target is missed

What it measures, over the tree it sits in (or ``--root``):

- README.md lines (target <= 250) and tui/app.py lines (target <= 300);
- the largest modules in engine/ and tui/, and how many have more than 600 lines (target 0);
- import circles among engine/, tui/ and goldpan/: strongly connected groups of modules that
  import each other at module level (``if TYPE_CHECKING:`` blocks left out; an import inside
  a function runs later and is counted apart, for information) (target 0);
- uses of private Textual or textual-serve names outside ``tui/textual_compat.py``, in the
  product and in the tests (target 0);
- how many times each rule is defined: each rule has exactly one home (target 1 each);
- engine tests that go through the command line or the app (target 0): a file under
  tests/engine/ that imports ``tui`` or the tests' ``run_cli``, starts ``python -m tui...``,
  or holds a script that imports ``tui``. Engine tests call the engine.

Only the standard library is used, nothing is imported from the tree, and nothing is written.
Exit codes: 0 done (and, with ``--check``, every target met), 1 only with ``--check`` when a
target is missed, 2 a tree that cannot be measured (the message names the file and line).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import sys
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("engine", "tui", "goldpan")
"""The product's packages: their modules are measured and their imports followed."""

SIZED = ("engine", "tui")
"""The packages whose module sizes are listed."""

MAX_MODULE_LINES = 600
MAX_README_LINES = 250
MAX_APP_LINES = 300
LARGEST = 10
"""How many of the largest modules are listed."""

COMPAT = "tui/textual_compat.py"
SERVE_COMPAT = "tui/textual_serve_compat.py"
"""textual-serve's door, apart so that the server process never imports Textual."""
COMPAT_TEST = "tests/tui/test_textual_compat.py"
"""The door's own test, which reads each private name on a live object to see it is there."""
"""The one module allowed to use private Textual and textual-serve names."""

PRIVATE_NAMES = (
    "_on_timer_update",
    "_compositor_refresh",
    "_batch_count",
    "_repaint_required",
    "_message_queue",
    "_update_lines",
    "_line_cache",
    "_option_render_cache",
    "_set_prompt",
    "_size_updated",
    "_fatal_error",
    "_close_messages_no_wait",
    "_build_environment",
    "_process_messages",
    "_make_app",
    "_compositor",  # Screen._compositor: the tests read what a screen paints through it
)
"""Private names of Textual and textual-serve that goldpan has used (issue 48's list, and
``_compositor``, which the tests use)."""

PRIVATE_PATTERN = re.compile(r"\b(?:" + "|".join(PRIVATE_NAMES) + r")\b|\btextual\._", re.ASCII)
"""A line that uses one of :data:`PRIVATE_NAMES` or a private Textual module."""

PRIVATE_SCANNED = ("engine", "tui", "goldpan", "tests", "benchmarks", "docs")
"""Where private names are looked for (tools/ is left out: this file names them)."""


@dataclass(frozen=True)
class Rule:
    """A rule of the engine and the name its one definition has."""

    rule: str
    kind: str
    """``def`` or ``class``."""
    name: str

    @property
    def grep(self) -> str:
        """The ``grep -rnE`` pattern a reader can run to count its definitions by hand."""
        if self.kind == "def":
            return rf"^(async )?def {self.name}\b"
        return rf"^class {self.name}\b"


RULES = (
    Rule("the scored questions of a score", "def", "scored_set"),
    Rule("which questions are scored", "def", "scored_questions"),
    Rule("the check of an outside ranking", "def", "checked_ranking"),
    Rule("when a first-gold rank got worse", "def", "worse_by"),
    Rule("the crash policy (one line, a log)", "def", "write_crash_log"),
    Rule("a workspace or file that cannot be used", "class", "Unusable"),
    Rule("the embedding cache", "def", "document_vectors"),
    Rule("the gate's floor policy", "def", "floor_verdict"),
    Rule("the gate's regression policy", "def", "regression_verdict"),
)
"""Each rule's definition, found by a module-level ``def`` or ``class`` of that name."""


class Unmeasurable(Exception):
    """The tree cannot be measured: the message says which file and why."""


@dataclass(frozen=True)
class Module:
    """One Python module of the tree."""

    name: str
    """Dotted, e.g. ``tui.screens.judge``."""
    path: str
    """Relative to the root, with ``/``."""
    is_package: bool
    lines: int
    tree: ast.Module


def _python_files(root: Path, top: str) -> Iterator[Path]:
    """The ``.py`` files under ``root/top``, sorted; symbolic links are not followed."""
    base = root / top
    if not base.is_dir() or base.is_symlink():
        return
    for folder, dirs, files in os.walk(base, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for f in sorted(files):
            path = Path(folder, f)
            if f.endswith(".py") and not path.is_symlink() and path.is_file():
                yield path


def _read(root: Path, path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise Unmeasurable(
            f"{path.relative_to(root)}: not UTF-8 (byte {exc.start}); a Python module was expected"
        ) from None
    except OSError as exc:
        raise Unmeasurable(f"{path.relative_to(root)}: cannot be read ({exc.strerror})") from None


def _line_count(text: str) -> int:
    return len(text.splitlines())


def load_modules(root: Path) -> dict[str, Module]:
    """Every module of :data:`PACKAGES` under ``root``, parsed (nothing is imported)."""
    modules: dict[str, Module] = {}
    for top in PACKAGES:
        for path in _python_files(root, top):
            rel = path.relative_to(root)
            parts = list(rel.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            text = _read(root, path)
            try:
                tree = ast.parse(text, filename=str(rel))
            except SyntaxError as exc:
                where = f"{rel}:{exc.lineno}" if exc.lineno else str(rel)
                raise Unmeasurable(
                    f"{where}: not valid Python ({exc.msg}); a module was expected"
                ) from None
            except ValueError as exc:  # a NUL byte
                raise Unmeasurable(f"{rel}: not valid Python ({exc})") from None
            except (RecursionError, MemoryError):
                raise Unmeasurable(f"{rel}: nested too deeply to be parsed") from None
            name = ".".join(parts)
            modules[name] = Module(name, rel.as_posix(), is_package, _line_count(text), tree)
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(body: Sequence[ast.stmt], top_level: bool) -> Iterator[tuple[ast.stmt, bool]]:
    """Every import statement in ``body``: (statement, at module level).

    ``if TYPE_CHECKING:`` blocks are skipped (their ``else`` is not); statements inside a
    function or a lambda are not at module level; a class body runs at import, so it is.
    """
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, top_level
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _imports(node.orelse, top_level)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _imports(node.body, False)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    stmts = [s for s in inner if isinstance(s, ast.stmt)]
                    yield from _imports(stmts, top_level)
                    for h in inner:
                        if isinstance(h, ast.ExceptHandler | ast.match_case):
                            yield from _imports(h.body, top_level)


def _targets(module: Module, node: ast.stmt, known: dict[str, Module]) -> set[str]:
    """The modules of the tree an import statement of ``module`` imports."""
    out: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in known:
                out.add(alias.name)
        return out
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        package = module.name.split(".")
        if not module.is_package:
            package = package[:-1]
        package = package[: len(package) - (node.level - 1)] if node.level > 1 else package
        base = ".".join([*package, *([node.module] if node.module else [])])
    else:
        base = node.module or ""
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        if sub in known:
            out.add(sub)  # from package import module
        elif base in known:
            out.add(base)
    return out


def import_graph(modules: dict[str, Module], module_level: bool) -> dict[str, set[str]]:
    """Module -> the tree's modules it imports (at module level only, or anywhere)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, module in modules.items():
        for node, top in _imports(module.tree.body, True):
            if top or not module_level:
                graph[name] |= _targets(module, node, modules) - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected groups of more than one module, sorted.

    Tarjan's algorithm, iterative (a deep import chain does not reach the recursion limit).
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found, key=lambda g: (-len(g), g))


def _code_lines(text: str) -> list[str]:
    """Each line's names and operators, its strings and comments left out.

    A test may hold a private name as data (a tree it measures); where the text does not
    tokenize, the lines as they are.
    """
    lines = text.splitlines()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return lines
    kept: list[list[str]] = [[] for _ in lines]
    for tok in tokens:
        if tok.type in (tokenize.NAME, tokenize.OP) and tok.start[0] <= len(lines):
            kept[tok.start[0] - 1].append(tok.string)
    return [re.sub(r"\s*\.\s*", ".", " ".join(k)) for k in kept]


def private_uses(root: Path) -> list[dict[str, object]]:
    """Every line outside :data:`COMPAT` that uses a private Textual or textual-serve name."""
    uses: list[dict[str, object]] = []
    for top in PRIVATE_SCANNED:
        for path in _python_files(root, top):
            rel = path.relative_to(root).as_posix()
            if rel in (COMPAT, SERVE_COMPAT, COMPAT_TEST):
                continue
            for number, line in enumerate(_code_lines(_read(root, path)), 1):
                names = sorted({m.group(0) for m in PRIVATE_PATTERN.finditer(line)})
                if names:
                    uses.append({"file": rel, "line": number, "names": names})
    return uses


def rule_homes(modules: dict[str, Module]) -> list[dict[str, object]]:
    """Each of :data:`RULES` and where it is defined (a module-level ``def`` or ``class``)."""
    out: list[dict[str, object]] = []
    for rule in RULES:
        homes = [
            f"{m.path}:{node.lineno}"
            for m in modules.values()
            for node in m.tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == rule.name
            and isinstance(node, ast.ClassDef) == (rule.kind == "class")
        ]
        out.append(
            {
                "rule": rule.rule,
                "definition": f"{rule.kind} {rule.name}",
                "grep": rule.grep,
                "count": len(homes),
                "homes": sorted(homes),
                "met": len(homes) == 1,
            }
        )
    return out


_TUI_MODULE = re.compile(r"tui(\.[A-Za-z_][A-Za-z0-9_.]*)?")
_TUI_IN_CODE = re.compile(r"\b(from|import)\s+tui\b")


def _reaches_the_ui(tree: ast.Module) -> bool:
    """Whether a test module reaches the command line or the app.

    It does when it imports ``tui`` or ``run_cli``, runs ``-m tui...``, or holds code (a
    ``python -c`` script) that imports ``tui``.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found = any(_TUI_MODULE.fullmatch(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            found = bool(_TUI_MODULE.fullmatch(module)) or any(
                a.name == "run_cli" for a in node.names
            )
        elif isinstance(node, ast.List | ast.Tuple):
            words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            found = any(
                w == "-m" and isinstance(n, str) and bool(_TUI_MODULE.fullmatch(n))
                for w, n in zip(words, words[1:], strict=False)
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = bool(_TUI_IN_CODE.search(node.value))
        else:
            found = False
        if found:
            return True
    return False


def engine_tests_through_the_ui(root: Path) -> list[str]:
    """The files of tests/engine/ that reach the command line or the app (see the docstring)."""
    found = []
    for path in _python_files(root, "tests/engine"):
        rel = path.relative_to(root).as_posix()
        try:
            tree = ast.parse(_read(root, path), filename=rel)
        except SyntaxError as exc:
            raise Unmeasurable(f"{rel}:{exc.lineno}: not Python ({exc.msg})") from None
        if _reaches_the_ui(tree):
            found.append(rel)
    return found


def _lines_of(root: Path, rel: str) -> int:
    path = root / rel
    if path.is_symlink() or not path.is_file():
        raise Unmeasurable(f"{rel}: not found (a regular file was expected)")
    return _line_count(_read(root, path))


def measure(root: Path) -> dict[str, object]:
    """Every measure of the tree at ``root``, each with its target and whether it is met."""
    missing = [p for p in PACKAGES[:2] if not (root / p).is_dir() or (root / p).is_symlink()]
    if missing:
        raise Unmeasurable(
            f"{root}: no {' and no '.join(p + '/' for p in missing)} folder; "
            "the root of a goldpan tree (holding engine/ and tui/) was expected"
        )
    modules = load_modules(root)
    readme = _lines_of(root, "README.md")
    app = _lines_of(root, "tui/app.py")
    sized = sorted(
        (m for m in modules.values() if m.name.split(".")[0] in SIZED),
        key=lambda m: (-m.lines, m.path),
    )
    over = [m for m in sized if m.lines > MAX_MODULE_LINES]
    top_level = circles(import_graph(modules, module_level=True))
    anywhere = circles(import_graph(modules, module_level=False))
    private = private_uses(root)
    in_product = [u for u in private if str(u["file"]).split("/")[0] in PACKAGES]
    rules = rule_homes(modules)
    through_ui = engine_tests_through_the_ui(root)
    targets = {
        "readme_lines": readme <= MAX_README_LINES,
        "app_lines": app <= MAX_APP_LINES,
        "modules_over_600": not over,
        "import_circles": not top_level,
        "private_api_uses": not private,
        "rules_with_one_home": all(r["met"] for r in rules),
        "engine_tests_through_the_ui": not through_ui,
    }
    return {
        "readme_lines": {"value": readme, "target": f"<= {MAX_README_LINES}"},
        "app_lines": {"value": app, "target": f"<= {MAX_APP_LINES}"},
        "largest_modules": [
            {"file": m.path, "lines": m.lines, "over": m.lines > MAX_MODULE_LINES}
            for m in sized[:LARGEST]
        ],
        "modules_over_600": {
            "value": len(over),
            "target": "0",
            "files": [m.path for m in over],
        },
        "import_circles": {
            "value": len(top_level),
            "target": "0",
            "modules": sum(len(c) for c in top_level),
            "circles": top_level,
        },
        "import_circles_with_function_imports": {
            "value": len(anywhere),
            "modules": sum(len(c) for c in anywhere),
            "circles": anywhere,
        },
        "private_api_uses": {
            "value": len(private),
            "target": f"0 outside {COMPAT}",
            "in_product": len(in_product),
            "in_tests_and_others": len(private) - len(in_product),
            "uses": private,
        },
        "rules": rules,
        "engine_tests_through_the_ui": {
            "value": len(through_ui),
            "target": "0",
            "files": through_ui,
        },
        "targets": targets,
        "all_met": all(targets.values()),
    }


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """``text`` with its control characters written as escapes.

    A file's name is data, never a terminal escape sequence.
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def _mark(met: bool) -> str:
    return "ok  " if met else "MISS"


def render(m: dict[str, object]) -> str:
    """The measures as plain text, one target a line, each with its details."""
    t: dict[str, bool] = m["targets"]  # type: ignore[assignment]
    readme: dict[str, object] = m["readme_lines"]  # type: ignore[assignment]
    app: dict[str, object] = m["app_lines"]  # type: ignore[assignment]
    over: dict[str, object] = m["modules_over_600"]  # type: ignore[assignment]
    circ: dict[str, object] = m["import_circles"]  # type: ignore[assignment]
    anyc: dict[str, object] = m["import_circles_with_function_imports"]  # type: ignore[assignment]
    priv: dict[str, object] = m["private_api_uses"]  # type: ignore[assignment]
    out = [
        f"{_mark(t['readme_lines'])} README.md lines            {readme['value']:>5}  "
        f"(target {readme['target']})",
        f"{_mark(t['app_lines'])} tui/app.py lines           {app['value']:>5}  "
        f"(target {app['target']})",
        f"{_mark(t['modules_over_600'])} modules over {MAX_MODULE_LINES} lines      "
        f"{over['value']:>5}  (target 0; engine/ and tui/)",
    ]
    for row in m["largest_modules"]:  # type: ignore[attr-defined]
        flag = f"  > {MAX_MODULE_LINES}" if row["over"] else ""
        out.append(f"       {row['lines']:>5}  {row['file']}{flag}")
    out.append(
        f"{_mark(t['import_circles'])} import circles             {circ['value']:>5}  "
        f"(target 0; module-level imports, TYPE_CHECKING left out; {circ['modules']} modules)"
    )
    for group in circ["circles"]:  # type: ignore[attr-defined]
        out.append(f"       {len(group)} modules: {', '.join(group)}")
    out.append(
        f"     with imports inside functions too: {anyc['value']} circles, "
        f"{anyc['modules']} modules (for information)"
    )
    out.append(
        f"{_mark(t['private_api_uses'])} private Textual API uses   {priv['value']:>5}  "
        f"(target {priv['target']}; {priv['in_product']} in the product, "
        f"{priv['in_tests_and_others']} in tests and others)"
    )
    for use in priv["uses"]:  # type: ignore[attr-defined]
        out.append(f"       {use['file']}:{use['line']}  {', '.join(use['names'])}")
    out.append(f"{_mark(t['rules_with_one_home'])} rules defined exactly once (target 1 each)")
    for rule in m["rules"]:  # type: ignore[attr-defined]
        homes = ", ".join(rule["homes"]) or "nowhere"
        out.append(
            f"     {_mark(rule['met'])} {rule['count']}  {rule['definition']:<24} "
            f"{rule['rule']}: {homes}"
        )
    ui: dict[str, object] = m["engine_tests_through_the_ui"]  # type: ignore[assignment]
    out.append(
        f"{_mark(t['engine_tests_through_the_ui'])} engine tests through the UI "
        f"{ui['value']:>5}  (target 0; tests/engine/ calls the engine, never tui)"
    )
    for rel in ui["files"]:  # type: ignore[attr-defined]
        out.append(f"       {rel}")
    out.append("all targets met" if m["all_met"] else "some targets missed")
    return "\n".join(plain(line) for line in out)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the measures; the exit code is described in the module's docstring."""
    parser = argparse.ArgumentParser(
        prog="python tools/house.py", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parents[1],
        help="the goldpan tree to measure (default: the one holding this file)",
    )
    args = parser.parse_args(argv)
    try:
        measures = measure(args.root)
    except Unmeasurable as exc:
        print(f"house: {plain(str(exc))}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug here: one line, never a traceback
        print(f"house: internal error: {plain(repr(exc))}", file=sys.stderr)
        return 3
    try:
        print(json.dumps(measures, indent=2, ensure_ascii=False) if args.json else render(measures))
        sys.stdout.flush()
    except BrokenPipeError:  # read by `head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1 if args.check and not measures["all_met"] else 0


if __name__ == "__main__":
    sys.exit(main())
