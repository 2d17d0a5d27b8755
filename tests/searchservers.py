"""Real HTTP services the engine-retriever tests start: a search API over goldpan's own BM25,
and an auth gateway in front of an OpenSearch-protocol server.

Both are the standard library's ``ThreadingHTTPServer`` on a loopback port, in a thread of
the test process; every request they receive is recorded (method, path, headers, body) so
a test can see what goldpan sent. Nothing here imitates how an engine ranks: the search
API answers with goldpan's BM25 rankings, the gateway forwards to the real server behind
it and only checks the credentials, as a cluster's security layer would.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from engine.demo import build_demo
from engine.retrieve import PrepareEnv
from engine.retrieve.bm25 import BM25Retriever
from engine.retrieve.runner import refresh_runs
from engine.types import Doc, Question, RetrieverSpec
from engine.workspace import Workspace


def demo_with_word(path: Path) -> Path:
    """The demo workspace at ``path`` with only ``bm25-word``, pooled (tests copy it)."""
    ws = build_demo(path, pool=False, slow=False, models=False)
    for spec in ws.retrievers():
        if spec.name != "bm25-word":
            ws.remove_retriever(spec.name)
    refresh_runs(ws, ["bm25-word"])
    ws.checkpoint()
    ws.close()
    return path


def digest(path: Path) -> str:
    """The file's bytes, hashed: compared before and after what must change nothing."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rankings(path: Path, name: str) -> dict[str, tuple[tuple[str, ...], tuple[float, ...]]]:
    """Each question's cached ranking by ``name``: (doc ids, scores)."""
    with Workspace.open(path, readonly=True) as ws:
        return {q: (r.doc_ids, r.scores) for q, r in ws.runs(name).items()}


def questions(path: Path) -> dict[str, str]:
    """Question id -> text."""
    with Workspace.open(path, readonly=True) as ws:
        return {q.id: q.text for q in ws.questions()}


@dataclass
class Seen:
    """One request a service received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Service:
    """A running service: its address and what it received."""

    url: str
    seen: list[Seen] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    """Set to let a held (slow) answer go."""

    def paths(self, method: str | None = None) -> list[str]:
        return [s.path for s in self.seen if method is None or s.method == method]


Route = Callable[["Handler", Seen], None]


class Handler(BaseHTTPRequestHandler):
    """Records each request, then hands it to the service's route."""

    protocol_version = "HTTP/1.1"
    service: Service
    route: Route

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        seen = Seen(self.command, self.path, {k: v for k, v in self.headers.items()}, body)
        self.service.seen.append(seen)
        type(self).route(self, seen)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

    def answer(self, status: int, body: bytes | str | Any, content_type: str = "") -> None:
        if not isinstance(body, bytes | str):
            body = json.dumps(body, ensure_ascii=False)
            content_type = content_type or "application/json"
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type or "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def serve(route: Route) -> Iterator[Service]:
    """A service answering with ``route`` on a loopback port, stopped afterwards."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    service = Service(f"http://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = type(
        "BoundHandler", (Handler,), {"service": service, "route": staticmethod(route)}
    )
    thread = threading.Thread(
        target=server.serve_forever, args=(0.05,), name="test-search", daemon=True
    )
    thread.start()
    try:
        yield service
    finally:
        service.release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


@contextmanager
def serve_tls(route: Route, folder: Path) -> Iterator[Service]:
    """:func:`serve` over TLS, with a self-signed certificate (no CA trusts it) made in
    ``folder`` by the ``openssl`` program (the caller skips without it)."""
    import ssl
    import subprocess

    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    service = Service(f"https://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = type(
        "TLSHandler", (Handler,), {"service": service, "route": staticmethod(route)}
    )
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield service
    finally:
        service.release.set()
        server.shutdown()
        server.server_close()


# -- a search API over goldpan's own BM25 ------------------------------------------------


class BM25Api:
    """goldpan's ``bm25-word`` over a corpus, answering JSON searches.

    ``POST /search`` with ``{"q": text, "k": n}`` (or ``GET /search?q=..&k=..``) answers
    ``{"result": [{"id", "score"}, ...]}``. Other paths answer in the ways a broken or
    unusual service does (see :meth:`route`).
    """

    def __init__(self, docs: list[Doc]) -> None:
        self.retriever = BM25Retriever(RetrieverSpec("service", "bm25", {"tokenizer": "word"}))
        self.retriever.prepare(docs, {}, PrepareEnv())
        self.lock = threading.Lock()

    def search(self, text: str, k: int) -> list[dict[str, Any]]:
        with self.lock:
            [(ids, scores)] = self.retriever.rank([Question("x", text)], k, [{}])
        return [{"id": d, "score": s} for d, s in zip(ids, scores, strict=True)]

    def route(self, h: Handler, seen: Seen) -> None:
        url = urllib.parse.urlsplit(seen.path)
        path = url.path
        if seen.method == "GET":
            args = urllib.parse.parse_qs(url.query)
            text, k = args.get("q", [""])[0], int(args.get("k", ["10"])[0])
        else:
            try:
                request = json.loads(seen.body or b"{}")
            except ValueError:
                h.answer(400, {"error": "body is not JSON"})
                return
            text, k = str(request.get("q", "")), int(request.get("k", 10))
        hits = self.search(text, k)
        if path == "/search":
            h.answer(200, {"result": hits, "time": 0.001})
        elif path == "/nested":  # Vespa-like: root.children[].fields.id, relevance
            h.answer(
                200,
                {
                    "root": {
                        "children": [
                            {"fields": {"doc/id": x["id"]}, "relevance": x["score"]} for x in hits
                        ]
                    }
                },
            )
        elif path == "/fail":
            h.answer(503, "upstream search unavailable\n")
        elif path == "/garbage":
            h.answer(200, '{"result": [{"id": "recon-01", "score": 1.0}', "application/json")
        elif path == "/nohits":
            h.answer(200, {"answer": hits})
        elif path == "/noscore":
            h.answer(200, {"result": [{"id": x["id"]} for x in hits]})
        elif path == "/unknown":
            h.answer(200, {"result": [*hits[:2], {"id": "no-such-doc", "score": 0.5}]})
        elif path == "/dup":
            h.answer(200, {"result": [*hits[:2], dict(hits[0], score=0.1)]})
        elif path == "/ties":
            # three documents tied, given in ascending id order (not trec_eval's)
            h.answer(200, {"result": TIED_HITS})
        elif path == "/redirect":
            h.send_response(307)
            h.send_header("Location", "http://127.0.0.2:9/elsewhere")
            h.send_header("Content-Length", "0")
            h.end_headers()
        elif path == "/slow":
            h.service.release.wait(30)  # held until the test is done (the client gives up)
            h.answer(200, {"result": hits})
        else:
            h.answer(404, {"error": f"no route {path}"})


TIED_HITS = [
    {"id": "recon-01", "score": 2.0},
    {"id": "recon-02", "score": 2.0},
    {"id": "recon-03", "score": 2.0},
    {"id": "recon-00", "score": 1.0},
]
"""What ``/ties`` answers: a three-way tie on top, in ascending id order."""


# -- an auth gateway in front of an OpenSearch-protocol server ----------------------------


class Gateway:
    """Checks ``Authorization`` as a cluster's security layer does, then forwards.

    ``expected``: the header value let through (None: anything). A request without it or
    with another value gets the 401 an OpenSearch security plugin gives.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.expected: str | None = None

    def route(self, h: Handler, seen: Seen) -> None:
        if self.expected is not None and seen.headers.get("Authorization") != self.expected:
            h.answer(
                401,
                {
                    "error": {
                        "root_cause": [
                            {"type": "security_exception", "reason": "authentication failed"}
                        ],
                        "type": "security_exception",
                        "reason": "authentication failed",
                    },
                    "status": 401,
                },
            )
            return
        headers = {"Content-Type": seen.headers.get("Content-Type", "application/json")}
        request = urllib.request.Request(
            self.upstream + seen.path,
            data=seen.body or None,
            method=seen.method,
            headers=headers,
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, data = response.status, response.read()
                ctype = response.headers.get("Content-Type", "application/json")
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read()
            ctype = exc.headers.get("Content-Type", "application/json")
        h.answer(status, data, ctype)


def request_json(url: str, method: str = "GET", body: Any = None, ndjson: bool = False) -> Any:
    """A JSON request straight to a server (the tests' own client, not goldpan's)."""
    if ndjson:
        data = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in body).encode()
        ctype = "application/x-ndjson"
    else:
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        ctype = "application/json"
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": ctype})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


# -- fixtures the search-engine tests share ------------------------------------------------
# tests/conftest.py loads this module as a pytest plugin, so every test may ask for these by
# name; a test module that defines its own fixture of the same name uses its own.
# Module-scoped ones are made once per test module that uses them.

BODY = '{"q": "{{query}}", "k": {{size}}}\n'
"""The request body template of the tests' ``http`` retrievers."""


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo with bm25-word pooled (:func:`demo_with_word`), made once per module."""
    return demo_with_word(tmp_path_factory.mktemp("demo") / "demo.db")


@pytest.fixture
def ws_path(demo_file: Path, tmp_path: Path) -> Path:
    """A copy of :func:`demo_file` for one test."""
    path = tmp_path / "ws.db"
    shutil.copyfile(demo_file, path)
    return path


@pytest.fixture(scope="module")
def api(demo_file: Path) -> Iterator[Service]:
    """A BM25 search service over the demo's documents, over plain HTTP."""
    with Workspace.open(demo_file, readonly=True) as ws:
        docs = ws.docs()
    with serve(BM25Api(docs).route) as service:
        yield service


@pytest.fixture(scope="module")
def https_api(demo_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The search service over TLS with a self-signed certificate (no CA trusts it)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl program to make a test certificate")
    with Workspace.open(demo_file, readonly=True) as ws:
        docs = ws.docs()
    with serve_tls(BM25Api(docs).route, tmp_path_factory.mktemp("tls")) as service:
        yield service


@pytest.fixture
def body_file(tmp_path: Path) -> Path:
    """:data:`BODY` in a file, as ``--body`` reads it."""
    path = tmp_path / "body.json"
    path.write_text(BODY, encoding="utf-8")
    return path


# -- an OpenSearch-protocol cluster behind the auth gateway -----------------------------

MAPPINGS = {
    "mappings": {
        "properties": {
            "title": {"type": "text"},
            "text": {"type": "text"},
            "ref": {"properties": {"id": {"type": "keyword"}}},
            "n": {"type": "integer"},
        }
    }
}


def load_index(url: str, name: str, docs: list[Doc]) -> None:
    """Index ``docs`` in a cluster at ``url`` as ``name``, through ``_bulk``."""
    request_json(f"{url}/{name}", "PUT", MAPPINGS)
    lines: list[object] = []
    for i, d in enumerate(docs):
        lines += [
            {"index": {"_index": name, "_id": d.id}},
            {"title": d.title, "text": d.text, "ref": {"id": d.id}, "n": i},
        ]
    answer = request_json(f"{url}/_bulk?refresh=true", "POST", lines, ndjson=True)
    assert answer["errors"] is False


@pytest.fixture(scope="module")
def cluster(demo_file: Path) -> Iterator[Any]:
    """An OpenSearch-protocol server (osmem-server) with the demo indexed as ``docs``."""
    osmem_server = pytest.importorskip("osmem_server")
    with Workspace.open(demo_file, readonly=True) as ws:
        docs = ws.docs()
    server = osmem_server.OsmemServer.start(japanese=False)
    try:
        load_index(server.url, "docs", docs)
        server.docs = docs
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def front(cluster: Any) -> Iterator[tuple[Gateway, Service]]:
    """The auth gateway in front of :func:`cluster`, served once per module."""
    gateway = Gateway(cluster.url)
    with serve(gateway.route) as service:
        yield gateway, service


@pytest.fixture
def gate(front: tuple[Gateway, Service]) -> Iterator[tuple[Gateway, Service]]:
    """(gateway, service) with no credentials asked; reset after the test."""
    gateway, service = front
    gateway.expected = None
    yield gateway, service
    gateway.expected = None
