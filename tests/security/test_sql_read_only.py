"""SQL from a workspace or an option runs read-only by the server's rule, on a real PostgreSQL.

A ``postgres`` retriever's template and its ``--cache-key-sql`` are text a received
workspace holds. They run in a read-only transaction, and only as one statement: the
server refuses a second statement before anything runs, and a statement that ends the
transaction stops the retriever before anything else is sent. Debian's PostgreSQL 15 is
started here (:mod:`tests.pgserver`); each case checks the table it aimed at is still
there, whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.retrieve import RetrieverError, new_spec
from engine.retrieve.runner import refresh_runs
from engine.trust import TrustStore
from engine.workspace import Workspace
from tests.conftest import TINY_DOCS
from tests.pgserver import PgServer, start_server, stop_server

psycopg = pytest.importorskip("psycopg", reason="needs psycopg (pip install 'goldpan[postgres]')")

DSN_ENV = "GOLDPAN_TEST_PG_DSN"
TEMPLATE = "SELECT id, 1.0 FROM docs WHERE %(query)s <> ''"


@pytest.fixture(scope="module")
def pg():
    server = start_server()
    with psycopg.connect(server.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE docs (id text PRIMARY KEY)")
        conn.execute(
            "INSERT INTO docs SELECT id FROM unnest(%s::text[]) AS id", ([d.id for d in TINY_DOCS],)
        )
    yield server
    stop_server(server)


@pytest.fixture
def victim(pg: PgServer, monkeypatch: pytest.MonkeyPatch) -> PgServer:
    """A table ``victim`` holding three rows, and the DSN in the environment."""
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS victim")
        conn.execute("CREATE TABLE victim AS SELECT generate_series(1, 3) AS n")
    monkeypatch.setenv(DSN_ENV, pg.dsn())
    return pg


def victim_rows(pg: PgServer) -> int | None:
    """The rows of ``victim`` (None: the table is gone)."""
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('victim')").fetchone()[0] is None:
            return None
        return int(conn.execute("SELECT count(*) FROM victim").fetchone()[0])


def pool_with(path: Path, template: str, **params: object) -> str:
    """Pool a trusted postgres retriever in workspace ``path``; the error it stopped with."""
    ws = Workspace.open(path)
    sql = path.parent / "t.sql"
    sql.write_text(template, encoding="utf-8")
    spec = new_spec("pg", "postgres", {"dsn_env": DSN_ENV, "sql": str(sql), **params})
    ws.add_retriever(spec)
    store = TrustStore(path.parent / "trust.json")
    store.trust(ws, [spec])  # the owner trusted it: the server's rule still holds
    ws.close()
    with Workspace.open(path) as ws, pytest.raises(RetrieverError) as caught:
        refresh_runs(ws, ["pg"], trust=store)
    with Workspace.open(path, readonly=True) as ws:
        assert ws.run_hashes("pg") == {}
    return " ".join(str(caught.value).split())


def test_a_cache_key_query_cannot_end_the_read_only_transaction_and_drop_a_table(victim, tiny_ws):
    said = pool_with(tiny_ws, TEMPLATE, cache_key_sql="SELECT 1; COMMIT; DROP TABLE victim")
    assert "postgres retriever pg: its --cache-key-sql failed" in said
    assert "cannot insert multiple commands" in said
    assert victim_rows(victim) == 3


def test_a_cache_key_query_that_commits_is_stopped_before_anything_else_is_sent(victim, tiny_ws):
    said = pool_with(tiny_ws, TEMPLATE, cache_key_sql="COMMIT")
    assert "its --cache-key-sql ended the read-only transaction" in said
    assert victim_rows(victim) == 3


def test_a_template_of_several_statements_is_refused_before_any_runs(victim, tiny_ws):
    template = TEMPLATE + "; COMMIT; DELETE FROM victim"
    said = pool_with(tiny_ws, template)
    assert "the SQL template failed" in said and "cannot insert multiple commands" in said
    assert victim_rows(victim) == 3


def test_a_template_cannot_write_even_in_one_statement(victim, tiny_ws):
    template = "WITH gone AS (DELETE FROM victim RETURNING n) SELECT %(query)s, n FROM gone"
    said = pool_with(tiny_ws, template)
    assert "tried to write" in said and "read-only transaction" in said
    assert victim_rows(victim) == 3
