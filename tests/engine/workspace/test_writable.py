"""Whether a workspace can be written: a -wal file that another process's last connection
removes as it closes, between being seen and being asked about, is no reason to open the
workspace read-only; one that stays and cannot be written still is.

(Seen under load in ``test_shared_file.py``: a labeler opened a round's file read-only,
"round17.db-wal is not writable", while another process closed its connection.)
"""

from __future__ import annotations

import os

import engine.workspace.lifecycle as lifecycle
from engine.workspace import Workspace


def wal_of(tmp_path):
    path = tmp_path / "w.db"
    Workspace.create(path).close()
    wal = path.with_name(path.name + "-wal")
    wal.write_bytes(b"")  # as a connection open elsewhere leaves it
    return path, wal


def test_a_wal_removed_while_it_is_checked_is_no_reason_for_read_only(tmp_path, monkeypatch):
    path, wal = wal_of(tmp_path)
    real = os.access

    def access(p, mode):  # the other process closes its last connection right now
        if str(p) == str(wal) and wal.exists():
            wal.unlink()
        return real(p, mode)

    monkeypatch.setattr(lifecycle.os, "access", access)
    assert lifecycle.writable_problem(path) is None
    assert not wal.exists()


def test_a_wal_that_stays_and_cannot_be_written_is_still_said(tmp_path, monkeypatch):
    path, wal = wal_of(tmp_path)
    real = os.access
    # root may write any file: the refusal is what the system would say to anyone else
    monkeypatch.setattr(
        lifecycle.os, "access", lambda p, mode: False if str(p) == str(wal) else real(p, mode)
    )
    assert lifecycle.writable_problem(path) == "w.db-wal is not writable"
