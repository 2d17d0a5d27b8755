"""Issue 20 (item 5, parts of 11): every file goldpan writes goes through the one safe writer.

``snapshot export`` and ``demo --force`` refuse a workspace, another program's SQLite file,
a device, FIFO or socket, and an existing file without ``--force``; a FIFO given as a
workspace, an input file or the trust record is refused at once instead of blocking in
``open()``. The commands that could hang run in a subprocess with a timeout, so that a
regression fails the test instead of hanging the suite; the ones that would write a device
run under an audit hook that refuses (and reports) any write to ``/dev``.
"""

from __future__ import annotations

import ast
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from engine.demo import build_demo
from engine.formats.errors import IngestError
from engine.formats.outfiles import check_target
from engine.trust import TRUST_FILE, config_dir
from engine.types import Question, RetrieverSpec
from engine.workspace import Workspace, identify
from tests.conftest import file_hashes
from tests.conftest import run_cli as run

ROOT = Path(__file__).resolve().parents[2]

CLI = "import sys\nfrom tui.cli import main\nsys.exit(main(sys.argv[1:]))\n"

GUARD = """
import os, sys

def _dev(p):
    try:
        return os.path.realpath(os.fsdecode(p)).startswith("/dev/")
    except Exception:
        return False

WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        if _dev(args[0]) and (args[2] or 0) & WRITE:
            sys.stderr.write(f"GUARD: open {args[0]} for writing\\n")
            raise PermissionError("the test's guard refused a write to a device")
    elif event in ("os.rename", "os.link", "os.remove", "os.truncate", "os.chmod",
                   "shutil.rmtree", "sqlite3.connect", "os.mkdir"):
        for a in args:
            if isinstance(a, (str, bytes, os.PathLike)) and _dev(a):
                sys.stderr.write(f"GUARD: {event} {a}\\n")
                raise PermissionError("the test's guard refused a write to a device")

sys.addaudithook(hook)
"""
"""Refuses (and reports on stderr) any write, rename or removal of a path under /dev."""

PROMPT_S = 30
"""A refusal takes about a second; a blocked ``open()`` of a FIFO never returns."""


def goldpan(*argv: object, guard: bool = False) -> subprocess.CompletedProcess[str]:
    """Run the goldpan CLI in a child process; fail (not hang) when it blocks."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    script = (GUARD if guard else "") + CLI
    try:
        return subprocess.run(
            [sys.executable, "-c", script, *map(str, argv)],
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=PROMPT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"goldpan {' '.join(map(str, argv))} still runs after {PROMPT_S} s (blocked?)")


def other_sqlite(path: Path) -> Path:
    """Another program's SQLite file."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('not goldpan')")
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def snap_ws(tiny_ws: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """The tiny workspace with a snapshot named ``base``."""
    assert run(capsys, "snapshot", tiny_ws, "base", "--retriever", "bm25-word")[0] == 0
    return tiny_ws


# -- snapshot export ---------------------------------------------------------------------


def test_snapshot_export_never_writes_over_the_workspace(
    snap_ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "link.db").symlink_to(snap_ws)
    os.link(snap_ws, tmp_path / "hard.db")
    before = file_hashes(tmp_path)
    for out in (snap_ws, tmp_path / "link.db", tmp_path / "hard.db"):
        for force in ((), ("--force",)):
            code, _, err = run(capsys, "snapshot", "export", snap_ws, "base", "--out", out, *force)
            assert code == 2, err
            assert "is the workspace" in err
    assert file_hashes(tmp_path) == before
    assert (tmp_path / "link.db").is_symlink()
    identify(snap_ws)  # still goldpan's


def test_snapshot_export_never_writes_over_the_workspace_wal(
    snap_ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    holder = Workspace.open(snap_ws)  # a writer elsewhere: the -wal file exists
    try:
        holder.write_questions([Question("q9", "a question held in the wal")])
        wal = snap_ws.with_name(snap_ws.name + "-wal")
        assert wal.stat().st_size > 0
        before = wal.read_bytes()
        code, _, err = run(capsys, "snapshot", "export", snap_ws, "base", "--out", wal, "--force")
        assert code == 2 and "-wal" in err and "is the workspace" in err
        assert wal.read_bytes() == before
    finally:
        holder.close()
    assert Workspace.open(snap_ws, readonly=True).question("q9") is not None


def test_snapshot_export_refuses_another_sqlite_file(
    snap_ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = other_sqlite(tmp_path / "notes.sqlite")
    before = other.read_bytes()
    code, _, err = run(capsys, "snapshot", "export", snap_ws, "base", "--out", other, "--force")
    assert code == 2 and "SQLite database" in err
    assert other.read_bytes() == before


def test_snapshot_export_replaces_a_file_only_with_force(
    snap_ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("my notes\n", encoding="utf-8")
    code, _, err = run(capsys, "snapshot", "export", snap_ws, "base", "--out", target)
    assert code == 2 and "--force" in err
    assert target.read_text(encoding="utf-8") == "my notes\n"
    code, _, err = run(capsys, "snapshot", "export", snap_ws, "base", "--out", target, "--force")
    assert code == 0, err
    assert '"goldpan_snapshot": 1' in target.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_snapshot_export_refuses_a_fifo(
    snap_ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "snapshot", "export", snap_ws, "base", "--out", fifo, "--force")
    assert code == 2 and "not a regular file" in err
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root could write /dev/null at all")
def test_snapshot_export_refuses_a_device_before_writing(snap_ws: Path, tmp_path: Path) -> None:
    (tmp_path / "null.json").symlink_to("/dev/null")
    for out in ("/dev/null", tmp_path / "null.json"):
        proc = goldpan("snapshot", "export", snap_ws, "base", "--out", out, "--force", guard=True)
        assert "GUARD" not in proc.stderr
        assert proc.returncode == 2 and "not a regular file" in proc.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(IngestError, match="not a regular file"):
        check_target(Path("/dev/null"), force=True)


# -- demo --force ------------------------------------------------------------------------


def test_demo_force_refuses_what_is_not_a_goldpan_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("my notes\n", encoding="utf-8")
    other = other_sqlite(tmp_path / "notes.sqlite")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    before = file_hashes(tmp_path)
    for target in (text, other, fifo):
        code, _, err = run(capsys, "demo", "--path", target, "--force", "--no-open")
        assert code == 2, err
        assert "not a goldpan workspace" in err or "not a regular file" in err
        assert "left as it is" in err or "untouched" in err
    assert file_hashes(tmp_path) == before
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.sqlite", "notes.txt", "pipe"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root could replace /dev/null at all")
def test_demo_force_refuses_a_device_before_writing(tmp_path: Path) -> None:
    (tmp_path / "null.db").symlink_to("/dev/null")
    for target in ("/dev/null", tmp_path / "null.db"):
        proc = goldpan("demo", "--path", target, "--force", "--no-open", guard=True)
        assert "GUARD" not in proc.stderr
        assert proc.returncode == 2 and "not a regular file" in proc.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert (tmp_path / "null.db").is_symlink()


def test_demo_force_replaces_an_old_demo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "demo.db"
    ws = build_demo(path, pool=False, models=False)
    ws.write_questions([Question("old-only", "a question only the old demo has")])
    ws.close()
    code, _, err = run(capsys, "demo", "--path", path, "--force", "--no-open")
    assert code == 0, err
    ws = Workspace.open(path, readonly=True)
    try:
        assert ws.question("old-only") is None
        assert ws.questions()
    finally:
        ws.close()
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []


# -- FIFOs as inputs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("info", "{fifo}"),
        ("score", "{fifo}"),
        ("merge", "{tmp}/out.db", "{fifo}"),
        ("merge", "{fifo}", "{ws}"),
        ("check", "{fifo}"),
        ("import", "docs", "{ws}", "{tmp}/docs.jsonl"),
    ],
    ids=["info", "score", "merge-input", "merge-out", "check", "import-docs"],
)
def test_a_fifo_is_refused_promptly(tiny_ws: Path, tmp_path: Path, argv: tuple[str, ...]) -> None:
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    os.mkfifo(tmp_path / "docs.jsonl")
    args = [a.format(fifo=fifo, tmp=tmp_path, ws=tiny_ws) for a in argv]
    proc = goldpan(*args)
    assert proc.returncode == 2, proc.stderr
    said = proc.stdout + proc.stderr  # check lists its problems on stdout
    assert "FIFO" in said and "Traceback" not in said
    assert not (tmp_path / "out.db").exists()
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_fifo_as_the_trust_record_is_refused_promptly(tiny_ws: Path) -> None:
    ws = Workspace.open(tiny_ws)
    ws.add_retriever(RetrieverSpec("tool", "command", {"command": "true", "timeout": 5.0}))
    ws.close()
    record = config_dir() / TRUST_FILE
    record.parent.mkdir(parents=True)
    os.mkfifo(record)
    for argv in (("pool", tiny_ws), ("trust", tiny_ws, "--list")):
        proc = goldpan(*argv)
        assert proc.returncode == 2, proc.stderr
        assert "trust record" in proc.stderr and "FIFO" in proc.stderr
    assert stat.S_ISFIFO(record.lstat().st_mode)


# -- the rule stays ----------------------------------------------------------------------

RENAMES = {("os", "replace"), ("os", "rename"), ("os", "renames"), ("os", "link")}
RENAMES |= {("shutil", "move")}


def renames_in(source: str) -> list[int]:
    """Lines that rename or link a file: os.replace/rename/link, shutil.move, and a
    Path's .rename(x) or .replace(x) (str.replace takes two arguments)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        attr, owner = node.func.attr, node.func.value
        named = isinstance(owner, ast.Name) and (owner.id, attr) in RENAMES
        path_method = attr in ("rename", "replace") and len(node.args) == 1
        if named or (path_method and not node.keywords):
            lines.append(node.lineno)
    return lines


def test_only_outfiles_renames_files() -> None:
    found = {}
    for folder in ("engine", "tui"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "engine/formats/outfiles.py":
                continue
            lines = renames_in(path.read_text(encoding="utf-8"))
            if lines:
                found[rel] = lines
    assert found == {}, "write files through engine.formats.outfiles, not by hand"
    assert renames_in("import os\nos.replace(a, b)\np.replace(q)\ns.replace('a', 'b')\n") == [2, 3]
