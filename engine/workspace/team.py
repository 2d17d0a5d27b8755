"""Team work: question leases (``goldpan serve``) and the query log."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.workspace import rows as decode
from engine.workspace.judgments import EventLog
from engine.workspace.lifecycle import now
from engine.workspace.rows import WorkspaceError


class LogQueryDecided(WorkspaceError):
    """Another annotator decided a logged query first (two kept it at once); nothing written."""


@dataclass(frozen=True)
class LeaseState:
    """What a lease is chosen from, read under the write lock (see :meth:`Workspace.take_lease`)."""

    held: dict[str, str]
    """Question id -> the annotator of another session that holds it now."""
    judges: dict[str, set[str]]
    """Question id -> everyone with a label or a verdict on it."""
    adjudicated: set[str]
    """Questions with the final word already given."""


class TeamTables(EventLog):
    """Leases and the query log."""

    def _drop_expired_leases(self, stamp: str) -> None:
        self.conn.execute("DELETE FROM leases WHERE expires <= ?", (stamp,))

    def take_lease(
        self,
        holder: str,
        annotator: str,
        seconds: float,
        pick: Callable[[LeaseState], str | None],
    ) -> str | None:
        """Give up ``holder``'s lease and lease the question ``pick`` chooses; one transaction.

        ``pick`` sees, under the write lock, the questions other sessions hold, who judged
        each question and which are adjudicated, so two sessions choosing at once never get
        the same question. Returns the question leased (None: ``pick`` found none).
        """
        with self.transaction():
            stamp = now()
            self._drop_expired_leases(stamp)
            self.conn.execute("DELETE FROM leases WHERE holder = ?", (holder,))
            held = dict(self.conn.execute("SELECT question_id, annotator FROM leases"))
            judges: dict[str, set[str]] = {}
            for qid, who in self.conn.execute(
                "SELECT question_id, annotator FROM labels "
                "UNION SELECT question_id, annotator FROM verdicts"
            ):
                judges.setdefault(qid, set()).add(who)
            adjudicated = {r[0] for r in self.conn.execute("SELECT question_id FROM adjudications")}
            chosen = pick(LeaseState(held, judges, adjudicated))
            if chosen is not None:
                self._insert_lease(chosen, annotator, holder, stamp, seconds)
            return chosen

    def hold_lease(self, question_id: str, annotator: str, holder: str, seconds: float) -> str:
        """Lease one question for ``holder`` unless another session holds it.

        Returns the annotator holding it afterwards: ``annotator`` when the lease is (or
        already was) ``holder``'s, someone else's name when theirs is still running.
        """
        with self.transaction():
            stamp = now()
            self._drop_expired_leases(stamp)
            row = self.conn.execute(
                "SELECT annotator, holder FROM leases WHERE question_id = ?", (question_id,)
            ).fetchone()
            if row is not None and row[1] != holder:
                return str(row[0])
            self.conn.execute("DELETE FROM leases WHERE holder = ?", (holder,))
            self._insert_lease(question_id, annotator, holder, stamp, seconds)
            return annotator

    def _insert_lease(
        self, question_id: str, annotator: str, holder: str, stamp: str, seconds: float
    ) -> None:
        expires = (dt.datetime.fromisoformat(stamp) + dt.timedelta(seconds=seconds)).isoformat(
            timespec="milliseconds"
        )
        self.conn.execute(
            "INSERT INTO leases(question_id, annotator, holder, taken, expires) "
            "VALUES (?, ?, ?, ?, ?)",
            (question_id, annotator, holder, stamp, expires),
        )

    def renew_lease(self, holder: str, seconds: float) -> str | None:
        """Push back the expiry of ``holder``'s lease; returns its question (None: no lease)."""
        expires = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)).isoformat(
            timespec="milliseconds"
        )
        with self.transaction():
            row = self.conn.execute(
                "UPDATE leases SET expires = ? WHERE holder = ? AND expires > ? "
                "RETURNING question_id",
                (expires, holder, now()),
            ).fetchone()
        return None if row is None else str(row[0])

    def release_lease(self, holder: str) -> None:
        """Give up ``holder``'s lease (the annotator moved on or left)."""
        with self.transaction():
            self.conn.execute("DELETE FROM leases WHERE holder = ?", (holder,))

    def leases(self) -> dict[str, str]:
        """Question id -> the annotator judging it now (leases not yet expired)."""
        rows = self.conn.execute(
            "SELECT question_id, annotator FROM leases WHERE expires > ? ORDER BY question_id",
            (now(),),
        )
        return {r[0]: r[1] for r in rows}

    _LOG_COLUMNS = ", ".join(decode.LOG_COLUMNS)

    def _log_row(self, r: Sequence[Any]) -> dict[str, Any]:
        return decode.querylog(self.path, r)

    def write_querylog(self, rows: Iterable[dict[str, Any]], source: str) -> tuple[int, int]:
        """Store query groups (text, norm, count, band, variants); returns (added, merged).

        A group whose normalized text is stored already adds its count to that row.
        """
        stamp = now()
        added = merged = 0
        with self.transaction():
            for row in rows:
                found = self.conn.execute(
                    f"SELECT {self._LOG_COLUMNS} FROM querylog WHERE norm = ?", (row["norm"],)
                ).fetchone()
                if found is not None:
                    stored = self._log_row(found)["count"]
                    if stored + int(row["count"]) > decode.MAX_COUNT:  # SQL's sum: a REAL
                        raise WorkspaceError(
                            f"{self.path}: the query {row['text']!r} is counted {stored:,} "
                            f"times already; with this log's {int(row['count']):,} the count "
                            f"would pass {decode.MAX_COUNT:,}. Nothing was written"
                        )
                    self.conn.execute(
                        "UPDATE querylog SET count = count + ? WHERE norm = ?",
                        (int(row["count"]), row["norm"]),
                    )
                    merged += 1
                    continue
                self.conn.execute(
                    "INSERT INTO querylog(text, norm, count, band, variants, source, imported) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        row["text"],
                        row["norm"],
                        int(row["count"]),
                        row["band"],
                        json.dumps(list(row["variants"]), ensure_ascii=False),
                        source,
                        stamp,
                    ),
                )
                added += 1
        return added, merged

    def next_log_query(self) -> dict[str, Any] | None:
        """The most frequent query of the log still waiting for a decision, or None."""
        r = self.conn.execute(
            f"SELECT {self._LOG_COLUMNS} FROM querylog WHERE status = 'pending' "
            "ORDER BY count DESC, id LIMIT 1"
        ).fetchone()
        return self._log_row(r) if r else None

    def claim_log_query(self, log_id: int) -> None:
        """Refuse unless the logged query still waits for a decision.

        Called inside the transaction that decides it (the write lock is held from its
        start), so two annotators keeping one query at once make one question: the second
        is told who decided it, and nothing of theirs is written.

        Raises:
            LogQueryDecided: someone decided it already.
            WorkspaceError: the log has no such query.
        """
        row = self.conn.execute(
            "SELECT status, by, question_id FROM querylog WHERE id = ?", (log_id,)
        ).fetchone()
        if row is None:
            raise WorkspaceError(f"no query {log_id} in the log")
        status, by, question_id = row
        if status != "pending":
            made = f" as {question_id}" if question_id else ""
            raise LogQueryDecided(
                f"{by or 'someone'} {status} this query of the log first{made}; nothing was written"
            )

    def decide_log_query(
        self, log_id: int, status: str, by: str, question_id: str | None = None
    ) -> None:
        """Record what became of a logged query: kept, rewritten or discarded; logged.

        Only a query still pending is decided (:meth:`claim_log_query`, same transaction).
        """
        with self.transaction():
            self.claim_log_query(log_id)
            self.conn.execute(
                "UPDATE querylog SET status = ?, question_id = ?, decided = ?, by = ? "
                "WHERE id = ? AND status = 'pending'",
                (status, question_id, now(), by, log_id),
            )
            self._event("querylog", by, question_id, None, None, f"{log_id} {status}", now())
