"""Hostile cases of ``goldpan import squad --onto``: titles are data in its refusals, and a
refusal leaves the workspace exactly as it was. Real processes."""

from __future__ import annotations

from engine.types import Doc
from engine.workspace_setup import new_workspace
from tests.cli.test_cli_exit import goldpan
from tests.cli.test_cli_import_onto import squad_file
from tests.conftest import snapshot

TRAP = "[bold]x[/] \x1b[2J\x1b]0;owned\x07 \u202eevil"


def test_a_title_with_escapes_is_named_as_text_in_the_refusal(tmp_path):
    ws = tmp_path / "w.db"
    new = new_workspace(ws)
    new.write_docs([Doc("d1", TRAP + " 1", "본문"), Doc("d2", TRAP + " 1", "본문")])
    new.close()
    before = snapshot(ws)
    for title in (TRAP, TRAP + " 1"):  # no document of it; two documents of it
        squad = squad_file(tmp_path / "qa.json", [(title, [("q1", "질문", False)])])
        done = goldpan(tmp_path, "import", "squad", ws, squad, "--onto")
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert "\x1b" not in done.stderr and "\x07" not in done.stderr
        assert "\u202e" not in done.stderr and "[bold]x[/]" in done.stderr
    assert snapshot(ws) == before


def test_an_import_onto_a_file_that_is_not_a_workspace_is_refused(tmp_path):
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
    squad = squad_file(tmp_path / "qa.json", [("PET", [("q1", "질문", False)])])
    done = goldpan(tmp_path, "import", "squad", notes, squad, "--onto")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert notes.read_bytes() == b"SQLite format 3\x00" + b"\x00" * 84
