"""`goldpan retriever add`, `pool`, `score` and `trust` with an ``opensearch`` retriever: the
templates refused, the exit codes, what is printed and asked. The kinds' protocol, rankings
and errors are checked through the engine in tests/engine/retrieve/test_opensearch_retrievers.py
(whose server and helpers these tests share)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli as run
from tests.engine.retrieve.test_opensearch_retrievers import TEMPLATE, msearches
from tests.searchservers import digest

osmem_server = pytest.importorskip("osmem_server")


def add(capsys, ws: Path, name: str, *options: object, kind="opensearch", trust=True) -> None:
    code, _, err = run(capsys, "retriever", "add", ws, name, "--kind", kind, *options)
    assert code == 0, err
    if trust:
        code, _, err = run(capsys, "trust", ws, "--yes", "--retriever", name)
        assert code == 0, err


def test_score_says_how_it_ranked_and_an_engine_error_is_exit_2(ws_path, gate, capsys):
    _, service = gate
    add(capsys, ws_path, "os", "--url", service.url, "--index", "docs", "--fields", "text")
    code, out, err = run(capsys, "score", ws_path, "--json")
    assert code == 0, err
    assert json.loads(out)["rankings"]["os"] == (
        "ranked now (inputs and index identity changed or not ranked yet)"
    )
    add(capsys, ws_path, "nope", "--url", service.url, "--index", "nope", "--fields", "text")
    before = digest(ws_path)
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "nope")
    flat = " ".join(err.split())
    assert code == 2, err
    assert "opensearch retriever nope" in flat and "no index 'nope' there" in flat
    assert "Traceback" not in err
    assert digest(ws_path) == before


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"query": {"match_all": {}}}', "holds no {{query}}"),
        ('{"query": {"match": {"text": "{{query}}"}},}', "--template:1: malformed JSON"),
        ('["{{query}}"]', "a request template is a JSON object"),
    ],
)
def test_a_bad_template_is_refused_when_added(ws_path, capsys, tmp_path, text, says):
    (tmp_path / "t.json").write_text(text, encoding="utf-8")
    before = digest(ws_path)
    code, _, err = run(
        capsys, "retriever", "add", ws_path, "os", "--kind", "opensearch",
        "--url", "http://127.0.0.1:9", "--index", "docs", "--template", tmp_path / "t.json",
    )  # fmt: skip
    assert code == 2 and says in " ".join(err.split()), err
    assert digest(ws_path) == before


def test_nothing_is_sent_until_trusted_and_a_changed_template_is_asked_again(
    ws_path, gate, capsys, tmp_path
):
    _, service = gate
    template = tmp_path / "t.json"
    template.write_text(TEMPLATE, encoding="utf-8")
    options = ["--url", service.url, "--index", "docs", "--template", template]
    add(capsys, ws_path, "os", *options, trust=False)
    start, before = len(service.seen), digest(ws_path)
    code, _, err = run(capsys, "pool", ws_path)
    flat = " ".join(err.split())
    assert code == 0 and "skipped retriever os" in flat
    assert f"opensearch --url {service.url} --index docs --template sha256:" in flat
    assert len(service.seen) == start and digest(ws_path) == before
    code, out, _ = run(capsys, "trust", ws_path, "--yes")
    assert code == 0 and "trusted 1 retriever(s)" in out
    assert run(capsys, "pool", ws_path, "--retriever", "os")[0] == 0
    assert msearches(service, start)
    # a colleague's copy with the same name, address and index, but another template
    template.write_text(TEMPLATE.replace('"boost": 2', '"boost": 3'), encoding="utf-8")
    assert run(capsys, "retriever", "remove", ws_path, "os")[0] == 0
    add(capsys, ws_path, "os", *options, trust=False)
    start = len(service.seen)
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "os")
    assert code == 0 and "skipped retriever os" in err and len(service.seen) == start
