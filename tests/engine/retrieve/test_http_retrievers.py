"""The ``http`` retriever kind against a real search service started by the test.

The service (``tests/searchservers.py``) answers JSON searches with goldpan's own
``bm25-word`` over the demo corpus, so a ranking that went through the request template,
the HTTP round trip and the JSON Pointers must equal the one goldpan makes itself. Other
paths of the service answer as broken services do (5xx, malformed JSON, missing values,
unknown or repeated documents, a redirect, no answer in time): each must be an error
naming the retriever, the question and the answer, and must leave the workspace file byte
for byte as it was. Headers come from environment variables and never reach the file.
Retrievers are added, trusted and pooled through the engine; what ``goldpan retriever add``,
``pool``, ``score`` and ``trust`` print is in tests/cli/test_http_retrievers.py, and the
app's side in tests/tui/test_outside_retrievers_served.py.
"""

from __future__ import annotations

import hashlib
import json
import socket
import urllib.parse
from pathlib import Path

import pytest

from engine.errors import BadInput
from engine.retrieve.base import RetrieverError
from engine.retrieve.remote import Template, parse_pointer, resolve
from engine.scoring import score_workspace
from engine.trust import TrustStore, command_of, config_dir, what_runs
from engine.types import RetrieverSpec
from engine.workspace import Workspace
from tests.conftest import add_retriever, pool
from tests.searchservers import (
    TIED_HITS,
    digest,
    questions,
    rankings,
)


def add_http(ws: Path, name: str, url: str, *, trust: bool = True, **params: object) -> None:
    """An http retriever (``params`` as ``retriever add``'s options give them), trusted by
    this user as ``goldpan trust --yes`` does unless ``trust`` is false."""
    add_retriever(ws, name, "http", url=url, **params)
    if trust:
        with Workspace.open(ws) as handle:
            TrustStore().trust(handle, [s for s in handle.retrievers() if s.name == name])


def add_search(ws: Path, name: str, url: str, body: Path, **params: object) -> None:
    """An http retriever POSTing ``body`` to ``url``, its hits at /result."""
    add_http(ws, name, url, body=str(body), hits_pointer="/result", **params)


def pool_fails(ws: Path, name: str) -> str:
    """Pool ``name``, which must fail: its error, on one line."""
    with pytest.raises(RetrieverError) as failed:
        pool(ws, [name])
    return " ".join(str(failed.value).split())


# -- rankings through the service equal goldpan's own ------------------------------------


def test_pooled_through_a_json_api_equals_the_same_bm25_ranked_here(ws_path, api, body_file):
    add_search(ws_path, "svc", f"{api.url}/search", body_file)
    before = len(api.seen)
    report = pool(ws_path, ["svc"])
    assert not report.warnings  # loopback http: nothing to warn about
    assert report.how["svc"] == "ranked now (http, no cache key)"  # nothing vouches
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
    with Workspace.open(ws_path, readonly=True) as ws:
        board = json.loads(json.dumps(score_workspace(ws).to_json()))
    for metric in ("hit@1", "mrr", "ndcg@10", "recall@10"):
        assert board["retrievers"]["svc"][metric] == board["retrievers"]["bm25-word"][metric]


def test_get_with_the_question_in_the_url_and_pointers_into_nested_hits(ws_path, api):
    add_http(
        ws_path,
        "vespa",
        f"{api.url}/nested?q={{{{query}}}}&k={{{{size}}}}",
        http_method="GET",
        hits_pointer="/root/children",
        id_pointer="/fields/doc~1id",  # RFC 6901: "~1" is "/" in a key
        score_pointer="/relevance",
    )
    before = len(api.seen)
    pool(ws_path, ["vespa"])
    sent = api.seen[before:]
    got = sorted(urllib.parse.parse_qs(urllib.parse.urlsplit(s.path).query)["q"][0] for s in sent)
    assert got == sorted(questions(ws_path).values())  # percent-encoded, decoded exactly
    assert all(s.body == b"" for s in sent)
    mine, theirs = rankings(ws_path, "bm25-word"), rankings(ws_path, "vespa")
    assert {q: r[0] for q, r in theirs.items()} == {q: r[0] for q, r in mine.items()}


def test_tied_scores_are_ordered_as_trec_eval_orders_them(ws_path, api, body_file):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    add_search(ws_path, "ties", f"{api.url}/ties", body_file)
    pool(ws_path, ["ties"])
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
    ws_path, api, body_file, path, says
):
    add_search(ws_path, "svc", f"{api.url}{path}", body_file)
    before = digest(ws_path)
    flat = pool_fails(ws_path, "svc")
    assert "http retriever svc, question q" in flat
    assert f"POST {api.url}{path}" in flat  # the request
    for words in says:
        assert words in flat
    assert digest(ws_path) == before
    assert rankings(ws_path, "svc") == {}


def test_no_answer_in_time_and_a_refused_connection_are_errors(ws_path, api, body_file):
    add_search(ws_path, "slow", f"{api.url}/slow", body_file, timeout="0.3")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    add_search(ws_path, "gone", f"http://127.0.0.1:{port}/search", body_file)
    before = digest(ws_path)
    said = pool_fails(ws_path, "slow")
    assert "http retriever slow, question q" in said and "within 0.3 s" in said
    assert "connection refused" in pool_fails(ws_path, "gone")
    assert digest(ws_path) == before


def test_header_values_come_from_the_environment_and_never_reach_the_workspace(
    ws_path, api, body_file, monkeypatch
):
    secret = "Bearer s3cr3t-token-5f0c"
    headers = "Authorization=GP_TEST_TOKEN,X-Tenant=GP_TEST_TENANT"
    add_search(ws_path, "svc", f"{api.url}/search", body_file, header_env=headers)
    before = digest(ws_path)
    said = pool_fails(ws_path, "svc")
    assert "environment variable GP_TEST_TOKEN" in said and "is not set" in said
    assert digest(ws_path) == before
    monkeypatch.setenv("GP_TEST_TOKEN", secret)
    monkeypatch.setenv("GP_TEST_TENANT", "radiology")
    start = len(api.seen)
    pool(ws_path, ["svc"])
    sent = api.seen[start:]
    assert sent and all(s.headers["Authorization"] == secret for s in sent)
    assert all(s.headers["X-Tenant"] == "radiology" for s in sent)
    for f in [ws_path, *ws_path.parent.glob("ws.db-*"), config_dir() / "trusted-commands.json"]:
        assert b"s3cr3t" not in f.read_bytes(), f
    with Workspace.open(ws_path, readonly=True) as ws:
        [svc] = [r for r in ws.retrievers() if r.name == "svc"]
    assert svc.params["header_env"] == ["Authorization=GP_TEST_TOKEN", "X-Tenant=GP_TEST_TENANT"]


# -- TLS ------------------------------------------------------------------------------------


def test_tls_is_verified_unless_insecure_and_insecure_is_said_on_every_run(
    ws_path, https_api, body_file
):
    add_search(ws_path, "checked", f"{https_api.url}/search", body_file)
    add_search(ws_path, "unchecked", f"{https_api.url}/search", body_file, insecure=True)
    assert "TLS certificate cannot be verified" in pool_fails(ws_path, "checked")
    for _ in range(2):  # ranked again each time (no cache key), and said each time
        report = pool(ws_path, ["unchecked"])
        flat = " ".join(" ".join(report.warnings["unchecked"]).split())
        assert "http retriever unchecked: TLS certificates are not checked" in flat
    assert rankings(ws_path, "unchecked")["q01"][0] == rankings(ws_path, "bm25-word")["q01"][0]


# -- trust ---------------------------------------------------------------------------------


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
