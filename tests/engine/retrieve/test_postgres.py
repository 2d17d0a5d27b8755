"""The ``postgres`` retriever kind against a real PostgreSQL server (Debian's, started here).

One server for the module (:mod:`tests.pgserver`): initdb + pg_ctl in a temp folder, on a
Unix socket, password authentication, every connection logged. The Korean case is the
docs/retrievers.md's: a bigram ``tsvector`` built when the paragraphs are loaded (``ko_bigrams``, a
SQL function giving goldpan's ``bigram`` tokens) and ranked with ``ts_rank_cd``; goldpan's
cached rankings must equal, id for id and score for score, what ``psql`` (a separate
program) prints for the same SQL.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import BadInput
from engine.retrieve import RetrieverError, build_retriever, new_spec, trec_order
from engine.retrieve.runner import refresh_runs
from engine.trust import TrustStore
from engine.types import Doc, Question, RetrieverSpec
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, TINY_QUESTIONS, shared_data
from tests.pgserver import (
    KO_BIGRAMS_SQL,
    PASSWORD,
    TSVECTOR_TEMPLATE,
    PgServer,
    korquad_subset,
    start_server,
    stop_server,
)

psycopg = pytest.importorskip("psycopg", reason="needs psycopg (pip install 'goldpan[postgres]')")

DSN_ENV = "GOLDPAN_TEST_PG_DSN"
DEPTH = 20
KO_TEMPLATE = TSVECTOR_TEMPLATE.replace("FROM docs", "FROM ko")


@pytest.fixture(scope="module")
def pg():
    server = start_server()
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def korquad():
    return korquad_subset(shared_data("korquad_v1.0_dev", "KorQuAD_v1.0_dev.json"))


def load_docs(pg: PgServer, table: str, docs: list[Doc]) -> None:
    """Docs into ``table``, each with its bigram tsvector made as it is loaded."""
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        conn.execute(KO_BIGRAMS_SQL)
        conn.execute(
            f"CREATE TABLE {table} (id text PRIMARY KEY, title text NOT NULL, "
            "body text NOT NULL, tsv tsvector NOT NULL)"
        )
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {table} VALUES (%s, %s, %s, "
                "to_tsvector('simple', ko_bigrams(%s || ' ' || %s)))",
                [(d.id, d.title, d.text, d.title, d.text) for d in docs],
            )
        conn.execute(f"CREATE INDEX {table}_tsv ON {table} USING gin (tsv)")


def new_ws(path: Path, docs: list[Doc], questions: list[Question]) -> Path:
    ws = new_workspace(path)
    ws.write_docs(docs)
    ws.write_questions(questions)
    ws.close()
    return path


@pytest.fixture(scope="module")
def loaded(pg: PgServer):
    """The small corpus (tests.conftest's four docs) as table ``docs``, and a version row."""
    load_docs(pg, "docs", TINY_DOCS)
    with psycopg.connect(pg.dsn(), autocommit=True) as conn:
        conn.execute("CREATE TABLE corpus_version (v int NOT NULL)")
        conn.execute("INSERT INTO corpus_version VALUES (1)")
    return pg


@pytest.fixture(scope="module")
def dsn(loaded: PgServer):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(DSN_ENV, loaded.dsn())
        yield loaded.dsn()


@pytest.fixture(scope="module")
def ws_path(tmp_path_factory) -> Path:
    """A workspace with the same four docs and questions (no retrievers pooled)."""
    return new_ws(tmp_path_factory.mktemp("pgws") / "tiny.db", TINY_DOCS, TINY_QUESTIONS)


@pytest.fixture(scope="module")
def ko_path(tmp_path_factory, loaded, korquad) -> Path:
    """KorQuAD paragraphs as table ``ko`` and a workspace with them and their questions."""
    docs, questions, _ = korquad
    load_docs(loaded, "ko", docs)
    return new_ws(tmp_path_factory.mktemp("kows") / "ko.db", docs, questions)


@pytest.fixture(scope="module")
def sql_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sql") / "ko_tsvector.sql"
    path.write_text(KO_TEMPLATE, encoding="utf-8")
    return path


def trust_file(tmp: Path, ws_path: Path, names: list[str]) -> TrustStore:
    """A trust record (outside the user's) trusting ``names`` of the workspace."""
    store = TrustStore(tmp / "trust.json")
    with Workspace.open(ws_path) as ws:
        store.trust(ws, [s for s in ws.retrievers() if s.name in names])
    return store


def add(ws_path: Path, name: str, sql: str | Path, **params: object) -> RetrieverSpec:
    """A postgres retriever added through the engine (``sql``: a file or a template)."""
    if isinstance(sql, str):
        tmp = ws_path.parent / f"{name}.sql"
        tmp.write_text(sql, encoding="utf-8")
        sql = tmp
    spec = new_spec(name, "postgres", {"dsn_env": DSN_ENV, "sql": str(sql), **params})
    with Workspace.open(ws_path) as ws:
        ws.add_retriever(spec)
    return spec


def pool(ws_path: Path, name: str, tmp: Path, **kw):
    store = trust_file(tmp, ws_path, [name])
    with Workspace.open(ws_path) as ws:
        return refresh_runs(ws, [name], depth=DEPTH, trust=store, **kw)


def connections(pg: PgServer) -> int:
    """How many goldpan connections the server has logged so far."""
    log = (pg.root / "log").read_text(encoding="utf-8", errors="replace")
    return log.count("application_name=goldpan")


def psql_rankings(pg: PgServer, template: str, questions: list[Question], k: int):
    """Each question's (doc id, score) rows from ``psql`` running the same SQL.

    psql has no bound parameters before PostgreSQL 16: the question goes in as a psql
    variable quoted by psql itself (``:'query'``).
    """
    body = template.replace("%(query)s", ":'query'").replace("%(k)s", ":k").replace("%%", "%")
    script = [f"\\set k {k}"]
    variables: list[str] = []
    for i, q in enumerate(questions):
        variables += ["-v", f"q{i}={q.text}"]
        script += [f"\\echo '@@ {i}'", f"\\set query :q{i}", body.strip().rstrip(";") + ";"]
    out = pg.psql(*variables, sql="\n".join(script) + "\n")
    rankings: dict[int, tuple[list[str], list[float]]] = {}
    current = -1
    for line in out.splitlines():
        if line.startswith("@@ "):
            current = int(line[3:])
            rankings[current] = ([], [])
        elif line:
            doc, score = line.split("\t")
            rankings[current][0].append(doc)
            rankings[current][1].append(float(score))
    return [rankings[i] for i in range(len(questions))]


# -- the Korean tsvector case, against psql ---------------------------------------------


@pytest.fixture(scope="module")
def pooled(ko_path, sql_file, dsn, loaded, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trust")
    before = connections(loaded)
    add(ko_path, "pg-ko", sql_file)
    report = pool(ko_path, "pg-ko", tmp)
    return report, connections(loaded) - before


def test_tsvector_rankings_equal_psql_row_for_row(pooled, ko_path, loaded, korquad):
    _, questions, gold = korquad
    with Workspace.open(ko_path, readonly=True) as ws:
        runs = ws.runs("pg-ko")
    expected = psql_rankings(loaded, KO_TEMPLATE, questions, DEPTH)
    assert len(runs) == len(questions) == 50
    for q, (ids, scores) in zip(questions, expected, strict=True):
        assert list(runs[q.id].doc_ids) == ids, q.id
        assert list(runs[q.id].scores) == scores, q.id  # the same float4 text, parsed
    # and the SQL retrieves: most questions find their own paragraph in the top 10
    hit10 = sum(gold[q.id] in runs[q.id].doc_ids[:10] for q in questions) / len(questions)
    assert hit10 >= 0.8


def test_one_connection_per_pool_and_ranked_again_on_every_pool(pooled, ko_path, loaded, tmp_path):
    report, opened = pooled
    assert report.ran["pg-ko"] == 50
    assert opened == 1  # and no question asked again only to be timed alone
    before = connections(loaded)
    again = pool(ko_path, "pg-ko", tmp_path)
    assert again.ran["pg-ko"] == 50
    assert again.how["pg-ko"] == "ranked now (postgres, no cache key)"
    assert connections(loaded) == before + 1


def test_the_stored_spec_holds_the_sql_text_and_never_the_connection_string(pooled, ko_path):
    with Workspace.open(ko_path, readonly=True) as ws:
        spec = next(s for s in ws.retrievers() if s.name == "pg-ko")
    assert spec.params["sql"] == KO_TEMPLATE
    assert spec.params["dsn_env"] == DSN_ENV
    raw = b"".join(p.read_bytes() for p in ko_path.parent.glob("ko.db*"))
    assert PASSWORD.encode() not in raw


def test_tied_scores_are_ordered_the_trec_eval_way(ws_path, dsn, tmp_path):
    """Every document scores 1, returned in random order: goldpan keeps doc id descending."""
    template = "SELECT id, 1 AS score FROM docs WHERE %(query)s <> '' ORDER BY random()"
    add(ws_path, "pg-ties", template)
    pool(ws_path, "pg-ties", tmp_path)
    with Workspace.open(ws_path, readonly=True) as ws:
        runs = ws.runs("pg-ties")
    want = trec_order(dict.fromkeys([d.id for d in TINY_DOCS], 1.0), DEPTH)
    assert want[0] == ["d4", "d3", "d2", "d1"]
    for q in TINY_QUESTIONS:
        assert (list(runs[q.id].doc_ids), list(runs[q.id].scores)) == want


# -- what is and is not cached ----------------------------------------------------------


def test_a_declared_cache_key_keeps_rankings_until_the_data_changes(
    ws_path, dsn, sql_file, loaded, tmp_path
):
    add(ws_path, "pg-keyed", TSVECTOR_TEMPLATE, cache_key_sql="SELECT max(v) FROM corpus_version")
    n = len(TINY_QUESTIONS)
    first = pool(ws_path, "pg-keyed", tmp_path)
    assert first.ran["pg-keyed"] == n
    again = pool(ws_path, "pg-keyed", tmp_path)
    assert again.ran["pg-keyed"] == 0 and again.cached["pg-keyed"] == n
    assert again.how["pg-keyed"] == "cached, inputs and cache key unchanged"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE corpus_version SET v = v + 1")
    changed = pool(ws_path, "pg-keyed", tmp_path)
    assert changed.ran["pg-keyed"] == n


# -- bad input: a clear error naming the retriever, nothing stored ------------------------


def failing_pool(ws_path: Path, tmp: Path, name: str, template: str, **params: object) -> str:
    add(ws_path, name, template, **params)
    with pytest.raises(RetrieverError) as caught:
        pool(ws_path, name, tmp)
    with Workspace.open(ws_path, readonly=True) as ws:
        assert ws.run_hashes(name) == {}, "nothing is stored for a retriever that failed"
    message = str(caught.value)
    assert f"postgres retriever {name}" in message
    assert PASSWORD not in message
    return message


QUERY = "SELECT id, 1.0 FROM docs WHERE %(query)s IS NOT NULL LIMIT %(k)s"


def test_missing_environment_variable(ws_path, dsn, tmp_path, monkeypatch):
    monkeypatch.delenv(DSN_ENV)
    message = failing_pool(ws_path, tmp_path, "pg-noenv", QUERY)
    assert f"the environment variable {DSN_ENV} is not set" in message


def test_refused_connection(ws_path, dsn, tmp_path, monkeypatch):
    import socket

    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv(DSN_ENV, f"host=127.0.0.1 port={port} user=x password={PASSWORD}")
    message = failing_pool(ws_path, tmp_path, "pg-refused", QUERY)
    assert "cannot connect" in message and "Connection refused" in message


def test_authentication_failure(ws_path, loaded, dsn, tmp_path, monkeypatch):
    monkeypatch.setenv(DSN_ENV, loaded.dsn(password="wrong-" + PASSWORD))
    message = failing_pool(ws_path, tmp_path, "pg-auth", QUERY)
    assert 'password authentication failed for user "postgres"' in message


def test_a_sql_error_quotes_the_server(ws_path, dsn, tmp_path):
    message = failing_pool(
        ws_path, tmp_path, "pg-syntax", "SELEC id, 1 FROM docs WHERE %(query)s <> ''"
    )
    assert 'syntax error at or near "SELEC"' in message and "SQLSTATE 42601" in message
    message = failing_pool(
        ws_path, tmp_path, "pg-nocol", "SELECT id, nope FROM docs WHERE %(query)s <> ''"
    )
    assert 'column "nope" does not exist' in message


@pytest.mark.parametrize(
    ("template", "words"),
    [
        ("SELECT id FROM docs WHERE %(query)s <> ''", "returned 1 columns (id)"),
        ("SELECT id, 1, 2 FROM docs WHERE %(query)s <> ''", "returned 3 columns"),
        ("SELECT id, title FROM docs WHERE %(query)s <> ''", "is not a finite number"),
        ("SELECT id, NULL::float FROM docs WHERE %(query)s <> ''", "score None"),
        ("SELECT id, 'NaN'::float FROM docs WHERE %(query)s <> ''", "not a finite number"),
        ("SELECT 'no-such-doc', 1.0 WHERE %(query)s <> ''", "'no-such-doc' is not in the"),
        (
            "SELECT id, 1.0 FROM docs, generate_series(1, 2) WHERE %(query)s <> ''",
            "is listed twice",
        ),
        ("SELECT now(), 1.0 WHERE %(query)s <> ''", "is not text or a whole number"),
    ],
)
def test_rows_that_are_not_doc_id_score(ws_path, dsn, tmp_path, template, words):
    import hashlib

    name = "pg-rows-" + hashlib.sha256(template.encode()).hexdigest()[:8]
    assert words in failing_pool(ws_path, tmp_path, name, template)


def test_a_template_cannot_write(ws_path, dsn, tmp_path):
    template = "WITH gone AS (DELETE FROM docs RETURNING id) SELECT id, 1.0 FROM gone, " + (
        "(SELECT %(query)s) AS q"
    )
    message = failing_pool(ws_path, tmp_path, "pg-write", template)
    assert "read-only transaction" in message
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT count(*) FROM docs").fetchone()[0] == len(TINY_DOCS)


def test_a_slow_query_stops_at_the_timeout(ws_path, dsn, tmp_path):
    template = "SELECT id, 1.0 FROM docs, pg_sleep(5) WHERE %(query)s <> '' LIMIT 1"
    message = failing_pool(ws_path, tmp_path, "pg-slow", template, timeout=0.2)
    assert "no answer within 0.2 s" in message and "statement timeout" in message


@pytest.mark.parametrize(
    ("template", "params", "words"),
    [
        ("SELECT id, 1.0 FROM docs LIMIT %(k)s", {}, "never uses %(query)s"),
        ("SELECT id, 1.0 FROM docs WHERE title = %s", {}, "%s is a positional placeholder"),
        ("SELECT id, 1.0 FROM docs\nWHERE %(qury)s <> ''", {}, "line 2: unknown placeholder"),
        ("SELECT id, 1.0 FROM docs WHERE title LIKE '%' || %(query)s", {}, "written %%"),
        (
            "SELECT id, 1.0 FROM docs ORDER BY emb <=> %(embedding)s::vector",
            {},
            "name the model that embeds the questions with --embed-model",
        ),
    ],
)
def test_bad_templates_are_refused_when_added(tmp_path, template, params, words):
    sql = tmp_path / "t.sql"
    sql.write_text(template, encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        new_spec("pg-bad", "postgres", {"dsn_env": DSN_ENV, "sql": str(sql), **params})
    assert words in str(caught.value)


def test_doc_ids_may_be_whole_numbers(tmp_path, dsn, loaded):
    """An integer id column is read as text: the workspace's ids are text."""
    path = tmp_path / "n.db"
    ws = new_workspace(path)
    ws.write_docs([Doc("7", "", "x", {}), Doc("10", "", "y", {})])
    ws.write_questions([Question("q", "anything")])
    ws.close()
    add(path, "pg-int", "SELECT n, 0.5 FROM (VALUES (7), (10)) AS t(n) WHERE %(query)s <> ''")
    pool(path, "pg-int", tmp_path)
    with Workspace.open(path, readonly=True) as ws:
        run = ws.runs("pg-int")["q"]
    assert list(run.doc_ids) == ["7", "10"]  # tied: "7" > "10" by code point


# -- trust: nothing is sent to a database until this user trusted exactly this ------------


def test_an_untrusted_postgres_retriever_never_connects(ws_path, dsn, loaded, tmp_path):
    spec = add(ws_path, "pg-untrusted", QUERY)
    before = connections(loaded)
    with Workspace.open(ws_path) as ws:
        report = refresh_runs(ws, ["pg-untrusted"], trust=TrustStore(tmp_path / "none.json"))
        assert ws.run_hashes("pg-untrusted") == {}
    assert connections(loaded) == before
    import hashlib

    digest = hashlib.sha256(QUERY.encode()).hexdigest()
    assert report.untrusted == {
        "pg-untrusted": f"postgres --dsn-env {DSN_ENV} --sql sha256:{digest}"
    }
    assert spec.params["sql"] == QUERY


def test_trust_is_for_the_exact_template_and_variable(ws_path, dsn, tmp_path):
    store = TrustStore(tmp_path / "trust.json")
    with Workspace.open(ws_path) as ws:
        trusted = new_spec_text("pg-exact", QUERY, DSN_ENV)
        ws.add_retriever(trusted)
        store.trust(ws, [trusted])
        assert store.trusts(ws, trusted)
        other_sql = new_spec_text("pg-exact", QUERY + " ", DSN_ENV)
        other_var = new_spec_text("pg-exact", QUERY, "OTHER_DSN")
        keyed = new_spec_text("pg-exact", QUERY, DSN_ENV, cache_key_sql="SELECT 1")
        assert not store.trusts(ws, other_sql)
        assert not store.trusts(ws, other_var)
        assert not store.trusts(ws, keyed)


def new_spec_text(name: str, sql: str, env: str, **params: object) -> RetrieverSpec:
    return RetrieverSpec(name, "postgres", {"dsn_env": env, "sql": sql, **params})


def test_fidelity_of_ts_rank_cd_against_goldpans_bm25(pooled, ko_path, loaded, korquad):
    """ts_rank_cd ties a lot: the tie share fidelity reports is the one in psql's own rows."""
    import json

    from engine.analysis.fidelity import fidelity

    _, questions, _ = korquad
    with Workspace.open(ko_path) as ws:
        refresh_runs(ws, ["bm25-bigram"])  # pg-ko: pooled by the fixture
        got = json.loads(json.dumps(fidelity(ws, "pg-ko", "bm25-bigram").to_json()))
    assert got["questions"] == 50
    rows = tied = 0
    firsts = []
    for ids, scores in psql_rankings(loaded, KO_TEMPLATE, questions, DEPTH):
        rows += min(10, len(ids))
        tied += sum(scores.count(s) > 1 for s in scores[:10])
        firsts.append(ids[0] if ids else None)
    assert got["tie_share"]["pg-ko"] == pytest.approx(tied / rows)
    assert got["tie_share"]["bm25-bigram"] < 0.05
    with Workspace.open(ko_path, readonly=True) as ws:
        ours = ws.runs("bm25-bigram")
    same = sum(f == ours[q.id].doc_ids[0] for f, q in zip(firsts, questions, strict=True))
    assert got["top1_agreement"] == pytest.approx(same / 50)
    mostly = [w for w in got["warnings"] if w.startswith("pg-ko's top 10 is mostly ties")]
    assert bool(mostly) == (tied / rows > 0.5)


def test_the_cache_key_works_for_a_role_not_allowed_to_read_the_system_identifier(
    ws_path, loaded, dsn, tmp_path, monkeypatch
):
    """pg_control_system() refused to the role: the key is still made (the database's
    name and the query's rows), in the same read-only transaction."""
    with psycopg.connect(loaded.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE reader LOGIN PASSWORD '{PASSWORD}'")
        conn.execute("GRANT SELECT ON docs, corpus_version TO reader")
        conn.execute("REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC")
    monkeypatch.setenv(DSN_ENV, loaded.dsn(user="reader"))
    key_sql = "SELECT max(v), count(*) FILTER (WHERE 'abc' LIKE 'a%%') FROM corpus_version"
    add(ws_path, "pg-reader", TSVECTOR_TEMPLATE, cache_key_sql=key_sql)
    first = pool(ws_path, "pg-reader", tmp_path)
    again = pool(ws_path, "pg-reader", tmp_path)
    assert first.ran["pg-reader"] == len(TINY_QUESTIONS) and again.ran["pg-reader"] == 0
    with pytest.raises(BadInput, match="takes no placeholders"):
        build_retriever(new_spec_text("x", QUERY, DSN_ENV, cache_key_sql="SELECT %(query)s"))
