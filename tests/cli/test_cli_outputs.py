"""Files goldpan writes: atomic, never onto a workspace or database, replaced only with --force.

Every case asserts the exit code, the message (naming the output file) and that the
workspace and every other file are byte-identical afterwards.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from engine.formats import outfiles
from tests.conftest import file_hashes as hashes
from tests.conftest import run_cli as run
from tui.cli import main


@pytest.fixture
def ws(tiny_ws: Path) -> Path:
    """The tiny workspace with a two-question external run (so ranx has something to write)."""
    run_file = tiny_ws.parent / "ext.run"
    run_file.write_text("q1 Q0 d1 1 2.0 x\nq2 Q0 d2 1 1.0 x\n", encoding="utf-8")
    assert main(["import", "run", str(tiny_ws), str(run_file), "--name", "ext"]) == 0
    run_file.unlink()
    return tiny_ws


def out_dir(tmp_path: Path) -> Path:
    d = tmp_path / "out"
    d.mkdir(exist_ok=True)
    return d


def test_export_onto_the_workspace_is_refused(ws, tmp_path, capsys):
    before = hashes(tmp_path)
    code, _, err = run(capsys, "export", ws, "--format", "labels", "--out", ws, "--force")
    assert code == 2
    assert str(ws) in err and "is the workspace" in err
    assert hashes(tmp_path) == before


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_export_onto_a_link_to_the_workspace_is_refused(ws, tmp_path, capsys, link):
    target = out_dir(tmp_path) / "labels.csv"
    (os.symlink if link == "symlink" else os.link)(ws, target)
    before = hashes(tmp_path)
    code, _, err = run(capsys, "export", ws, "--format", "labels", "--out", target, "--force")
    assert code == 2
    assert "labels.csv: is the workspace" in err
    assert hashes(tmp_path) == before


def test_export_onto_the_workspace_wal_name_is_refused(ws, tmp_path, capsys):
    before = hashes(tmp_path)
    code, _, err = run(capsys, "export", ws, "--format", "labels", "--out", f"{ws}-wal")
    assert code == 2 and "tiny.db-wal: is the workspace" in err
    assert hashes(tmp_path) == before and not Path(f"{ws}-wal").exists()


def test_export_onto_another_sqlite_file_is_refused_even_with_force(ws, tmp_path, capsys):
    other = out_dir(tmp_path) / "app.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    before = hashes(tmp_path)
    code, _, err = run(capsys, "export", ws, "--format", "trec-qrels", "--out", other, "--force")
    assert code == 2 and "app.sqlite: is a SQLite database" in err
    assert hashes(tmp_path) == before


def test_an_existing_file_is_replaced_only_with_force(ws, tmp_path, capsys):
    target = out_dir(tmp_path) / "gold.qrels"
    target.write_text("old contents\n")
    before = hashes(tmp_path)
    code, _, err = run(capsys, "export", ws, "--format", "trec-qrels", "--out", target)
    assert code == 2 and "gold.qrels: already exists; pass --force" in err
    assert hashes(tmp_path) == before
    code, out, _ = run(capsys, "export", ws, "--format", "trec-qrels", "--out", target, "--force")
    assert code == 0 and "wrote 4 lines" in out  # tiny_ws's 3 gold lines and 1 judged 0
    assert target.read_text().splitlines() == ["q1 0 d1 2", "q1 0 d2 0", "q2 0 d2 1", "q3 0 d3 3"]
    assert [p.name for p in target.parent.iterdir()] == ["gold.qrels"]  # no temporary file


def test_a_missing_folder_is_named(ws, tmp_path, capsys):
    before = hashes(tmp_path)
    target = tmp_path / "nowhere" / "gold.qrels"
    code, _, err = run(capsys, "export", ws, "--format", "trec-qrels", "--out", target)
    assert code == 2 and "gold.qrels: no such folder" in err and "nowhere" in err
    assert hashes(tmp_path) == before and not target.parent.exists()


def test_dev_full_is_refused(ws, tmp_path, capsys):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    before = hashes(tmp_path)
    code, _, err = run(capsys, "export", ws, "--format", "labels", "--out", "/dev/full", "--force")
    assert code == 2 and "/dev/full: is not a regular file" in err
    assert hashes(tmp_path) == before


def test_a_read_only_folder_is_a_clear_error(ws, tmp_path, capsys, monkeypatch):
    folder = out_dir(tmp_path)
    target = folder / "labels.csv"
    target.write_text("old\n")
    if os.geteuid() != 0:
        folder.chmod(0o555)
    else:  # root writes anywhere: make the temporary file fail the way a read-only folder does

        def refuse(*args, **kwargs):
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(tempfile, "mkstemp", refuse)
    before = hashes(tmp_path)
    try:
        code, _, err = run(capsys, "export", ws, "--format", "labels", "--out", target, "--force")
    finally:
        folder.chmod(0o755)
    assert code == 2 and "labels.csv: cannot write in" in err and "Permission denied" in err
    assert hashes(tmp_path) == before


def test_a_write_failing_midway_leaves_the_old_file_and_no_temporary(
    ws, tmp_path, capsys, monkeypatch
):
    target = out_dir(tmp_path) / "labels.csv"
    target.write_text("old,contents\n")
    before = hashes(tmp_path)

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outfiles.os, "fsync", disk_full)
    code, _, err = run(capsys, "export", ws, "--format", "labels", "--out", target, "--force")
    assert code == 2
    assert "labels.csv: writing failed (No space left on device)" in err and "unchanged" in err
    assert hashes(tmp_path) == before
    assert sorted(p.name for p in target.parent.iterdir()) == ["labels.csv"]


def test_a_file_size_limit_midway_leaves_the_old_file(ws, tmp_path):
    """`ulimit -f` in a real process: the write gets EFBIG part-way through."""
    target = out_dir(tmp_path) / "questions.jsonl"
    target.write_text("old\n")
    before = hashes(tmp_path)
    # the limit is set once the workspace is open (SQLite writes its -shm file first)
    script = (
        "import resource, sys, tempfile\n"
        "real = tempfile.mkstemp\n"
        "def limited(*a, **k):\n"
        "    resource.setrlimit(resource.RLIMIT_FSIZE, (40, 40))\n"
        "    return real(*a, **k)\n"
        "tempfile.mkstemp = limited\n"
        "from tui.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    argv = ["export", str(ws), "--format", "questions-jsonl", "--out", str(target), "--force"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert "questions.jsonl: writing failed (File too large)" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert hashes(tmp_path) == before
    assert sorted(p.name for p in target.parent.iterdir()) == ["questions.jsonl"]


def test_a_300_character_retriever_name_in_ranx_is_a_clear_error(ws, tmp_path, capsys):
    name = "r" * 300
    run_file = tmp_path / "long.run"
    run_file.write_text("q1 Q0 d1 1 2.0 x\n")
    assert run(capsys, "import", "run", ws, run_file, "--name", name)[0] == 0
    before = hashes(tmp_path)
    target = tmp_path / "ranx"
    code, _, err = run(capsys, "export", ws, "--format", "ranx", "--out", target)
    assert code == 2
    assert "ranx: retriever 'rrrr" in err and "file systems allow 255" in err
    assert "--retriever" in err
    assert hashes(tmp_path) == before and not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(Path(p).name for p in before)
    # the others still export
    code, out, _ = run(
        capsys, "export", ws, "--format", "ranx", "--out", target, "--retriever", "ext"
    )
    assert code == 0 and "1 runs" in out
    assert sorted(p.name for p in target.iterdir()) == ["qrels.json", "run-ext.json"]


def test_a_folder_export_is_built_aside_and_replaced_only_with_force(ws, tmp_path, capsys):
    target = tmp_path / "beir"
    code, out, _ = run(capsys, "export", ws, "--format", "beir", "--out", target)
    assert code == 0 and "4 documents" in out
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == [
        "corpus.jsonl",
        "qrels",
        "qrels/test.tsv",
        "queries.jsonl",
    ]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # nothing left aside
    before = hashes(tmp_path)
    code, _, err = run(capsys, "export", ws, "--format", "beir", "--out", target)
    assert code == 2 and "beir: already exists; pass --force" in err
    assert err.count("beir:") == 1  # the folder named once (it was "beir: beir: already ...")
    assert hashes(tmp_path) == before
    (target / "notes.txt").write_text("mine")
    before = hashes(tmp_path)
    code, _, err = run(capsys, "export", ws, "--format", "beir", "--out", target, "--force")
    assert code == 2 and "beir: holds notes.txt, which this export does not write" in err
    assert hashes(tmp_path) == before
    (target / "notes.txt").unlink()
    (target / "corpus.jsonl").write_text("stale\n")
    code, _, _ = run(capsys, "export", ws, "--format", "beir", "--out", target, "--force")
    assert code == 0 and (target / "corpus.jsonl").read_text() != "stale\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_folder_export_into_the_workspace_folder_is_refused(ws, tmp_path, capsys):
    before = hashes(tmp_path)
    code, _, err = run(capsys, "export", ws, "--format", "ranx", "--out", tmp_path, "--force")
    assert code == 2 and "holds the workspace" in err
    assert hashes(tmp_path) == before


def test_a_folder_write_failing_midway_keeps_the_old_folder(ws, tmp_path, capsys, monkeypatch):
    target = tmp_path / "ranx"
    assert run(capsys, "export", ws, "--format", "ranx", "--out", target)[0] == 0
    before = hashes(tmp_path)
    real_fsync = os.fsync
    calls = [0]

    def fails_second(fd):
        calls[0] += 1
        if calls[0] == 2:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(outfiles.os, "fsync", fails_second)
    code, _, err = run(capsys, "export", ws, "--format", "ranx", "--out", target, "--force")
    assert code == 2 and "ranx: writing failed (No space left on device)" in err
    assert hashes(tmp_path) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
