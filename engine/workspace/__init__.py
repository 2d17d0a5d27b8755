"""The workspace: one SQLite file (WAL mode). The only package of goldpan that runs SQL.

A workspace holds the corpus, the questions, every annotator's labels and verdicts,
adjudications, the configured retrievers and their cached rankings, and an append-only
event log. The schema version is ``PRAGMA user_version``; older workspaces are migrated
on open, after a copy of the old version is written next to them (SQLite's online backup,
so pages still in the ``-wal`` file are included); newer ones are refused. A workspace
that cannot be written (the file, its folder or its ``-wal``/``-shm`` files) opens
read-only, for review, with :attr:`Workspace.readonly_reason` saying why.

Writes go through :meth:`Workspace.transaction`, which takes SQLite's write lock up front
(``BEGIN IMMEDIATE``) so that two processes labeling the same file wait for each other
instead of failing half-way; an import is one such transaction, so it lands whole or not
at all.

The package, one module per idea:

- :mod:`~engine.workspace.identity`: whether a file is goldpan's: :func:`identify`
  (header, application id, schema version and shape), read without writing anything.
- :mod:`~engine.workspace.lifecycle`: the file itself: open/create/inspect (read-only or
  writable), the backup before an upgrade, migrations, transactions.
- :mod:`~engine.workspace.soundness`: the gate before the first write (rows the readers
  would refuse, ``quick_check``, dangling rows) and the scans of ``goldpan check``.
- :mod:`~engine.workspace.held`: the connections this process holds, so that nothing
  here drops SQLite's locks.
- :mod:`~engine.workspace.corpus`: documents, the corpus hash, the table counts.
- :mod:`~engine.workspace.questions`: questions and their text history.
- :mod:`~engine.workspace.judgments`: labels, verdicts, adjudications (with the
  ``made_for`` re-check marking) and the event log, read back for merge as
  :class:`JudgmentTimes` (no module outside this package decodes the log's kinds).
- :mod:`~engine.workspace.completeness`: how far judging went: annotators' stops
  (candidates left *not judged (stopped)*) and documents proposed beyond the pool.
- :mod:`~engine.workspace.models`: model judges and their grades, kept apart from
  people's labels (they never become gold by themselves).
- :mod:`~engine.workspace.rankings`: retrievers, their cached runs, embeddings (and any
  stored index of a retriever).
- :mod:`~engine.workspace.team`: leases for ``goldpan serve`` and the query log.
- :mod:`~engine.workspace.snapshots`: stored snapshots.

:class:`Workspace` mixes them together; every mixin reads and writes through the one
connection and :meth:`~WorkspaceFile.transaction` of :class:`WorkspaceFile`.

Why plain :mod:`sqlite3`, not sqlite-utils
------------------------------------------

sqlite-utils is a dependency and :attr:`WorkspaceFile.db` wraps the connection on demand,
but no read or write goes through it, for these reasons:

- Start-up. Importing ``sqlite_utils`` takes about 0.3 s (it imports pandas and numpy
  when they are installed); ``goldpan info`` and ``goldpan label`` open a workspace and
  must not pay that (``tests/test_import_hygiene.py`` asserts they import neither).
- Identify before connecting. :func:`identify` reads the 100-byte header (the SQLite
  magic, ``application_id``, ``user_version``) with plain file reads and then a
  read-only URI connection, so a stranger's file is refused before SQLite (or a library
  that creates tables on first use) can change it.
- The write lock and durability. :meth:`WorkspaceFile.transaction` issues
  ``BEGIN IMMEDIATE`` itself, so two processes labeling one file wait for the lock up
  front instead of failing half-way; sqlite-utils' ``db.atomic()`` opens a plain
  (deferred) ``BEGIN``, which takes the write lock only at the first write and can then
  fail with "database is locked". The connection runs ``synchronous = FULL`` so a label
  is on disk when its call returns.
- The writes are not plain bulk upserts: a label, verdict or adjudication write reads
  the old value for its event-log row and clears ``made_for``; a question's upsert
  changes only its text and tags (its author and creation time stay); so each is an
  ``INSERT ... ON CONFLICT DO UPDATE`` written out, in one transaction. The bulk paths
  that are plain (docs, runs, embeddings) are ``executemany`` with the same shape, and
  sqlite-utils' ``upsert_all`` would add its import for no gain.
- Nested transactions join the outer one (no SAVEPOINT): an import or a merge writes
  through methods that each open a transaction, and the whole must land or roll back
  together; no caller catches a failed inner write and carries on, so a savepoint that
  rolls back only the inner part would have nothing to protect.
- Schema introspection (:func:`expected_tables`) runs on an in-memory database built
  from the migrations, at open time, where sqlite-utils' import cost counts again.
"""

from engine.workspace.completeness import CompletenessTables
from engine.workspace.corpus import CorpusTables
from engine.workspace.held import BUSY_TIMEOUT_S, INTERACTIVE_BUSY_TIMEOUT_S
from engine.workspace.identity import IDENTITY_VERSION, SQLITE_MAGIC, expected_tables, identify
from engine.workspace.judgments import (
    GOLD_IMPORT_EVENT,
    PROPOSAL_EVENT,
    RANKED_EVENT,
    STOP_EVENT,
    EventLog,
    JudgmentTables,
    JudgmentTimes,
)
from engine.workspace.lifecycle import (
    READ_ONLY_ASKED,
    BadRow,
    NewerWorkspace,
    NotAWorkspace,
    WorkspaceError,
    WorkspaceFile,
    backup_path,
    now,
    writable_problem,
)
from engine.workspace.models import ModelJudgeTables
from engine.workspace.questions import QuestionTables
from engine.workspace.rankings import RankingTables
from engine.workspace.snapshots import SnapshotTables
from engine.workspace.team import LeaseState, TeamTables

__all__ = [
    "GOLD_IMPORT_EVENT",
    "PROPOSAL_EVENT",
    "RANKED_EVENT",
    "STOP_EVENT",
    "BUSY_TIMEOUT_S",
    "INTERACTIVE_BUSY_TIMEOUT_S",
    "IDENTITY_VERSION",
    "READ_ONLY_ASKED",
    "SQLITE_MAGIC",
    "BadRow",
    "EventLog",
    "JudgmentTimes",
    "LeaseState",
    "NewerWorkspace",
    "NotAWorkspace",
    "Workspace",
    "WorkspaceError",
    "WorkspaceFile",
    "backup_path",
    "expected_tables",
    "identify",
    "now",
    "writable_problem",
]


class Workspace(
    CorpusTables,
    QuestionTables,
    JudgmentTables,
    CompletenessTables,
    ModelJudgeTables,
    RankingTables,
    TeamTables,
    SnapshotTables,
):
    """An open workspace file, with every table's reads and writes."""
