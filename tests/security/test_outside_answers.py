"""Every answer from outside has a deadline and a shape: engines asked over HTTP.

A search engine an ``http``, ``opensearch`` or ``elasticsearch`` retriever asks may be slow
on purpose, or not speak HTTP at all. Each question (an ``_msearch`` batch) has one
deadline for connecting, the headers and the body together: an engine that sends a byte
just before each read would time out cannot hold a pool past ``--timeout``. An answer that
is not HTTP (a status line that is not one, more than 100 headers, a broken chunk) is
exit 2 naming the retriever, never an internal error. Each test starts a real server on
a local socket that misbehaves one way.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli

Behave = Callable[[socket.socket], None]

TRICKLE_S = 30.0
"""How long a trickling engine would go on: far past the 1 s deadline the tests give."""


@contextlib.contextmanager
def listening(handle: Callable[[socket.socket, threading.Event], None]) -> Iterator[int]:
    """A local port whose each connection ``handle(conn, stop)`` serves on a thread of its
    own, until the block ends (``stop`` is set then)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def accept() -> None:
        with contextlib.suppress(OSError):
            while not stop.is_set():
                conn, _ = listener.accept()
                threading.Thread(target=handle, args=(conn, stop), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


@contextlib.contextmanager
def misbehaving(behave: Behave, wrap: ssl.SSLContext | None = None) -> Iterator[int]:
    """A server on a local port that reads each request's head, then does ``behave``."""

    def handle(conn: socket.socket, stop: threading.Event) -> None:
        with conn, contextlib.suppress(OSError):
            if wrap is not None:
                conn = wrap.wrap_socket(conn, server_side=True)
            head = b""
            while b"\r\n\r\n" not in head and not stop.is_set():
                chunk = conn.recv(65536)
                if not chunk:
                    return
                head += chunk
            behave(conn)

    with listening(handle) as port:
        yield port


def trickle(data: bytes, seconds: float = TRICKLE_S) -> Behave:
    """Send ``data`` spread over ``seconds``, one byte at a time."""

    def behave(conn: socket.socket) -> None:
        step = seconds / max(1, len(data))
        for i in range(len(data)):
            conn.sendall(data[i : i + 1])
            time.sleep(step)

    return behave


def sends(data: bytes) -> Behave:
    return lambda conn: conn.sendall(data)


BODY = b'{"hits": [{"id": "d1", "score": 1.0}]}'
OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


HTTP_GET = ("--kind", "http", "--http-method", "GET", "--hits-pointer", "/hits", "--timeout", "1")
"""An ``http`` retriever asking with GET, its hits at /hits, a 1 s deadline."""


def pool_engine(capsys, ws: Path, url: str, *options: str) -> tuple[int, str, float]:
    """Add a trusted retriever ``api`` asking ``url`` (``options``: its kind's, default
    :data:`HTTP_GET`) and pool it: (exit code, what it said, seconds taken)."""
    kind = options or HTTP_GET
    code, _, err = run_cli(capsys, "retriever", "add", ws, "api", "--url", url, *kind)
    assert code == 0, err
    code, _, err = run_cli(capsys, "trust", ws, "--yes")
    assert code == 0, err
    start = time.monotonic()
    code, out, err = run_cli(capsys, "pool", ws, "--retriever", "api", "--quiet")
    return code, " ".join((out + err).split()), time.monotonic() - start


def search_url(port: int, scheme: str = "http") -> str:
    return f"{scheme}://127.0.0.1:{port}/search?q={{{{query}}}}"


# -- deadlines -----------------------------------------------------------------------------


def test_an_engine_that_trickles_its_body_stops_at_the_deadline(tiny_ws, capsys):
    answer = OK_HEAD + b"Content-Length: %d\r\n\r\n" % (len(BODY) * 20) + BODY * 20
    with misbehaving(trickle(answer)) as port:
        code, said, seconds = pool_engine(capsys, tiny_ws, search_url(port))
    assert code == 2, said
    assert "http retriever api, question q1" in said
    assert "no whole answer within 1 s (connecting, headers and body)" in said
    assert seconds < TRICKLE_S / 3, f"{seconds:.1f} s: the pool waited for the trickle"


def test_an_engine_that_trickles_its_headers_stops_at_the_deadline(tiny_ws, capsys):
    head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Slow-%d: y\r\n" % i for i in range(90))
    with misbehaving(trickle(head)) as port:
        code, said, seconds = pool_engine(capsys, tiny_ws, search_url(port))
    assert code == 2, said
    assert "http retriever api, question q1" in said
    assert "no whole answer within 1 s (connecting, headers and body)" in said
    assert seconds < TRICKLE_S / 3, f"{seconds:.1f} s: the pool waited for the trickle"


@pytest.fixture
def tls_context(tmp_path: Path) -> ssl.SSLContext:
    """A server context with a self-signed certificate for 127.0.0.1."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl program to make a test certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def test_a_tls_engine_that_trickles_its_body_stops_at_the_deadline(tiny_ws, capsys, tls_context):
    answer = OK_HEAD + b"Content-Length: %d\r\n\r\n" % (len(BODY) * 20) + BODY * 20
    with misbehaving(trickle(answer), wrap=tls_context) as port:
        code, said, seconds = pool_engine(
            capsys, tiny_ws, search_url(port, "https"), *HTTP_GET, "--insecure"
        )
    assert code == 2, said
    assert "no whole answer within 1 s (connecting, headers and body)" in said
    assert seconds < TRICKLE_S / 3, f"{seconds:.1f} s: the pool waited for the trickle"


def test_an_opensearch_engine_that_trickles_stops_at_the_deadline(tiny_ws, capsys):
    answer = OK_HEAD + b"Content-Length: 2000\r\n\r\n" + b" " * 2000
    with misbehaving(trickle(answer)) as port:
        code, said, seconds = pool_engine(
            capsys,
            tiny_ws,
            f"http://127.0.0.1:{port}",
            *("--kind", "opensearch", "--index", "docs", "--fields", "text", "--timeout", "1"),
        )
    assert code == 2, said
    assert "opensearch retriever api" in said and "no whole answer within 1 s" in said
    assert seconds < TRICKLE_S / 3, f"{seconds:.1f} s: the pool waited for the trickle"


# -- shapes --------------------------------------------------------------------------------


def test_an_answer_that_is_not_http_is_exit_2_naming_the_engine(tiny_ws, capsys):
    with misbehaving(sends(b"SSH-2.0-OpenSSH_9.2\x1b]52;c;ZXZpbA==\x07\r\n")) as port:
        code, said, _ = pool_engine(capsys, tiny_ws, search_url(port))
    assert code == 2, said
    assert "http retriever api, question q1" in said and "the answer is not HTTP" in said
    assert "its first line is 'SSH-2.0-OpenSSH_9.2\\x1b]52;c;ZXZpbA==\\x07\\r\\n'" in said


def test_an_answer_with_more_than_100_headers_is_exit_2_naming_the_engine(tiny_ws, capsys):
    flood = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: a\r\n" % i for i in range(150))
    with misbehaving(sends(flood + b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY)) as port:
        code, said, _ = pool_engine(capsys, tiny_ws, search_url(port))
    assert code == 2, said
    assert "http retriever api" in said and "got more than 100 headers" in said


def test_an_answer_with_a_broken_chunk_is_exit_2_naming_the_engine(tiny_ws, capsys):
    chunked = OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n" + BODY + b"\r\n0\r\n\r\n"
    with misbehaving(sends(chunked)) as port:
        code, said, _ = pool_engine(capsys, tiny_ws, search_url(port))
    assert code == 2, said
    assert "http retriever api" in said and "its body ended after 0 bytes" in said


# -- a database ---------------------------------------------------------------------------


@contextlib.contextmanager
def trickling_relay(unix_socket: str, free_bytes: int, seconds: float) -> Iterator[int]:
    """A TCP port relaying to a Unix socket: the server's first ``free_bytes`` pass as they
    come (the login), the rest one byte at a time; the relay ends after ``seconds``."""

    def pipe(src: socket.socket, dst: socket.socket, free: int | None, stop: threading.Event):
        sent, end = 0, time.monotonic() + seconds
        with contextlib.suppress(OSError):
            while not stop.is_set() and time.monotonic() < end:
                slow = free is not None and sent >= free
                data = src.recv(1 if slow else 65536)
                if not data:
                    break
                dst.sendall(data)
                sent += len(data)
                if slow:
                    time.sleep(0.05)
        for end_of in (src, dst):  # both ways, so that the other side sees the end at once
            with contextlib.suppress(OSError):
                end_of.shutdown(socket.SHUT_RDWR)

    def relay(client: socket.socket, stop: threading.Event) -> None:
        server = socket.socket(socket.AF_UNIX)
        server.connect(unix_socket)
        threading.Thread(target=pipe, args=(client, server, None, stop), daemon=True).start()
        pipe(server, client, free_bytes, stop)

    with listening(relay) as port:
        yield port


def test_a_database_that_trickles_its_rows_stops_at_the_deadline(tiny_ws, monkeypatch):
    """The server answers within its statement timeout; what is between trickles the rows."""
    psycopg = pytest.importorskip("psycopg", reason="needs psycopg")
    from engine.retrieve import RetrieverError, new_spec
    from engine.retrieve.runner import refresh_runs
    from engine.trust import TrustStore
    from engine.workspace import Workspace
    from tests.pgserver import DATABASE, PASSWORD, SUPERUSER, start_server, stop_server

    pg = start_server()
    try:
        with psycopg.connect(pg.dsn(), autocommit=True) as conn:
            conn.execute("CREATE TABLE docs AS SELECT 'd' || n AS id FROM generate_series(1, 4) n")
        unix = f"{pg.root}/.s.PGSQL.5432"
        with trickling_relay(unix, free_bytes=4096, seconds=TRICKLE_S * 2) as port:
            monkeypatch.setenv(
                "PG",
                f"host=127.0.0.1 port={port} user={SUPERUSER} password={PASSWORD} "
                f"dbname={DATABASE}",
            )
            sql = tiny_ws.parent / "rows.sql"  # 20,000 rows: far more than the login's bytes
            sql.write_text(
                "SELECT id, n::float FROM docs, generate_series(1, 5000) n WHERE %(query)s <> ''"
            )
            spec = new_spec("pg", "postgres", {"dsn_env": "PG", "sql": str(sql), "timeout": 1})
            store = TrustStore(tiny_ws.parent / "trust.json")
            with Workspace.open(tiny_ws) as opened:
                opened.add_retriever(spec)
                store.trust(opened, [spec])
                start = time.monotonic()
                with pytest.raises(RetrieverError) as caught:
                    refresh_runs(opened, ["pg"], trust=store)
                seconds = time.monotonic() - start
    finally:
        stop_server(pg)
    said = " ".join(str(caught.value).split())
    assert "postgres retriever pg: the SQL template gave no whole answer within 11 s" in said
    assert seconds < TRICKLE_S * 1.5, f"{seconds:.0f} s: the pool waited for the trickle"


def test_an_address_that_is_not_ascii_is_refused_when_added(tiny_ws, capsys):
    url = "http://127.0.0.1:9/검색?q={{query}}"
    code, _, err = run_cli(capsys, "retriever", "add", tiny_ws, "api", "--url", url, *HTTP_GET)
    assert code == 2, err
    assert "write the address in ASCII" in " ".join(err.split())


def test_a_header_variable_an_http_header_cannot_carry_is_refused_naming_it(
    tiny_ws, capsys, monkeypatch
):
    monkeypatch.setenv("SEARCH_TOKEN", "Bearer 토큰")
    with misbehaving(sends(OK_HEAD + b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY)) as port:
        code, said, _ = pool_engine(
            capsys, tiny_ws, search_url(port), *HTTP_GET, "--header-env", "X-Token=SEARCH_TOKEN"
        )
    assert code == 2, said
    assert "environment variable SEARCH_TOKEN (--header-env X-Token=SEARCH_TOKEN)" in said
    assert "a character an HTTP header cannot carry" in said
