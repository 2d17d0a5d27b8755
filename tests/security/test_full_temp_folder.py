"""A full temporary folder (``TMPDIR``) is a full disk, said of the right disk: exit 2.

SQLite writes a large sort or a large statement's undo to a temporary file in ``TMPDIR``;
when that disk is full the write fails as on a full disk under the workspace. goldpan
says which disk is full (the workspace's has room), the failed write is rolled back, the
workspace stays sound, and the same command succeeds once ``TMPDIR`` has room. The test
fills a real 64 KB tmpfs (it needs to mount one: root, as CI runs) and runs a real
``goldpan`` process.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.demo import demo_data
from tests.conftest import ROOT, run_cli


@pytest.fixture
def full_tmp(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 64 KB tmpfs, filled to the last byte."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=1777", "tmpfs", str(folder)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip("needs to mount a small tmpfs (as root) to make a full temporary folder")
    try:
        with (folder / "fill").open("wb", buffering=0) as fill, contextlib.suppress(OSError):
            while True:
                fill.write(b"\0" * 4096)
        with pytest.raises(OSError) as full:
            (folder / "one-more").write_bytes(b"\0" * 4096)
        assert full.value.errno == errno.ENOSPC
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def test_a_full_temp_folder_is_called_disk_full_there_and_loses_nothing(tmp_path, full_tmp, capsys):
    ws = tmp_path / "ws.db"
    assert run_cli(capsys, "new", ws)[0] == 0
    assert run_cli(capsys, "retriever", "remove", ws, "bm25-kiwi")[0] == 0
    assert run_cli(capsys, "import", "docs", ws, demo_data() / "docs")[0] == 0
    assert run_cli(capsys, "import", "questions", ws, demo_data() / "questions.jsonl")[0] == 0
    state = tmp_path / "state"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": str(state), "COLUMNS": "300"}
    done = subprocess.run(
        [sys.executable, "-P", "-m", "tui.cli", "pool", str(ws), "--quiet"],
        env={**env, "TMPDIR": str(full_tmp)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = " ".join(done.stderr.split())
    assert done.returncode == 2, done.stderr
    assert f"disk full in {full_tmp}, the folder for SQLite's temporary files (TMPDIR)" in said
    assert "nothing was written" in said and "Traceback" not in done.stderr
    assert not state.exists()  # no crash log: not a bug
    # the retriever whose write failed stored nothing; those before it are kept, whole
    code, out, _ = run_cli(capsys, "check", ws)
    assert code == 0 and "no problems found" in out
    done = subprocess.run(
        [sys.executable, "-P", "-m", "tui.cli", "pool", str(ws), "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
