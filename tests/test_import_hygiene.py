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
