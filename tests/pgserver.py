"""A real PostgreSQL server for the tests: Debian's initdb + pg_ctl in a temp folder.

The server listens on a Unix socket in its own folder only (no TCP port), with password
(SCRAM) authentication so that a wrong password is a real authentication failure. As root
(CI runs as root) initdb and pg_ctl run as the ``postgres`` user, who owns the folder.
"""

from __future__ import annotations

import glob
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PG_MAJOR_PREFERRED = "15"
PASSWORD = secrets.token_hex(12)
SUPERUSER = "postgres"
DATABASE = "goldpan"


def pg_bindir() -> Path | None:
    """The folder of Debian's PostgreSQL binaries (15 first), or None."""
    preferred = Path(f"/usr/lib/postgresql/{PG_MAJOR_PREFERRED}/bin")
    if (preferred / "initdb").exists():
        return preferred
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


@dataclass
class PgServer:
    bindir: Path
    root: Path
    """The temp folder: the data folder, the socket and the log."""
    as_postgres: bool

    @property
    def socket_dir(self) -> str:
        return str(self.root)

    def dsn(self, *, user: str = SUPERUSER, password: str = PASSWORD, db: str = DATABASE) -> str:
        return f"host={self.root} user={user} password={password} dbname={db}"

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A PostgreSQL binary, as the postgres user when running as root."""
        cmd = [str(self.bindir / argv[0]), *argv[1:]]
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=120)

    def psql(self, *args: str, sql: str, db: str = DATABASE) -> str:
        """``psql`` (a subprocess) running ``sql``: unaligned, tuples only, tab-separated."""
        env = {**os.environ, "PGPASSWORD": PASSWORD}
        done = subprocess.run(
            [
                str(self.bindir / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-F",
                "\t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                str(self.root),
                "-U",
                SUPERUSER,
                "-d",
                db,
                *args,
            ],
            input=sql,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        if done.returncode != 0:
            raise AssertionError(f"psql failed: {done.stderr}")
        return done.stdout


def start_server() -> PgServer:
    """initdb + pg_ctl start in a new temp folder (the caller stops it)."""
    bindir = pg_bindir()
    if bindir is None:
        pytest.skip("needs Debian's PostgreSQL server binaries (apt-get install postgresql-15)")
    as_postgres = os.geteuid() == 0
    # under /tmp itself: pytest's own temp folders are root's and closed to other users,
    # and a Unix socket's path must stay under ~100 bytes
    root = Path(tempfile.mkdtemp(prefix="goldpan-pg-"))
    if as_postgres:
        shutil.chown(root, "postgres", "postgres")
    pwfile = root / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if as_postgres:
        shutil.chown(pwfile, "postgres", "postgres")
    server = PgServer(bindir, root, as_postgres)
    data = root / "data"
    try:
        server.run(
            "initdb",
            "-D",
            str(data),
            "-U",
            SUPERUSER,
            f"--pwfile={pwfile}",
            "--auth-local=scram-sha-256",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",  # \w and [:alnum:] know Hangul in SQL regular expressions
            "--no-sync",
        )
        # -w: pg_ctl returns once the server accepts connections
        server.run(
            "pg_ctl",
            "-D",
            str(data),
            "-w",
            "-l",
            str(root / "log"),
            "-o",
            f"-k {root} -c listen_addresses= -F -c log_connections=on",
            "start",
        )
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise AssertionError(f"PostgreSQL did not start: {exc.stderr}{exc.stdout}") from None
    server.psql(sql=f"CREATE DATABASE {DATABASE};", db="postgres")
    return server


def stop_server(server: PgServer) -> None:
    server.run("pg_ctl", "-D", str(server.root / "data"), "-m", "fast", "-w", "stop", check=False)
    shutil.rmtree(server.root, ignore_errors=True)


KO_BIGRAMS_SQL = r"""
-- goldpan's `bigram` tokens in SQL: lowercase \w runs; a run holding a Hangul syllable
-- becomes its overlapping 2-character pieces, any other run stays whole. Space-separated.
CREATE OR REPLACE FUNCTION ko_bigrams(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(
           CASE WHEN w ~ '[가-힣]' AND char_length(w) > 1
                THEN (SELECT string_agg(substr(w, i, 2), ' ' ORDER BY i)
                        FROM generate_series(1, char_length(w) - 1) AS i)
                ELSE w END,
           ' ' ORDER BY n), '')
    FROM regexp_split_to_table(lower(t), '\W+') WITH ORDINALITY AS s(w, n)
   WHERE w <> ''
$$;
"""
"""The SQL function docs/retrievers.md's Korean example defines (kept the same here)."""

TSVECTOR_TEMPLATE = """\
SELECT id, ts_rank_cd(tsv, q) AS score
  FROM docs, to_tsquery('simple', replace(ko_bigrams(%(query)s), ' ', ' | ')) AS q
 WHERE tsv @@ q
 ORDER BY score DESC, id COLLATE "C" DESC
 LIMIT %(k)s
"""
"""docs/retrievers.md's Korean tsvector template."""


def korquad_subset(
    path: Path, n_docs: int = 300, n_questions: int = 50
) -> tuple[list[Any], list[Any], dict[str, str]]:
    """The first ``n_docs`` KorQuAD paragraphs as docs, ``n_questions`` of their questions
    spread over them, and each question's gold paragraph (built at test time, never kept).
    """
    from engine.types import Doc, Question

    data = json.loads(path.read_text(encoding="utf-8"))
    docs: list[Doc] = []
    asked: list[tuple[str, str, str]] = []  # (question id, text, gold doc)
    for a, article in enumerate(data["data"]):
        for p, para in enumerate(article["paragraphs"]):
            if len(docs) == n_docs:
                break
            doc_id = f"kq{a:03d}-{p:02d}"
            docs.append(Doc(doc_id, article["title"], para["context"], {}))
            qa = para["qas"][0]
            asked.append((qa["id"], qa["question"], doc_id))
    step = max(1, len(asked) // n_questions)
    chosen = asked[::step][:n_questions]
    questions = [Question(qid, text) for qid, text, _ in chosen]
    return docs, questions, {qid: gold for qid, _, gold in chosen}
