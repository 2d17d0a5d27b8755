"""Issue 20: `goldpan serve` at its HTTP edges, over raw sockets to the real server process.

Malformed requests (no token needed), a malformed request line carrying a valid token, odd
query values and a websocket path without Upgrade headers each get a 4xx and one log line
on the server's terminal: never a traceback, never the token, and the server goes on
serving.
"""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.serve.test_serve_load import load_bench

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[object]:
    from engine.workspace_setup import new_workspace
    from tests.conftest import TINY_DOCS, TINY_QUESTIONS

    folder = tmp_path_factory.mktemp("edges")
    ws = new_workspace(folder / "team.db")
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.close()
    server = load_bench().start_server(folder / "team.db", ["--annotator", "ara"], folder)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def exchange(port: int, data: bytes) -> int:
    """Send raw bytes, read the whole answer; its status code."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(data)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    status_line = answer.split(b"\r\n", 1)[0].split()
    assert len(status_line) >= 2, answer[:200]
    return int(status_line[1])


def get(path: str, headers: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n".encode()


_marks = iter(range(10**6))


def lines_of(served, data: bytes) -> tuple[int, list[str]]:
    """The status of one request and the log lines it caused (read up to a marker request
    sent after it, whose own 404 line ends them)."""
    start = len(served.output())
    status = exchange(served.port, data)
    mark = f"/edge-mark-{next(_marks)}"
    assert exchange(served.port, get(mark)) == 404
    end = time.monotonic() + 20
    while mark not in served.output()[start:]:
        assert time.monotonic() < end, f"no log line for {mark}: {served.output()[start:]!r}"
        time.sleep(0.02)
    text = served.output()[start:]
    before = text[: text.index(mark)].rsplit("\n", 1)[0]
    return status, [line for line in before.splitlines() if line.strip()]


def malformed(token: str) -> dict[str, bytes]:
    return {
        "not http at all": b"\x16\x03\x01 GARBAGE\r\n\r\n",
        "bad version": b"GET / HTTP/9.9\r\n\r\n",
        "header without colon": b"GET / HTTP/1.1\r\nHost x\r\n\r\n",
        "control char in the query": b"GET /?token=" + token.encode() + b"\x01 HTTP/1.1\r\n\r\n",
        "junk after the version": b"GET /?token=" + token.encode() + b" HTTP/1.1 junk\r\n\r\n",
        "raw utf-8 in the query": f"GET /?token={token}&fontsize=² HTTP/1.1\r\n\r\n".encode(),
        "token in the websocket path": b"GET /ws/" + token.encode() + b" HTTP/1.1 x\r\n\r\n",
    }


@pytest.mark.parametrize(
    "case",
    [
        "not http at all",
        "bad version",
        "header without colon",
        "control char in the query",
        "junk after the version",
        "raw utf-8 in the query",
        "token in the websocket path",
    ],
)
def test_a_malformed_request_is_a_400_and_one_line_without_the_token(served, case):
    token = served.tokens["ara"]
    status, lines = lines_of(served, malformed(token)[case])
    assert status == 400
    assert len(lines) == 1, lines
    assert token not in served.output().split("(ctrl+c stops)", 1)[1]
    assert "Traceback" not in served.output()


@pytest.mark.parametrize(
    "query",
    ["fontsize=%C2%B2", "fontsize=99999999999999999999", "fontsize=-3", "fontsize=abc"],
)
def test_an_odd_fontsize_is_a_400_not_a_500(served, query):
    token = served.tokens["ara"]
    status, lines = lines_of(served, get(f"/?token={token}&{query}"))
    assert status == 400
    assert len(lines) == 1 and token not in lines[0], lines
    assert "Traceback" not in served.output()


@pytest.mark.parametrize("query", ["width=%C2%B2", "height=-1", "width=100000000"])
def test_an_odd_terminal_size_is_a_400_and_starts_nothing(served, query):
    token = served.tokens["ara"]
    headers = (
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    )
    data = f"GET /ws/{token}?{query} HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode()
    connected = served.output().count("connected")
    status, lines = lines_of(served, data)
    assert status == 400
    assert len(lines) == 1 and token not in lines[0], lines
    assert served.output().count("connected") == connected


def test_the_websocket_path_without_upgrade_is_a_400(served):
    token = served.tokens["ara"]
    connected = served.output().count("connected")
    status, lines = lines_of(served, get(f"/ws/{token}?width=80&height=24"))
    assert status == 400
    assert len(lines) == 1 and token not in lines[0], lines
    assert served.output().count("connected") == connected
    assert "Traceback" not in served.output()


def test_after_all_that_the_server_still_serves_and_never_logged_a_token(served):
    for data in malformed(served.tokens["ara"]).values():
        exchange(served.port, data)
    assert exchange(served.port, get(f"/?token={served.tokens['ara']}")) == 200
    assert exchange(served.port, get(f"/?token={served.tokens['ara']}&fontsize=20")) == 200
    log = served.output().split("(ctrl+c stops)", 1)[1]
    assert served.tokens["ara"] not in log
    assert "Traceback" not in served.output()


def test_a_wrong_token_is_logged_redacted(served):
    status, lines = lines_of(served, get("/?token=not-a-real-token-but-secret"))
    assert status == 403
    assert len(lines) == 1 and "not-a-real-token" not in lines[0], lines


def test_an_unexpected_error_is_one_line_naming_its_crash_log(tmp_path):
    import logging
    import sys

    from tui.serve.log import OneLineFormatter

    token = "tok3n-secret-value"
    written: list[BaseException] = []

    def crash_log(exc: BaseException) -> Path:
        written.append(exc)
        return tmp_path / "goldpan-crash.log"

    try:
        raise ValueError(f"odd \x1b[31m value near /ws/{token} and ?token={token[:5]}")
    except ValueError:
        record = logging.LogRecord(
            "aiohttp.server",
            logging.ERROR,
            __file__,
            1,
            "Error handling request from %s",
            ("127.0.0.1",),
            sys.exc_info(),
        )
    line = OneLineFormatter(lambda: [token], crash_log).format(record)
    assert "\n" not in line and "Traceback" not in line and "\x1b" not in line
    assert token not in line and "tok3n" not in line
    assert "ValueError" in line and f"traceback is in {tmp_path / 'goldpan-crash.log'}" in line
    assert len(written) == 1
