"""`goldpan retriever add`, `pool`, `score` and `trust` with an ``http`` retriever: the
options refused, the exit codes, what is printed and asked. The kind's rankings, errors
and headers are checked through the engine in tests/engine/retrieve/test_http_retrievers.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli as run
from tests.searchservers import digest


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


def test_pool_and_score_say_how_it_ranked_and_a_broken_answer_is_exit_2(
    ws_path, api, body_file, capsys
):
    add_search(capsys, ws_path, "svc", f"{api.url}/search", body_file)
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "svc")
    assert code == 0, err
    assert "warning" not in err  # loopback http: nothing to warn about
    code, out, err = run(capsys, "score", ws_path, "--json")
    assert code == 0, err
    assert json.loads(out)["rankings"]["svc"] == "ranked now (http, no cache key)"
    add_search(capsys, ws_path, "broken", f"{api.url}/fail", body_file)
    before = digest(ws_path)
    code, _, err = run(capsys, "pool", ws_path, "--retriever", "broken")
    flat = " ".join(err.split())
    assert code == 2, err
    assert "http retriever broken, question q" in flat and f"POST {api.url}/fail" in flat
    assert "Traceback" not in err
    assert digest(ws_path) == before


def test_insecure_tls_is_said_on_every_pool(ws_path, https_api, body_file, capsys):
    add_search(capsys, ws_path, "unchecked", f"{https_api.url}/search", body_file, "--insecure")
    for _ in range(2):  # ranked again each time (no cache key), and said each time
        code, _, err = run(capsys, "pool", ws_path, "--retriever", "unchecked")
        assert code == 0, err
        flat = " ".join(err.split())
        assert "warning: http retriever unchecked: TLS certificates are not checked" in flat


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
