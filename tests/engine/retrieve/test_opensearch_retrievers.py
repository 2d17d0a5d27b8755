"""The ``opensearch`` and ``elasticsearch`` kinds against a real OpenSearch-protocol server.

The server is ``osmem-server`` (PyPI; an in-memory server speaking the OpenSearch REST API:
``_bulk``, ``_msearch``, ``_stats``, index descriptions and their errors), started once
for the module with the demo corpus indexed through ``_bulk``. It does not score as
Lucene's BM25 does, so what is tested here is the protocol: batching, what is sent,
rankings equal to the server's own ``_search`` put in trec_eval's order, the index
identity as the cache key, credentials and every error path. Scoring against a real
OpenSearch or Elasticsearch cluster is not tested here.

An auth gateway (``tests/searchservers.py``) stands in front of it as a cluster's security
layer does: it lets through only the expected ``Authorization`` and records what arrives.
Retrievers are added, trusted, pooled and scored through the engine; what ``goldpan
retriever add``, ``pool``, ``score`` and ``trust`` print and refuse is in
tests/cli/test_opensearch_retrievers.py, the app's side in
tests/tui/test_outside_retrievers_served.py.
"""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path

import pytest

from engine.export import export_workspace
from engine.retrieve import trec_order
from engine.retrieve.base import RetrieverError
from engine.scoring import score_workspace
from engine.trust import TrustStore, config_dir
from engine.workspace import Workspace
from tests.conftest import PYTREC_MEASURES, add_retriever, plain_qrels, plain_run, pool
from tests.searchservers import (
    digest,
    load_index,
    questions,
    rankings,
    request_json,
)

osmem_server = pytest.importorskip("osmem_server")

SECRET = "k3y-9f1d0c"
TEMPLATE = """{
  "size": {{size}},
  "query": {"bool": {"should": [
    {"match": {"title": {"query": "{{query}}", "boost": 2}}},
    {"match": {"text": "{{query}}"}}
  ]}}
}
"""


def add(ws: Path, name: str, *, kind: str = "opensearch", trust: bool = True, **params) -> None:
    """An engine retriever (``params`` as ``retriever add``'s options give them), trusted by
    this user as ``goldpan trust --yes`` does unless ``trust`` is false."""
    add_retriever(ws, name, kind, **params)
    if trust:
        with Workspace.open(ws) as handle:
            TrustStore().trust(handle, [s for s in handle.retrievers() if s.name == name])


def reference(url: str, index: str, body: dict, depth: int = 100) -> tuple[tuple[str, ...], ...]:
    """The server's own _search for one body, in trec_eval's order."""
    answer = request_json(f"{url}/{index}/_search", "POST", {**body, "size": depth})
    ids, _ = trec_order({h["_id"]: h["_score"] for h in answer["hits"]["hits"]}, depth)
    return tuple(ids)


def score_json(ws: Path) -> dict:
    """What ``goldpan score --json`` reports: every retriever pooled as needed (how each was
    ranked under "rankings"), then scored."""
    report = pool(ws)
    with Workspace.open(ws, readonly=True) as handle:
        board = json.loads(json.dumps(score_workspace(handle).to_json()))
    return {**board, "rankings": dict(report.how)}


def pool_fails(ws: Path, name: str) -> str:
    """Pool ``name``, which must fail: its error, on one line."""
    with pytest.raises(RetrieverError) as failed:
        pool(ws, [name])
    return " ".join(str(failed.value).split())


def msearches(service, start: int) -> list:
    return [s for s in service.seen[start:] if s.path.endswith("/_msearch")]


# -- pooled, scored, cached ------------------------------------------------------------


def test_pooled_in_msearch_batches_equals_the_servers_own_search_and_scores_as_trec_eval(
    ws_path, cluster, gate, monkeypatch, tmp_path
):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    gateway, service = gate
    gateway.expected = f"ApiKey {SECRET}"
    monkeypatch.setenv("GP_OS_KEY", SECRET)
    add(
        ws_path, "os", url=service.url, index="docs", fields="title,text",
        api_key_env="GP_OS_KEY", batch="20",
    )  # fmt: skip
    start = len(service.seen)
    board = score_json(ws_path)
    assert (
        board["rankings"]["os"]
        == "ranked now (inputs and index identity changed or not ranked yet)"
    )
    sent = msearches(service, start)
    texts = questions(ws_path)
    assert len(sent) == 3  # 49 questions in batches of 20
    assert all(s.headers["Authorization"] == f"ApiKey {SECRET}" for s in service.seen[start:])
    assert all(s.headers["Content-Type"] == "application/x-ndjson" for s in sent)
    bodies = [json.loads(line) for s in sent for line in s.body.decode().splitlines()[1::2]]
    assert sorted(b["query"]["multi_match"]["query"] for b in bodies) == sorted(texts.values())
    assert all(b["size"] == 100 and b["_source"] is False for b in bodies)
    stored = rankings(ws_path, "os")
    assert set(stored) == set(texts)
    for qid, text in texts.items():
        body = {"query": {"multi_match": {"query": text, "fields": ["title", "text"]}}}
        assert stored[qid][0] == reference(cluster.url, "docs", body), qid
    # the score is trec_eval's on the exported qrels and run
    qrels_path, run_path = tmp_path / "gold.qrels", tmp_path / "os.run"
    with Workspace.open(ws_path) as ws:
        export_workspace(ws, "trec-qrels", qrels_path)
        export_workspace(ws, "trec-run", run_path, ["os"])
    qrels = plain_qrels(qrels_path)
    per_q = pytrec_eval.RelevanceEvaluator(
        qrels, {"success.1,3,5,10", "recip_rank", "recall.5,10", "ndcg_cut.10"}
    ).evaluate(plain_run(run_path))
    for metric, measure in PYTREC_MEASURES.items():
        want = sum(per_q[q][measure] if q in per_q else 0.0 for q in qrels) / len(qrels)
        assert board["retrievers"]["os"][metric] == pytest.approx(want, abs=1e-9), metric
    # asked again: the index is as it was, so nothing is searched
    start = len(service.seen)
    board = score_json(ws_path)
    assert board["rankings"]["os"] == "cached, inputs and index identity unchanged"
    assert msearches(service, start) == [] and len(service.seen) > start  # _stats was read
    for f in [ws_path, *ws_path.parent.glob("ws.db-*"), config_dir() / "trusted-commands.json"]:
        assert SECRET.encode() not in f.read_bytes(), f


def test_a_changed_index_is_asked_again(ws_path, cluster, gate):
    _, service = gate
    load_index(cluster.url, "live", cluster.docs)
    add(ws_path, "live", url=service.url, index="live", fields="text")
    assert score_json(ws_path)["rankings"]["live"].startswith("ranked now")
    assert score_json(ws_path)["rankings"]["live"].startswith("cached")
    first = rankings(ws_path, "live")
    doc = cluster.docs[0]
    update = [{"index": {"_index": "live", "_id": doc.id}}, {"title": doc.title, "text": "x"}]
    request_json(f"{cluster.url}/_bulk?refresh=true", "POST", update, ndjson=True)
    start = len(service.seen)
    board = score_json(ws_path)
    assert board["rankings"]["live"] == (
        "ranked now (inputs and index identity changed or not ranked yet)"
    )
    assert len(msearches(service, start)) == 1
    assert rankings(ws_path, "live") != first  # the document lost its text


def test_a_template_file_and_an_id_field_of_the_source(ws_path, cluster, gate, tmp_path):
    _, service = gate
    template = tmp_path / "boosted.json"
    template.write_text(TEMPLATE, encoding="utf-8")
    add(
        ws_path, "es", url=service.url, index="docs", template=str(template),
        id_field="ref.id", kind="elasticsearch",
    )  # fmt: skip
    start = len(service.seen)
    pool(ws_path, ["es"])
    [first, *_] = msearches(service, start)
    body = json.loads(first.body.decode().splitlines()[1])
    assert body["_source"] == ["ref.id"] and body["size"] == 100
    stored, texts = rankings(ws_path, "es"), questions(ws_path)
    for qid in ("q01", "q10", "q30"):
        query = json.loads(TEMPLATE.replace("{{size}}", "100").replace("{{query}}", texts[qid]))
        assert stored[qid][0] == reference(cluster.url, "docs", query), qid
    with Workspace.open(ws_path, readonly=True) as ws:
        [es] = [r for r in ws.retrievers() if r.name == "es"]
    assert es.params["template"] == TEMPLATE  # the text is kept, not the file's path


def test_basic_auth_comes_from_two_variables_and_a_refusal_names_them(ws_path, gate, monkeypatch):
    gateway, service = gate
    gateway.expected = "Basic " + base64.b64encode(b"ara:pa55").decode()
    monkeypatch.setenv("GP_OS_USER", "ara")
    monkeypatch.setenv("GP_OS_PASSWORD", "wrong")
    add(
        ws_path, "os", url=service.url, index="docs", fields="text",
        user_env="GP_OS_USER", password_env="GP_OS_PASSWORD",
    )  # fmt: skip
    before = digest(ws_path)
    flat = pool_fails(ws_path, "os")
    assert "opensearch retriever os" in flat and "answered 401" in flat
    assert "check the credentials in GP_OS_USER, GP_OS_PASSWORD" in flat
    assert "security_exception: authentication failed" in flat
    assert digest(ws_path) == before
    monkeypatch.setenv("GP_OS_PASSWORD", "pa55")
    pool(ws_path, ["os"])
    assert len(rankings(ws_path, "os")) == 49


# -- what goes wrong -------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


FAILURES = {
    "refused connection": (
        lambda url: {"url": f"http://127.0.0.1:{closed_port()}", "index": "docs"},
        None,
        ["cannot reach GET http://127.0.0.1:", "connection refused"],
    ),
    "unknown index": (
        lambda url: {"url": url, "index": "nope"},
        None,
        ["answered 404", "no index 'nope' there", "index_not_found_exception"],
    ),
    "a search of the batch fails": (
        lambda url: {"url": url, "index": "docs"},
        '{"query": {"match": {"n": "{{query}}"}}}',
        ["question q01", "the engine failed this search", "query_shard_exception"],
    ),
    "scores turned off by a sort": (
        lambda url: {"url": url, "index": "docs"},
        '{"query": {"match": {"text": "{{query}}"}}, "sort": [{"n": "asc"}]}',
        ["question q", "has no _score (does the template sort by something else"],
    ),
    "an unset key variable": (
        lambda url: {"url": url, "index": "docs", "api_key_env": "GP_NOT_SET"},
        None,
        ["environment variable GP_NOT_SET (--api-key-env) is not set"],
    ),
}


@pytest.mark.parametrize("why", FAILURES)
def test_an_engine_error_is_clear_and_changes_nothing(ws_path, gate, tmp_path, why):
    _, service = gate
    options, template, says = FAILURES[why]
    params = options(service.url)
    if template is None:
        params["fields"] = "title,text"
    else:
        (tmp_path / "t.json").write_text(template, encoding="utf-8")
        params["template"] = str(tmp_path / "t.json")
    add(ws_path, "os", **params)
    before = digest(ws_path)
    flat = pool_fails(ws_path, "os")
    assert "opensearch retriever os" in flat
    for words in says:
        assert words in flat, words
    assert digest(ws_path) == before


# -- trust -----------------------------------------------------------------------------


def test_the_documented_nori_template_is_accepted_and_answered(ws_path, gate, tmp_path):
    """docs/retrievers.md's Korean template is a valid template; osmem-server has no Nori, so
    only the protocol is exercised (its fields analyzed by Nori are plain text fields here)."""
    page = Path(__file__).resolve().parents[3] / "docs" / "retrievers.md"
    after = page.read_text(encoding="utf-8").split("a template, `nori.json`", 1)[1]
    text = after.split("```json\n", 1)[1].split("```", 1)[0]
    (tmp_path / "nori.json").write_text(text, encoding="utf-8")
    _, service = gate
    add(ws_path, "nori", url=service.url, index="docs", template=str(tmp_path / "nori.json"))
    pool(ws_path, ["nori"])
    assert len(rankings(ws_path, "nori")) == 49
