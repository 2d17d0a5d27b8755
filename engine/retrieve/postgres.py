"""A PostgreSQL database as a retriever: a SQL template run for every question.

The template is stored in the workspace (``retriever add --sql FILE`` reads the file) and
sent to the server as given, never formatted into a string: its named placeholders are
bound parameters, ``%(query)s`` the question's text, ``%(k)s`` the pool depth, and with
``--embed-model`` ``%(embedding)s`` the question's normalised sentence-transformers
embedding in pgvector's text form (``'[0.1,…]'``, cast it with ``::vector``). A literal
``%`` is written ``%%`` (psycopg's rule). It returns ``(doc_id, score)`` rows; they are
re-ordered the trec_eval way (score descending, then doc id descending), so a template
that orders ``score DESC, doc_id COLLATE "C" DESC`` keeps the rows goldpan would keep at
its ``LIMIT``.

The connection string is read from the environment variable ``--dsn-env`` names, when
the retriever runs; it is never stored. One connection per pool run, and every question
in one read-only transaction (``SET TRANSACTION READ ONLY``, repeatable read: one
snapshot of the data for the whole pool), so a template cannot write. SQL the workspace
holds (the template, ``--cache-key-sql``) runs by the server's rule
(:meth:`PostgresRetriever._run`): always with the extended query protocol, which takes one
statement only (``SELECT 1; COMMIT; DROP TABLE t`` is refused by the server before
anything runs), and a statement that ends the read-only transaction (``COMMIT``) stops
the retriever before anything else is sent.

The database can change while the corpus, questions and template stay the same, so a
postgres retriever's rankings are made again on every pool (as a ``command``'s are)
unless it declares ``--cache-key-sql``: a query whose result says which state of the
data the rankings come from (``SELECT count(*), max(updated_at) FROM docs``). Its rows,
the server's system identifier and the database's name are hashed into the cached
rankings' input hash.

Errors name the retriever: a missing variable, a refused connection, an authentication
failure, a SQL error (with the server's message), rows that are not ``(doc_id, score)``,
a document unknown to the workspace or listed twice for one question, a template without
``%(query)s``; without psycopg, what to install.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from engine.errors import BadInput
from engine.retrieve.base import PrepareEnv, Ranking, RetrieverError
from engine.retrieve.checked import checked_ranking
from engine.retrieve.deadline import Deadline
from engine.retrieve.params import Param, resolve, timeout
from engine.types import Doc, Question, RetrieverSpec

INSTALL_HINT = "postgres retrievers need the optional extra: pip install 'goldpan[postgres]'"
DEFAULT_TIMEOUT_S = 30.0
TIMEOUT = timeout(DEFAULT_TIMEOUT_S, "one question's query may take (statement_timeout)")
"""``--timeout``: each question's query (the server's statement_timeout)."""
CONNECT_TIMEOUT_S = 10
ROWS_MARGIN_S = 10.0
"""How much longer than ``--timeout`` a question's whole answer may take to arrive."""
PLACEHOLDERS = ("query", "k", "embedding")
"""The named parameters a template may use."""

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PERCENT = re.compile(r"%(?:%|\((?P<name>[^)]*)\)(?P<named>[sbt])?|(?P<bare>[sbt])?)")


def _check_env_name(value: Any) -> bool:
    return isinstance(value, str) and bool(_ENV_NAME.match(value))


def require_psycopg() -> None:
    """Raise :class:`RetrieverError` with the install command when psycopg cannot load.

    Imported, not only looked up: psycopg without a libpq (plain ``psycopg`` on a machine
    without the library) is there but cannot connect.
    """
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise RetrieverError(f"{INSTALL_HINT} ({' '.join(str(exc).split())})") from None


def template_names(sql: str, what: str) -> set[str]:
    """The named placeholders ``sql`` uses, every ``%`` checked.

    Raises:
        BadInput: a positional ``%s``, an unknown name, or a ``%`` that is not ``%%``
            (naming the line).
    """
    names: set[str] = set()
    for m in _PERCENT.finditer(sql):
        text = m.group(0)
        if text == "%%":
            continue
        line = sql.count("\n", 0, m.start()) + 1
        if m.group("bare"):
            raise BadInput(
                f"{what} line {line}: {text} is a positional placeholder; use the named "
                "ones: %(query)s, %(k)s, %(embedding)s"
            )
        name = m.group("name")
        if name is None or not m.group("named"):
            raise BadInput(
                f"{what} line {line}: a literal % is written %% in the template "
                "(psycopg's rule), e.g. LIKE 'a%%'"
            )
        if name not in PLACEHOLDERS:
            raise BadInput(
                f"{what} line {line}: unknown placeholder %({name})s; "
                "known: %(query)s, %(k)s, %(embedding)s"
            )
        names.add(name)
    return names


def _server_words(exc: Exception) -> str:
    """The server's message of a psycopg error (its first lines), else the error's own."""
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    if primary:
        detail = getattr(diag, "message_detail", None)
        hint = getattr(diag, "message_hint", None)
        code = getattr(exc, "sqlstate", None)
        text = str(primary)
        text += f" ({detail})" if detail else ""
        text += f"; hint: {hint}" if hint else ""
        return text + (f" [SQLSTATE {code}]" if code else "")
    return " ".join(str(exc).split())


class PostgresRetriever:
    """Runs a SQL template once per question, all of a pool on one connection."""

    PARAMS: tuple[Param, ...] = (
        Param(
            "dsn_env",
            str,
            None,
            "the environment variable holding the connection string (read when the "
            "retriever runs, never stored)",
            required=True,
            check=_check_env_name,
            must="an environment variable name (letters, digits, _)",
            metavar="VAR",
        ),
        Param(
            "sql",
            str,
            None,
            "a file holding the SQL template (its text is stored in the workspace): bound "
            "parameters %(query)s, %(k)s and, with --embed-model, %(embedding)s; it "
            "returns (doc_id, score) rows",
            required=True,
            metavar="FILE",
            from_file=True,
        ),
        Param(
            "embed_model",
            str,
            None,
            "a sentence-transformers model: each question's normalised embedding is "
            "bound as %(embedding)s (pgvector text, cast with ::vector)",
            metavar="NAME_OR_PATH",
        ),
        Param("query_prefix", str, "", "text put before each question it embeds"),
        Param(
            "cache_key_sql",
            str,
            None,
            "a query whose result says which state of the data the rankings come from "
            "(e.g. SELECT count(*), max(updated_at) FROM docs): cached while it returns "
            "the same on the same server (default: ranked again on every score, compare "
            "and pool)",
            metavar="SQL",
        ),
        TIMEOUT,
    )
    """The parameters of the ``postgres`` kind."""

    bases: tuple[str, ...] = ()
    base_depth: int | None = None
    batch_size = 1_000_000
    key_words = "cache key"

    def __init__(self, spec: RetrieverSpec) -> None:
        """Validate the template, the variable name and the timeout; check psycopg."""
        self.spec = spec
        p = spec.params
        self.name = f"postgres retriever {spec.name}"
        self.dsn_env = str(p.get("dsn_env") or "").strip()
        if not self.dsn_env:
            raise BadInput("a postgres retriever needs --dsn-env VAR")
        if not _check_env_name(self.dsn_env):
            raise BadInput(
                f"postgres --dsn-env: {self.dsn_env!r} is not an environment variable name "
                "(letters, digits, _)"
            )
        sql = p.get("sql")
        if not isinstance(sql, str) or not sql.strip():
            raise BadInput("a postgres retriever needs --sql FILE (a SQL template)")
        self.sql: str = sql
        embed = p.get("embed_model")
        self.embed_model = str(embed).strip() if embed else None
        self.query_prefix = str(p.get("query_prefix") or "")
        names = template_names(self.sql, f"postgres retriever {spec.name}'s SQL template")
        if "embedding" in names and not self.embed_model:
            raise BadInput(
                f"{self.name}: the SQL template uses %(embedding)s; name the model that "
                "embeds the questions with --embed-model"
            )
        if self.embed_model and "embedding" not in names:
            raise BadInput(
                f"{self.name}: --embed-model is given but the SQL template never uses %(embedding)s"
            )
        if "query" not in names and "embedding" not in names:
            raise BadInput(
                f"{self.name}: the SQL template never uses %(query)s (nor %(embedding)s "
                "with --embed-model): every question would get the same ranking"
            )
        self.uses = names
        self.timeout: float = resolve((TIMEOUT,), p, "postgres")["timeout"]
        key_sql = p.get("cache_key_sql")
        self.cache_key_sql = str(key_sql) if key_sql and str(key_sql).strip() else None
        if self.cache_key_sql is not None and template_names(
            self.cache_key_sql, f"{self.name}'s --cache-key-sql"
        ):
            raise BadInput(
                f"{self.name}: --cache-key-sql takes no placeholders: it runs once per pool, "
                "not per question"
            )
        require_psycopg()
        if self.embed_model:
            from engine.retrieve.models import require_extra

            require_extra()
        self._docs: set[str] | None = None
        self._model: Any = None

    def prepare(
        self, docs: Sequence[Doc], cache: dict[Any, Any], env: PrepareEnv | None = None
    ) -> None:
        """Remember the corpus's doc ids; load the embedding model when there is one."""
        self._docs = {d.id for d in docs}
        if self.embed_model:
            from engine.retrieve.models import load_model

            if env is not None and env.progress:
                env.progress(f"{self.spec.name}: loading the model", 0, 1)
            # runs only once trusted, and its trust covers embed_model (engine.trust)
            self._model = load_model(self.embed_model, cache, online=True)

    def _dsn(self) -> str:
        dsn = os.environ.get(self.dsn_env)
        if dsn is None:
            raise RetrieverError(
                f"{self.name}: the environment variable {self.dsn_env} is not set "
                "(it holds the connection string, e.g. postgresql://user@host/db)"
            )
        if not dsn.strip():
            raise RetrieverError(f"{self.name}: the environment variable {self.dsn_env} is empty")
        return dsn

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        """One connection and one read-only transaction; a cursor on it.

        Raises:
            RetrieverError: the variable is unset, or the server cannot be reached or
                refuses the login (the server's words, never the connection string).
        """
        require_psycopg()
        import psycopg

        dsn = self._dsn()
        try:
            conn = psycopg.connect(
                dsn,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="goldpan",
                # no server-side prepared statements: behind a pooler (PgBouncer) or on
                # PGlite, sessions are shared and a prepared name may already be taken
                prepare_threshold=None,
            )
        except psycopg.Error as exc:
            words = _server_words(exc).replace(dsn, "…")
            if isinstance(exc, psycopg.ProgrammingError):
                raise RetrieverError(
                    f"{self.name}: the connection string in ${self.dsn_env} is not valid ({words})"
                ) from None
            raise RetrieverError(
                f"{self.name}: cannot connect to the database named by ${self.dsn_env}: {words}"
            ) from None
        try:
            cur = conn.cursor()
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            cur.execute(
                "SELECT set_config('statement_timeout', %s, true)",
                (f"{max(1, round(self.timeout * 1000))}ms",),
            )
            yield cur
        except psycopg.Error as exc:
            raise self._sql_error(exc, "") from None
        finally:
            with suppress(psycopg.Error):
                conn.rollback()  # read only: there is nothing to keep
            conn.close()

    def _run(self, cur: Any, sql: str, params: Mapping[str, Any], what: str) -> None:
        """Run SQL from the workspace on ``cur`` by the server's rule: one read-only statement.

        Under a deadline: the server stops the query at ``--timeout``
        (``statement_timeout``), and this side stops waiting for its whole answer
        :data:`ROWS_MARGIN_S` later, whatever the server (or what is between) sends.

        In pipeline mode psycopg always sends the extended query protocol, whose one
        statement the server parses alone (the simple protocol, which psycopg uses for a
        query without parameters, runs ``SELECT 1; COMMIT; DROP TABLE t`` whole: the
        ``COMMIT`` ends the read-only transaction and the ``DROP`` runs outside it). A
        single statement that ends the transaction (``COMMIT``, ``ROLLBACK``) is caught
        right after it: nothing else is sent on that connection.

        Raises:
            psycopg.Error: the server refused or failed the statement (the caller words it).
            RetrieverError: the statement ended the read-only transaction.
        """
        import psycopg
        from psycopg.pq import TransactionStatus

        conn = cur.connection
        seconds = self.timeout + ROWS_MARGIN_S
        # the connection's socket, watched by the deadline (a copy of its descriptor:
        # closing it leaves the connection's own open)
        with (
            socket.socket(fileno=os.dup(conn.pgconn.socket)) as watched,
            Deadline(seconds) as deadline,
        ):
            deadline.watch(watched)
            try:
                with conn.pipeline():  # every result is read in full as it ends
                    cur.execute(sql, params)
            except psycopg.Error:
                if deadline.passed:
                    raise RetrieverError(
                        f"{self.name}: {what} gave no whole answer within {seconds:g} s "
                        f"(--timeout {self.timeout:g} s for the query on the server, "
                        f"{ROWS_MARGIN_S:g} s more for its rows to arrive)"
                    ) from None
                raise
        if conn.info.transaction_status != TransactionStatus.INTRANS:
            raise RetrieverError(
                f"{self.name}: {what} ended the read-only transaction it runs in (COMMIT, "
                "ROLLBACK, ...); goldpan stopped before sending anything else. SQL from a "
                "workspace is one statement that reads"
            )

    def _sql_error(self, exc: Exception, question: str) -> RetrieverError:
        import psycopg

        for_q = f" for question {question!r}" if question else ""
        words = _server_words(exc)
        if isinstance(exc, psycopg.errors.QueryCanceled):
            return RetrieverError(
                f"{self.name}: the query{for_q} gave no answer within {self.timeout:g} s "
                f"(set --timeout): {words}"
            )
        if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
            return RetrieverError(
                f"{self.name}: the SQL template tried to write{for_q} and was stopped "
                f"(it runs in a read-only transaction): {words}"
            )
        if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
            return RetrieverError(f"{self.name}: lost the connection to the database: {words}")
        return RetrieverError(f"{self.name}: the SQL template failed{for_q}: {words}")

    def _embeddings(self, questions: Sequence[Question]) -> list[str]:
        """Each question's normalised embedding as pgvector text (float32, round-tripping)."""
        from engine.retrieve.dense import encode

        vectors = encode(self._model, [self.query_prefix + q.text for q in questions])
        # 9 significant digits give back the same float32 (pgvector stores float4)
        return ["[" + ",".join(f"{float(x):.9g}" for x in v) + "]" for v in vectors]

    def rank(
        self, questions: Sequence[Question], depth: int, base: Sequence[Mapping[str, Ranking]]
    ) -> list[Ranking]:
        """Run the template for each question, all on one connection."""
        if not questions:
            return []
        if self.embed_model and self._model is None:
            raise RuntimeError("prepare() must be called before rank()")
        import psycopg

        vectors = self._embeddings(questions) if self.embed_model else None
        out: list[Ranking] = []
        with self._transaction() as cur:
            for i, q in enumerate(questions):
                values: dict[str, Any] = {"query": q.text, "k": depth}
                if vectors is not None:
                    values["embedding"] = vectors[i]
                bound = {k: v for k, v in values.items() if k in self.uses}
                try:
                    self._run(cur, self.sql, bound, "the SQL template")
                    if cur.description is None:
                        raise RetrieverError(
                            f"{self.name}: the SQL template returned no rows at all for "
                            f"question {q.id!r} (it must be a query returning (doc_id, score))"
                        )
                    columns = [c.name for c in cur.description]
                    rows = cur.fetchall()
                except psycopg.Error as exc:
                    raise self._sql_error(exc, q.id) from None
                out.append(self._ranking(q.id, columns, rows, depth))
        return out

    def _ranking(self, qid: str, columns: list[str], rows: list[Any], depth: int) -> Ranking:
        """One question's ranking from its rows (:func:`checked_ranking`'s rule)."""
        if len(columns) != 2:
            raise RetrieverError(
                f"{self.name}: the SQL template returned {len(columns)} columns "
                f"({', '.join(columns)}) for question {qid!r}; it must return two: "
                "doc_id, score"
            )
        return checked_ranking(
            (
                (f"row {n} for question {qid!r}", doc, score)
                for n, (doc, score) in enumerate(rows, 1)
            ),
            depth,
            self._docs,
            lambda what: RetrieverError(f"{self.name}: {what}"),
        )

    def cache_key(self) -> str | None:
        """A hash of the data's state (``--cache-key-sql``), or None when none is declared.

        The hash covers the server's system identifier, the database's name and every
        row of the query's result, read in a read-only transaction.

        Raises:
            RetrieverError: the database cannot be reached or the query fails.
        """
        if self.cache_key_sql is None:
            return None
        import psycopg

        h = hashlib.sha256(b"goldpan-postgres-cache-key\0")
        with self._transaction() as cur:
            try:
                with cur.connection.transaction():  # a savepoint: a refusal undoes only it
                    cur.execute("SELECT system_identifier::text FROM pg_control_system()")
                    ident = cur.fetchone()
            except psycopg.Error:  # not allowed to this role (or no such function)
                ident = None
            cur.execute("SELECT current_database()")
            name = cur.fetchone()
            h.update(json.dumps([ident, name], default=str).encode() + b"\0")
            try:
                # with (empty) parameters, so that %% means % as in the template
                self._run(cur, self.cache_key_sql, {}, "its --cache-key-sql")
                rows = cur.fetchall() if cur.description is not None else []
            except psycopg.Error as exc:
                words = _server_words(exc)
                raise RetrieverError(f"{self.name}: its --cache-key-sql failed: {words}") from None
        for row in rows:
            h.update(json.dumps([str(v) for v in row], ensure_ascii=False).encode() + b"\n")
        return h.hexdigest()
