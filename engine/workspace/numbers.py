"""Document numbers: how a cached ranking names its documents (``doc_numbers``, schema 9).

A number is given once per document, in the transaction that adds it, and never changed
or given to another: a ranking stores its documents as uint32 numbers (400 bytes for 100
documents, where their ids as JSON took about 1,800). This module reads them, for the
workspace's readers, writers and soundness gate.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from operator import itemgetter
from typing import Any, cast

from engine.workspace import held
from engine.workspace import rows as decode
from engine.workspace.rows import WorkspaceError

FEW_NUMBERS = 4096
"""Up to this many documents, :meth:`DocNumbers.of` looks their numbers up by id."""

FEW_RANKINGS = 64
"""Up to this many rankings, :meth:`DocNumbers.for_rows` looks their numbers up alone."""


class DocNumbers:
    """The workspace's document numbers (``doc_numbers``), as a cached ranking stores them.

    Read on first use and kept: a number never changes or moves to another document, so
    what was read stays true. It is read again when a number is missing (a document
    added since, perhaps by another process) and forgotten when a transaction of this
    connection rolls back (the numbers it gave may go to other documents).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        """Read from ``conn``, on first use."""
        self._conn = conn
        self._names: list[str | None] | None = None
        self.read_at: int | None = None
        """SQLite's ``data_version`` when the numbers were last read."""
        self._numbers: dict[str, int] | None = None

    def dense_top(self) -> int | None:
        """The highest number, when the documents are numbered 1 to it without a gap.

        goldpan numbers them so; None when they are not (asked of SQLite, not of what was
        read).
        """
        try:
            low, top, count = self._conn.execute(
                "SELECT min(n), max(n), count(*) FROM doc_numbers"
            ).fetchone()
        except sqlite3.OperationalError:  # an older schema, read as it is by `goldpan check`
            return 0
        if count == 0:
            return 0
        return top if low == 1 and top == count else None

    def _load(self) -> list[str | None]:
        self.read_at = held.data_version(self._conn)
        names: list[Any] = [None]
        top = self.dense_top()
        if top:  # numbered 1..top: the ids alone, in order of number
            names += [r[0] for r in self._conn.execute("SELECT id FROM doc_numbers ORDER BY n")]
        elif top is None:
            rows = self._conn.execute("SELECT n, id FROM doc_numbers WHERE n > 0").fetchall()
            names += [None] * max((n for n, _ in rows), default=0)
            for n, i in rows:
                names[n] = i
        if not all(type(i) is str for i in names[1:]):  # a damaged row names no document
            names = [i if type(i) is str else None for i in names]
        self._names, self._numbers = names, None
        return names

    def ids(self, numbers: Sequence[int]) -> Sequence[str] | None:
        """The ids of ``numbers`` in order, or None when one of them numbers no document."""
        names = self._names if self._names is not None else self._load()
        for again in (False, True):
            if again:
                names = self._load()
            try:  # itemgetter: the tuple made in one call (a workspace's rankings at open)
                many = len(numbers) > 1
                found = itemgetter(*numbers)(names) if many else [names[n] for n in numbers]
            except IndexError:
                continue
            if None not in found:
                return cast("Sequence[str]", found)
        return None

    def numbers(self) -> Mapping[str, int]:
        """Document id -> number, for every document the workspace holds now."""
        top = self._conn.execute("SELECT max(n) FROM doc_numbers").fetchone()[0] or 0
        if self._names is None or top != len(self._names) - 1:
            self._load()
        if self._numbers is None:
            names = self._names or [None]
            self._numbers = {i: n for n, i in enumerate(names) if i is not None}
        return self._numbers

    def for_rows(self, blobs: Sequence[Any]) -> decode.DocNames:
        """What decodes these stored rankings (``runs.doc_ids`` values).

        A few rankings (a question's, on a screen) look up just their numbers; more, or
        any once all were read, use all of them.
        """
        if self._names is not None or len(blobs) > FEW_RANKINGS:
            return self
        wanted: set[int] = set()
        for blob in blobs:
            if type(blob) is bytes:
                wanted.update(decode.numbers_in(blob) or ())
        found = self._conn.execute(
            "SELECT n, id FROM doc_numbers WHERE n IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(wanted)),),
        )
        return _SomeNames({n: i for n, i in found if type(i) is str}, self)

    def of(self, ids: Collection[str]) -> Mapping[str, int]:
        """The numbers of ``ids``, which must all be documents' (more may come with them).

        A few are looked up by id; many (or any, once all were read) from all of them.

        Raises:
            WorkspaceError: one has no number (a damaged workspace).
        """
        if self._names is None and len(ids) <= FEW_NUMBERS:
            found = self._conn.execute(
                "SELECT id, n FROM doc_numbers WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(ids), ensure_ascii=False),),
            )
            numbers: Mapping[str, int] = {i: n for i, n in found if type(n) is int and n > 0}
        else:
            numbers = self.numbers()
        for doc_id in ids:
            if doc_id not in numbers:
                raise WorkspaceError(
                    f"document {doc_id!r} has no number in doc_numbers, so no ranking can "
                    "name it (the workspace is damaged; `goldpan check` lists every problem)"
                )
        return numbers

    def forget(self) -> None:
        """Read them again on next use."""
        self._names, self._numbers = None, None


@dataclasses.dataclass(frozen=True)
class _SomeNames:
    """The ids of a few numbers, and all of them to fall back on."""

    names: dict[int, str]
    every: DocNumbers

    def ids(self, numbers: Sequence[int]) -> Sequence[str] | None:
        try:
            return [self.names[n] for n in numbers]
        except KeyError:
            return self.every.ids(numbers)
