"""The ``http`` retriever kind against a real search service started by the test.

The service (``tests/searchservers.py``) answers JSON searches with goldpan's own
``bm25-word`` over the demo corpus, so a ranking that went through the request template,
the HTTP round trip and the JSON Pointers must equal the one goldpan makes itself. Other
paths of the service answer as broken services do (5xx, malformed JSON, missing values,
unknown or repeated documents, a redirect, no answer in time): each must be an error
naming the retriever, the question and the answer, and must leave the workspace file byte
for byte as it was. Headers come from environment variables and never reach the file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import ssl
import subprocess
import threading
import urllib.parse
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from engine.errors import BadInput
from engine.retrieve.remote import Template, parse_pointer, resolve
from engine.trust import TrustStore, command_of, config_dir, what_runs
from engine.types import RetrieverSpec
from engine.workspace import Workspace
from tests.conftest import run_cli as run
from tests.searchservers import (
    TIED_HITS,
    BM25Api,
    Handler,
    Service,
    demo_with_word,
    digest,
    questions,
    rankings,
    serve,
)

BODY = '{"q": "{{query}}", "k": {{size}}}\n'


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_with_word(tmp_path_factory.mktemp("demo") / "demo.db")


@pytest.fixture(scope="module")
def api(demo_file: Path):
    with Workspace.open(demo_file, readonly=True) as ws:
        docs = ws.docs()
    with serve(BM25Api(docs).route) as service:
        yield service


@pytest.fixture
def ws_path(demo_file: Path, tmp_path: Path) -> Path:
    path = tmp_path / "ws.db"
    shutil.copyfile(demo_file, path)
    return path


@pytest.fixture
def body_file(tmp_path: Path) -> Path:
    path = tmp_path / "body.json"
    path.write_text(BODY, encoding="utf-8")
    return path


def add_http(capsys, ws: Path, name: str, url: str, *options: object, trust: bool = True):
    argv = ["retriever", "add", ws, name, "--kind", "http", "--url", url, *options]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    if trust:
        code, _, err = run(capsys, "trust", ws, "--yes", "--retriever", name)
        assert code == 0, err


def add_search(capsys, ws: Path, name: str, url: str, body: Path, *more: object, trust=True):
    """An http retriever POSTing ``body`` to ``url``, its hits at /result."""
    add_http(capsys, ws, name, url, "--body", body, "--hits-pointer", "/result", *more, trust=trust)


# -- rankings through the service equal goldpan's own ------------------------------------


def test_pooled_through_a_json_api_equals_the_same_bm25_ranked_here(
    ws_path, api, body_file, capsys
):
    add_search(capsys, ws_path, "svc", f"{api.url}/search", body_file)
    before = len(api.seen)
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "svc")
    assert code == 0, err
    assert "warning" not in err  # loopback http: nothing to warn about
    texts = questions(ws_path)
    sent = api.seen[before:]
    assert len(sent) == len(texts)  # one request per question
    for s in sent:
        assert s.method == "POST" and s.headers["Content-Type"] == "application/json"
        request = json.loads(s.body)
        assert request["k"] == 100 and isinstance(request["k"], int)  # {{size}}: the depth
    assert sorted(json.loads(s.body)["q"] for s in sent) == sorted(texts.values())
    mine, theirs = rankings(ws_path, "bm25-word"), rankings(ws_path, "svc")
    assert set(theirs) == set(texts)
    for qid, (ids, scores) in mine.items():
        assert theirs[qid][0] == ids
        assert theirs[qid][1] == pytest.approx(scores, rel=1e-12)
    code, out, err = run(capsys, "score", ws_path, "--json")
    assert code == 0, err
    board = json.loads(out)
    assert board["rankings"]["svc"] == "ranked now (http, no cache key)"  # nothing vouches
    for metric in ("hit@1", "mrr", "ndcg@10", "recall@10"):
        assert board["retrievers"]["svc"][metric] == board["retrievers"]["bm25-word"][metric]


def test_get_with_the_question_in_the_url_and_pointers_into_nested_hits(ws_path, api, capsys):
    add_http(
        capsys,
        ws_path,
        "vespa",
        f"{api.url}/nested?q={{{{query}}}}&k={{{{size}}}}",
        "--http-method",
        "GET",
        "--hits-pointer",
        "/root/children",
        "--id-pointer",
        "/fields/doc~1id",  # RFC 6901: "~1" is "/" in a key
        "--score-pointer",
        "/relevance",
    )
    before = len(api.seen)
    assert run(capsys, "pool", ws_path, "--retriever", "vespa")[0] == 0
    sent = api.seen[before:]
    got = sorted(urllib.parse.parse_qs(urllib.parse.urlsplit(s.path).query)["q"][0] for s in sent)
    assert got == sorted(questions(ws_path).values())  # percent-encoded, decoded exactly
    assert all(s.body == b"" for s in sent)
    mine, theirs = rankings(ws_path, "bm25-word"), rankings(ws_path, "vespa")
    assert {q: r[0] for q, r in theirs.items()} == {q: r[0] for q, r in mine.items()}


def test_tied_scores_are_ordered_as_trec_eval_orders_them(ws_path, api, body_file, capsys):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    add_search(capsys, ws_path, "ties", f"{api.url}/ties", body_file)
    assert run(capsys, "pool", ws_path, "--retriever", "ties")[0] == 0
    stored = rankings(ws_path, "ties")
    ids, scores = stored["q01"]
    # score descending, then doc id descending: the service's own order is ascending
    assert ids == ("recon-03", "recon-02", "recon-01", "recon-00")
    assert scores == (2.0, 2.0, 2.0, 1.0)
    raw = {h["id"]: h["score"] for h in TIED_HITS}
    for gold in raw:  # trec_eval's rank of each document equals goldpan's
        evaluator = pytrec_eval.RelevanceEvaluator({"q01": {gold: 1}}, {"recip_rank"})
        want = evaluator.evaluate({"q01": raw})["q01"]["recip_rank"]
        assert 1.0 / (ids.index(gold) + 1) == pytest.approx(want)


# -- what a broken service answers -----------------------------------------------------


BROKEN = [
    ("/fail", ["answered 503", "the engine failed", "upstream search unavailable"]),
    ("/garbage", ["answered 200", "not JSON", '{"result"']),
    ("/nohits", ["nothing at '/result' (--hits-pointer)"]),
    ("/noscore", ["hit 0 has nothing at '/score' (--score-pointer)"]),
    ("/unknown", ["hit 2: document 'no-such-doc' is not in the workspace"]),
    ("/dup", ["hit 2: document", "is listed twice"]),
    ("/redirect", ["answered 307", "a redirect, not followed"]),
    ("/missing", ["answered 404", "not found"]),
]


@pytest.mark.parametrize(("path", "says"), BROKEN, ids=[p for p, _ in BROKEN])
def test_a_broken_answer_is_an_error_naming_it_and_changes_nothing(
    ws_path, api, body_file, capsys, path, says
):
    add_search(capsys, ws_path, "svc", f"{api.url}{path}", body_file)
    before = digest(ws_path)
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "svc")
    flat = " ".join(err.split())
    assert code == 2, err
    assert "http retriever svc, question q" in flat
    assert f"POST {api.url}{path}" in flat  # the request
    for words in says:
        assert words in flat
    assert "Traceback" not in err
    assert digest(ws_path) == before
    assert rankings(ws_path, "svc") == {}


def test_no_answer_in_time_and_a_refused_connection_are_errors(ws_path, api, body_file, capsys):
    add_search(capsys, ws_path, "slow", f"{api.url}/slow", body_file, "--timeout", "0.3")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    add_search(capsys, ws_path, "gone", f"http://127.0.0.1:{port}/search", body_file)
    before = digest(ws_path)
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "slow")
    assert code == 2 and "http retriever slow, question q" in err
    assert "within 0.3 s" in " ".join(err.split())
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "gone")
    assert code == 2 and "connection refused" in " ".join(err.split())
    assert digest(ws_path) == before


def test_header_values_come_from_the_environment_and_never_reach_the_workspace(
    ws_path, api, body_file, capsys, monkeypatch
):
    secret = "Bearer s3cr3t-token-5f0c"
    headers = "Authorization=GP_TEST_TOKEN,X-Tenant=GP_TEST_TENANT"
    add_search(capsys, ws_path, "svc", f"{api.url}/search", body_file, "--header-env", headers)
    before = digest(ws_path)
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "svc")
    assert code == 2 and "environment variable GP_TEST_TOKEN" in err and "is not set" in err
    assert digest(ws_path) == before
    monkeypatch.setenv("GP_TEST_TOKEN", secret)
    monkeypatch.setenv("GP_TEST_TENANT", "radiology")
    start = len(api.seen)
    assert run(capsys, "pool", ws_path, "--retriever", "svc")[0] == 0
    sent = api.seen[start:]
    assert sent and all(s.headers["Authorization"] == secret for s in sent)
    assert all(s.headers["X-Tenant"] == "radiology" for s in sent)
    for f in [ws_path, *ws_path.parent.glob("ws.db-*"), config_dir() / "trusted-commands.json"]:
        assert b"s3cr3t" not in f.read_bytes(), f
    code, out, _ = run(capsys, "retriever", "list", ws_path, "--json")
    [svc] = [r for r in json.loads(out) if r["name"] == "svc"]
    assert svc["params"]["header_env"] == ["Authorization=GP_TEST_TOKEN", "X-Tenant=GP_TEST_TENANT"]


# -- bad options: refused at `retriever add`, nothing written ------------------------------


URL = "http://127.0.0.1:9/search"
BAD_ADDS = {
    "no hits pointer": (URL, "--body {body}", "needs --hits-pointer"),
    "no query anywhere": (URL, "--hits-pointer /r", "nor --body holds {{query}}"),
    "body without query": (URL, "--body {nobody} --hits-pointer /r", "holds {{query}}"),
    "body not JSON": (URL, "--body {notjson} --hits-pointer /r", "--body:2: malformed JSON"),
    "unknown placeholder": (URL, "--body {typo} --hits-pointer /r", "placeholder {{qeury}}"),
    "pointer without /": (URL, "--body {body} --hits-pointer r", "starts with '/'"),
    "not http": ("ftp://h/x", "--body {body} --hits-pointer /r", "an http:// or https://"),
    "password in URL": ("https://me:pw@h/x", "--body {body} --hits-pointer /r", "no user or pass"),
    "header without var": (URL, "--hits-pointer /r --body {body} --header-env A", "HEADER=VAR"),
    "bad variable": (URL, "--hits-pointer /r --body {body} --header-env X=1B", "environment var"),
}


@pytest.mark.parametrize("why", BAD_ADDS)
def test_bad_options_are_refused_when_added_and_change_nothing(
    ws_path, tmp_path, body_file, capsys, why
):
    url, options, says = BAD_ADDS[why]
    files = {
        "body": body_file,
        "nobody": tmp_path / "nobody.json",
        "notjson": tmp_path / "notjson.json",
        "typo": tmp_path / "typo.json",
    }
    files["nobody"].write_text('{"q": "fixed", "k": {{size}}}', encoding="utf-8")
    files["notjson"].write_text('{"q": "{{query}}",\n "k": }', encoding="utf-8")
    files["typo"].write_text('{"q": "{{qeury}}"}', encoding="utf-8")
    argv = options.format(**{k: str(v) for k, v in files.items()}).split()
    before = digest(ws_path)
    code, _, err = run(
        capsys, "retriever", "add", ws_path, "svc", "--kind", "http", "--url", url, *argv
    )
    assert code == 2, err
    assert says in " ".join(err.split())
    assert "Traceback" not in err
    assert digest(ws_path) == before


# -- TLS ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def https_api(demo_file: Path, tmp_path_factory: pytest.TempPathFactory):
    """The search service over TLS with a self-signed certificate (no CA trusts it)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl program to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    with Workspace.open(demo_file, readonly=True) as ws:
        docs = ws.docs()
    api = BM25Api(docs)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    service = Service(f"https://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = type(
        "TLSHandler", (Handler,), {"service": service, "route": staticmethod(api.route)}
    )
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield service
    server.shutdown()
    server.server_close()


def test_tls_is_verified_unless_insecure_and_insecure_is_said_on_every_run(
    ws_path, https_api, body_file, capsys
):
    common = ["--body", body_file, "--hits-pointer", "/result"]
    add_http(capsys, ws_path, "checked", f"{https_api.url}/search", *common)
    add_http(capsys, ws_path, "unchecked", f"{https_api.url}/search", *common, "--insecure")
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "checked")
    assert code == 2
    assert "TLS certificate cannot be verified" in " ".join(err.split())
    for _ in range(2):  # ranked again each time (no cache key), and said each time
        code, _, err = run(capsys, "pool", ws_path, "--retriever", "unchecked")
        assert code == 0, err
        flat = " ".join(err.split())
        assert "warning: http retriever unchecked: TLS certificates are not checked" in flat
    assert rankings(ws_path, "unchecked")["q01"][0] == rankings(ws_path, "bm25-word")["q01"][0]


# -- trust ---------------------------------------------------------------------------------


def test_an_http_retriever_sends_nothing_until_trusted_and_a_changed_body_is_asked_again(
    ws_path, api, body_file, tmp_path, capsys
):
    add_search(capsys, ws_path, "svc", f"{api.url}/search", body_file, trust=False)
    before, start = digest(ws_path), len(api.seen)
    code, _, err = run(capsys, "score", ws_path)
    flat = " ".join(err.split())
    assert code == 0 and "skipped retriever svc" in flat
    assert f"http --http-method POST --url {api.url}/search --body sha256:" in flat  # what it sends
    assert f"goldpan trust {ws_path}" in flat
    assert len(api.seen) == start and digest(ws_path) == before
    code, out, _ = run(capsys, "trust", ws_path, "--yes")
    assert code == 0 and "trusted 1 retriever(s)" in out
    assert run(capsys, "pool", ws_path, "--retriever", "svc")[0] == 0
    assert len(api.seen) > start
    # the same name with another body: what it sends changed, so it is asked about again
    other = tmp_path / "other.json"
    other.write_text('{"q": "{{query}}", "k": {{size}}, "filter": "x"}', encoding="utf-8")
    assert run(capsys, "retriever", "remove", ws_path, "svc")[0] == 0
    add_search(capsys, ws_path, "svc", f"{api.url}/search", other, trust=False)
    start = len(api.seen)
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "svc")
    assert code == 0 and "skipped retriever svc" in err and len(api.seen) == start
    code, out, _ = run(capsys, "trust", ws_path, "--list")
    assert "no" in out.split("svc", 1)[1].split("\n", 1)[0]


def test_what_is_trusted_is_the_address_the_body_hash_and_variable_names():
    command = RetrieverSpec("c", "command", {"command": "search --x", "cache_key_command": "git"})
    assert what_runs(command) == command_of(command)  # old trust records still match
    body = '{"q": "{{query}}"}'
    spec = RetrieverSpec(
        "h",
        "http",
        {
            "url": "https://search.example/q",
            "http_method": "POST",
            "body": body,
            "header_env": ["Authorization=TOKEN_VAR"],
            "hits_pointer": "/r",
            "timeout": 5.0,
            "insecure": True,
        },
    )
    shown = what_runs(spec)
    assert shown == (
        "http --http-method POST --url https://search.example/q --body sha256:"
        + hashlib.sha256(body.encode()).hexdigest()
        + " --header-env Authorization=TOKEN_VAR --insecure"
    )
    # what does not change where questions go is not part of it
    assert what_runs(RetrieverSpec("h", "http", {**spec.params, "timeout": 9.0})) == shown
    assert what_runs(RetrieverSpec("h", "http", {**spec.params, "body": body + " "})) != shown


def test_the_template_puts_values_in_as_json_never_as_text():
    template = Template.parse('{"q": "{{query}}", "k": {{size}}, "x": ["a {{query}}"]}', "t")
    nasty = 'he said "stop"\\n}, "k": 999, "q": "{{size}}'
    body = template.render(nasty, 7)
    assert body == {"q": nasty, "k": 7, "x": [f"a {nasty}"]}
    with pytest.raises(BadInput, match="unknown placeholder"):
        Template.parse('{"q": "{{text}}"}', "t")
    pointer = parse_pointer("/a~1b/0/m~0n", "p")
    assert resolve({"a/b": [{"m~n": 3}]}, pointer) == 3


async def test_a_served_session_never_sends_questions_to_an_untrusted_service(
    ws_path, api, body_file, capsys
):
    from tests.tui.conftest import APP_SIZE
    from tui.app import GoldpanApp
    from tui.screens.judge import JudgeScreen
    from tui.screens.modals import TrustScreen
    from tui.serve.served_app import Served

    add_search(capsys, ws_path, "svc", f"{api.url}/search", body_file, trust=False)
    start = len(api.seen)
    app = GoldpanApp(
        ws_path, annotator="ara", animations=False, blink=False, warm_indexes=False, served=Served()
    )
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge("q01")  # q01 has no ranking by svc: pooling it would ask the service
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, JudgeScreen)
        assert not any(isinstance(s, TrustScreen) for s in app.screen_stack)
    assert len(api.seen) == start
    assert not (config_dir() / "trusted-commands.json").exists()
    assert rankings(ws_path, "svc") == {}
    with Workspace.open(ws_path, readonly=True) as ws:
        assert TrustStore().untrusted(ws, ws.retrievers())[0].name == "svc"


async def test_the_app_says_once_that_tls_is_not_checked(ws_path, https_api, body_file, capsys):
    from tests.tui.conftest import APP_SIZE, wait_for
    from tests.tui.test_readonly import record_notifications
    from tui.app import GoldpanApp

    add_search(capsys, ws_path, "unchecked", f"{https_api.url}/search", body_file, "--insecure")
    app = GoldpanApp(ws_path, annotator="ara", animations=False, blink=False, warm_indexes=False)
    seen = record_notifications(app)
    async with app.run_test(size=APP_SIZE) as pilot:
        app.judge("q01")
        await pilot.pause()
        await app.workers.wait_for_complete()
        app.pooling.pool("q02")  # a second pool: no second notice
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()  # nor from ranking the rest behind the screen
        await wait_for(pilot, lambda: not app.session.live.unranked() and not app.ranking.ranking)
    said = [m for m in seen if "TLS certificates are not checked" in m]
    assert len(said) == 1 and "http retriever unchecked" in said[0], seen
    assert {"q01", "q02"} <= set(rankings(ws_path, "unchecked"))


def test_retriever_add_help_lists_the_engine_kinds_options(capsys):
    code, out, _ = run(capsys, "retriever", "add", "--help")
    assert code == 0
    flat = " ".join(out.split())
    for option in (
        "--url", "--http-method", "--body", "--header-env", "--hits-pointer", "--id-pointer",
        "--score-pointer", "--index", "--template", "--id-field", "--api-key-env",
        "--user-env", "--password-env", "--batch", "--insecure",
    ):  # fmt: skip
        assert option in flat, option
    assert "opensearch and elasticsearch:" in flat  # kinds sharing a help named together
