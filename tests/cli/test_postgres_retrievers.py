"""`goldpan retriever add`, `pool` and `trust` with a ``postgres`` retriever: the options and
refusals, what is printed and asked, and the extra to install without psycopg. The kind's
rankings, keys and errors are checked through the engine in tests/engine/retrieve/test_postgres.py
(whose server helpers these tests share)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.types import Doc, Question
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import ROOT, run_cli
from tests.engine.retrieve.test_postgres import DSN_ENV, KO_TEMPLATE, connections
from tests.pgserver import start_server, stop_server


@pytest.fixture(scope="module")
def loaded():
    """A PostgreSQL server (no table needed: the templates here select from VALUES)."""
    server = start_server()
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def dsn(loaded):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(DSN_ENV, loaded.dsn())
        yield loaded.dsn()


@pytest.fixture(scope="module")
def sql_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sql") / "ko_tsvector.sql"
    path.write_text(KO_TEMPLATE, encoding="utf-8")
    return path


def test_retriever_add_reads_the_sql_file_and_checks_it(tmp_path, capsys, sql_file):
    ws = tmp_path / "w.db"
    assert run_cli(capsys, "new", ws)[0] == 0
    add = ["retriever", "add", ws]
    code, out, err = run_cli(
        capsys, *add, "pg", "--kind", "postgres", "--dsn-env", DSN_ENV, "--sql", sql_file
    )
    assert code == 0, err
    missing = tmp_path / "missing.sql"
    code, _, err = run_cli(
        capsys, *add, "pg2", "--kind", "postgres", "--dsn-env", DSN_ENV, "--sql", missing
    )
    assert code == 2 and f"postgres --sql: cannot read {missing}" in " ".join(err.split())
    code, _, err = run_cli(
        capsys, *add, "pg3", "--kind", "postgres", "--dsn-env", "NOT-A-VAR", "--sql", sql_file
    )
    assert code == 2 and "an environment variable name" in err
    code, out, _ = run_cli(capsys, "retriever", "list", ws, "--json")
    import json

    specs = {s["name"]: s for s in json.loads(out)}
    assert set(specs) >= {"pg"} and "pg2" not in specs and "pg3" not in specs
    assert specs["pg"]["params"]["sql"] == KO_TEMPLATE


def test_retriever_add_help_lists_the_postgres_options(capsys):
    code, out, _ = run_cli(capsys, "retriever", "add", "--help")
    text = " ".join(out.split())
    assert code == 0
    for flag in ("--dsn-env VAR", "--sql FILE", "--embed-model NAME_OR_PATH", "--cache-key-sql"):
        assert flag in text


def test_without_psycopg_the_error_says_what_to_install(tmp_path, sql_file):
    """A Python that cannot import psycopg: exit 2 and the extra to install."""
    ws = tmp_path / "w.db"
    hide = (
        "import sys, importlib.abc\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'psycopg' or name.startswith('psycopg.') or name.startswith"
        "('psycopg_'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
        "from tui.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "c")}

    def goldpan(*argv: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", hide, *map(str, argv)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
            timeout=120,
        )

    assert goldpan("new", ws).returncode == 0
    done = goldpan(
        "retriever", "add", ws, "pg", "--kind", "postgres", "--dsn-env", "X", "--sql", sql_file
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'goldpan[postgres]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_pool_skips_it_until_goldpan_trust(dsn, loaded, tmp_path, capsys):
    path = tmp_path / "cli.db"
    ws = new_workspace(path)
    ws.write_docs([Doc(d, "", "x", {}) for d in ("a", "b")])
    ws.write_questions([Question("q1", "anything")])
    ws.close()
    sql = tmp_path / "q.sql"
    sql.write_text(
        "SELECT id, 1.0 FROM (VALUES ('a'), ('b')) AS t(id) WHERE %(query)s <> ''",
        encoding="utf-8",
    )
    code, _, err = run_cli(
        capsys,
        "retriever",
        "add",
        path,
        "pg",
        "--kind",
        "postgres",
        "--dsn-env",
        DSN_ENV,
        "--sql",
        sql,
    )
    assert code == 0, err
    before = connections(loaded)
    code, out, err = run_cli(capsys, "pool", path, "--retriever", "pg", "--quiet")
    said = " ".join((out + err).split())
    assert "pg" in said and "not trusted" in said and "goldpan trust" in said
    assert connections(loaded) == before
    code, out, err = run_cli(capsys, "trust", path, "--yes")
    assert code == 0, err
    assert "postgres --dsn-env GOLDPAN_TEST_PG_DSN --sql sha256:" in " ".join(out.split())
    code, out, err = run_cli(capsys, "pool", path, "--retriever", "pg", "--quiet")
    assert code == 0, err
    assert connections(loaded) == before + 1
    with Workspace.open(path, readonly=True) as ws:
        assert list(ws.runs("pg")["q1"].doc_ids) == ["b", "a"]
