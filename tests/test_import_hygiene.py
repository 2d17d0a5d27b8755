"""The engine never reaches the UI, and Kiwi loads only when a Kiwi tokenizer runs."""

import subprocess
import sys

from tests.conftest import ROOT


def test_engine_imports_no_ui_and_no_kiwi():
    code = (
        "import sys, engine.metrics, engine.workspace, engine.ingest, engine.scoring, "
        "engine.retrieve.runner, engine.demo, engine.tokenize; "
        "print([m for m in ('textual', 'rich', 'tui', 'kiwipiepy') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_app_and_its_first_screen_import_nothing_slow():
    # the first screen paints before scipy, Kiwi, sqlite-utils (pandas) and the retrievers
    # load: they are imported where they are used, or in workers
    code = (
        "import sys, tui.app, tui.screens.questions; "
        "print(sorted(m for m in sys.modules if m in ('scipy', 'kiwipiepy', 'sqlite_utils', "
        "'pandas', 'rank_bm25', 'torch', 'sentence_transformers') "
        "or m.startswith('engine.retrieve') or m == 'engine.analysis'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "[]"
