"""`goldpan serve`: links and tokens, refusals, and a short load run over real websockets.

Serving itself is tested in tests/tui/serve/test_serve_load.py (websocket clients) and
tests/tui/serve/test_serve_browser.py (a headless browser).
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tui.cli import main
from tui.serve.tokens import TokenBook


@pytest.fixture
def config(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("GOLDPAN_CONFIG_DIR", str(folder))
    return folder


def test_links_survive_restarts_in_a_private_file_outside_the_workspace(tiny_ws, config):
    book = TokenBook(tiny_ws)
    first = book.give([("ara", "annotator"), ("vera", "viewer")])
    book.url = "http://127.0.0.1:8000"
    book.save()
    assert book.path.parent.parent == config
    assert stat.S_IMODE(book.path.stat().st_mode) == 0o600
    again = TokenBook(tiny_ws)  # a restarted server
    assert again.active() == first
    assert again.give([("ara", "adjudicator")])[0].token == first[0].token
    assert again.give([("ara", "annotator")], new_tokens=True)[0].token != first[0].token
    assert first[0].token.encode() not in tiny_ws.read_bytes()


def test_links_reprints_the_last_session(tiny_ws, config, capsys):
    assert main(["serve", str(tiny_ws), "--links"]) == 2
    assert "no links" in capsys.readouterr().err
    book = TokenBook(tiny_ws)
    (ara,) = book.give([("ara", "annotator")])
    book.url = "http://127.0.0.1:8123"
    book.save()
    assert main(["serve", str(tiny_ws), "--links"]) == 0
    assert f"ara (annotator): http://127.0.0.1:8123/?token={ara.token}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--annotator", "ara", "--viewer", "ara"], "both"),
        (["--annotator", "a\x1bb"], "printable"),
        (["--annotator", " ara"], "spaces"),
        (["--annotator", "ara", "--per-question", "0"], "--per-question"),
        (["--annotator=-x"], "must not start with '-'"),
        (["--annotator", "ara", "--port", "70000"], "--port"),
        ([], "at least one person"),
    ],
)
def test_bad_input_exits_2_before_anything_is_served(tiny_ws, config, capsys, args, message):
    try:
        code = main(["serve", str(tiny_ws), *args])
    except SystemExit as exc:  # argparse refused the option
        code = int(exc.code or 0)
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (config / "serve").exists()


def test_a_missing_or_bad_links_file_is_reported(tiny_ws, config, capsys):
    book = TokenBook(tiny_ws)
    book.path.parent.mkdir(parents=True)
    book.path.write_text("{not json", encoding="utf-8")
    assert main(["serve", str(tiny_ws), "--annotator", "ara"]) == 2
    assert "cannot read the links file" in capsys.readouterr().err
    assert main(["serve", str(tiny_ws / "nope.db"), "--annotator", "ara"]) == 2


def test_a_port_in_use_is_refused_before_any_link_is_given(tiny_ws, config, capsys):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", str(tiny_ws), "--annotator", "ara", "--port", str(port)]) == 2
    captured = capsys.readouterr()
    assert "choose another --port" in captured.err and "token=" not in captured.out
    assert not (config / "serve").exists()
