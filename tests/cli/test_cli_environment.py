"""What the ``goldpan`` process sets in its own environment before numpy loads."""

import os

from tests.conftest import run_cli as run


def test_openblas_threads_sleep_at_once_unless_the_user_says(capsys, monkeypatch):
    # numpy reads it when first imported, after main starts (tests/test_import_hygiene.py)
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip()
    assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "4"
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", "20")
    assert run(capsys, "--version")[0] == 0
    assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "20"
