"""Issue 20 items 6 and 11: every value is checked where it is read, unknown names are errors.

A number on the command line is checked as argparse parses it (tui/cli/values.py): a
non-finite or out-of-range value exits 2 naming the option. A number in a file (a query
log's count, a snapshot's rank, a JSON number of thousands of digits, JSON nested too
deeply) exits 2 naming the file, the line and the field. A name that is not there (a tag,
a retriever, a question) exits 2 listing the known ones, closest first. A person's name
that `serve` accepts starts a tab. After every refusal the workspace is byte-identical.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import sqlite3
import time
from pathlib import Path

import pytest

from tests.conftest import write_jsonl

INT64_OVER = str(2**63)


def files_of(folder: Path) -> dict[str, str]:
    """sha256 of every file in ``folder`` (the workspace and any -wal/-shm next to it)."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def refused(capsys, ws: Path, *argv: object) -> str:
    """Run goldpan; assert exit 2 and an unchanged workspace folder; return stderr."""
    from tui.cli import main

    before = files_of(ws.parent)
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's usage error
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    assert files_of(ws.parent) == before
    return " ".join(err.split())  # rich and argparse wrap long lines


@pytest.fixture
def pooled(tiny_ws, capsys) -> Path:
    from tui.cli import main

    assert main(["pool", str(tiny_ws), "--retriever", "bm25-word", "--quiet"]) == 0
    assert main(["snapshot", str(tiny_ws), "s1", "--retriever", "bm25-word", "--no-pool"]) == 0
    capsys.readouterr()
    return tiny_ws


# -- numbers on the command line -----------------------------------------------------------

OPTIONS = {
    "depth past int64": (["pool", "{ws}", "--depth", INT64_OVER], "--depth"),
    "depth 0": (["pool", "{ws}", "--depth", "0"], "--depth"),
    "queue k 0": (["queue", "{ws}", "--k", "0"], "--k"),
    "score k past int64": (["score", "{ws}", "--no-pool", "--k", f"1,{INT64_OVER}"], "--k"),
    "floor nan": (["score", "{ws}", "--no-pool", "--fail-under", "mrr=nan"], "--fail-under"),
    "floor inf": (["score", "{ws}", "--no-pool", "--fail-under", "mrr=inf"], "--fail-under"),
    "samples 0": (["compare", "{ws}", "bm25-word", "bm25-bigram", "--samples", "0"], "--samples"),
    "seed negative": (["compare", "{ws}", "bm25-word", "bm25-bigram", "--seed", "-1"], "--seed"),
    "tolerance negative": (
        ["score", "{ws}", "--against", "s1", "--fail-on-regression", "--tolerance", "-1"],
        "--tolerance",
    ),
    "similarity nan": (
        ["import", "querylog", "{ws}", "log.txt", "--similarity", "nan"],
        "--similarity",
    ),
    "min-count past int64": (
        ["import", "querylog", "{ws}", "log.txt", "--min-count", INT64_OVER],
        "--min-count",
    ),
    "lease nan": (["serve", "{ws}", "--annotator", "ara", "--lease", "nan"], "--lease"),
    "lease inf": (["serve", "{ws}", "--annotator", "ara", "--lease", "inf"], "--lease"),
    "lease 1e12": (["serve", "{ws}", "--annotator", "ara", "--lease", "1e12"], "--lease"),
    "per-question 0": (
        ["serve", "{ws}", "--annotator", "ara", "--per-question", "0"],
        "--per-question",
    ),
    "timeout nan": (
        [
            "retriever",
            "add",
            "{ws}",
            "cmd",
            "--kind",
            "command",
            "--command",
            "x",
            "--timeout",
            "nan",
        ],
        "--timeout",
    ),
    "k1 nan": (["sweep", "{ws}", "--retriever", "bm25-word", "--k1", "1,nan"], "--k1"),
}


@pytest.mark.parametrize("case", OPTIONS, ids=list(OPTIONS))
def test_a_bad_number_exits_2_naming_the_option(case, tiny_ws, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GOLDPAN_CONFIG_DIR", str(tmp_path / "config"))
    argv, option = OPTIONS[case]
    (tiny_ws.parent / "log.txt").write_text("a query\n", encoding="utf-8")
    err = refused(capsys, tiny_ws, *[a.format(ws=tiny_ws) for a in argv])
    assert option in err
    assert "expected" in err  # says what it takes
    assert not (tmp_path / "config" / "serve").exists()  # nothing was served


def test_an_accepted_lease_and_depth_still_work(tiny_ws, capsys):
    from tui.cli import main

    assert main(["pool", str(tiny_ws), "--retriever", "bm25-word", "--depth", "5", "--quiet"]) == 0


# -- unknown names ------------------------------------------------------------------------

NAMES = {
    "score tag": (["score", "{ws}", "--no-pool", "--tag", "hrad"], "--tag", "hard"),
    "failures tag": (
        ["failures", "{ws}", "--retriever", "bm25-word", "--tag", "hrad"],
        "--tag",
        "hard",
    ),
    "compare tag": (
        ["compare", "{ws}", "bm25-word", "bm25-bigram", "--tag", "hrad"],
        "--tag",
        "hard",
    ),
    "sweep tag": (["sweep", "{ws}", "--retriever", "bm25-word", "--tag", "hrad"], "--tag", "hard"),
    "power tag": (["power", "{ws}", "bm25-word", "bm25-bigram", "--tag", "hrad"], "--tag", "hard"),
    "against tag": (
        ["score", "{ws}", "--against", "s1", "--no-pool", "--tag", "hrad"],
        "--tag",
        "hard",
    ),
    "compare retriever": (["compare", "{ws}", "bm25-word", "bm25-wrd"], "compare", "bm25-word"),
    "failures retriever": (
        ["failures", "{ws}", "--retriever", "bm25-wrd"],
        "--retriever",
        "bm25-word",
    ),
    "snapshot retriever": (
        ["snapshot", "{ws}", "s2", "--retriever", "bm25-wrd", "--no-pool"],
        "--retriever",
        "bm25-word",
    ),
    "remove retriever": (
        ["retriever", "remove", "{ws}", "bm25-wrd"],
        "retriever remove",
        "bm25-word",
    ),
    "label question": (["label", "{ws}", "q11", "d1", "1", "--annotator", "ara"], "QID", "q1"),
}


@pytest.mark.parametrize("case", NAMES, ids=list(NAMES))
def test_an_unknown_name_exits_2_listing_the_known_closest_first(case, pooled, capsys):
    argv, option, closest = NAMES[case]
    err = refused(capsys, pooled, *[a.format(ws=pooled) for a in argv])
    assert option in err
    known = err.split("(closest first): ", 1)[1]
    assert known.startswith(closest), err


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["sweep", "{ws}", "bm25-word"], "goldpan sweep"),  # the retriever is --retriever's
        (["retriever", "list", "{ws}", "extra"], "goldpan retriever list"),
        (["score", "{ws}", "--bogus"], "goldpan score"),
    ],
)
def test_an_unrecognized_argument_is_told_in_its_commands_usage(argv, command, pooled, capsys):
    err = refused(capsys, pooled, *[a.format(ws=pooled) for a in argv])
    assert err.startswith(f"usage: {command} "), err
    assert f"{command}: error: unrecognized arguments: {argv[-1]}" in err


def test_the_known_names_are_capped(capsys, tmp_path):
    from engine.names import unknown_name

    many = [f"tag{i:02d}" for i in range(40)]
    text = str(unknown_name("tag", "tag7", many, given_to="--tag"))
    assert "--tag: unknown tag 'tag7'" in text and text.endswith("and 28 more")


@pytest.mark.parametrize("name", ["-x", "--role=viewer", " ara", "a\x1bb", "x" * 65])
def test_a_person_name_that_cannot_be_used_is_refused(name, tiny_ws, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GOLDPAN_CONFIG_DIR", str(tmp_path / "config"))
    err = refused(capsys, tiny_ws, "serve", tiny_ws, f"--annotator={name}")
    assert "--annotator" in err
    assert not (tmp_path / "config" / "serve").exists()
    err = refused(capsys, tiny_ws, "label", tiny_ws, "q1", "d1", "1", f"--annotator={name}")
    assert "--annotator" in err


# -- numbers and nesting in files ---------------------------------------------------------


def test_a_query_log_count_past_int64_names_file_line_and_field(tiny_ws, capsys, tmp_path):
    log = write_jsonl(tmp_path / "log.jsonl", [{"query": "a"}, {"query": "b", "count": 2**63}])
    err = refused(capsys, tiny_ws, "import", "querylog", tiny_ws, log)
    assert "log.jsonl:2:" in err and "`count`" in err


def test_query_log_counts_whose_sum_passes_int64_are_refused(tiny_ws, capsys, tmp_path):
    log = tmp_path / "log.csv"
    log.write_text(f"query,count\na,{2**63 - 1}\nb,1\n", encoding="utf-8")
    err = refused(capsys, tiny_ws, "import", "querylog", tiny_ws, log)
    assert "log.csv:3:" in err and "`count`" in err


def test_a_json_number_of_5000_digits_names_file_and_line(tiny_ws, capsys, tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text('{"query": "a"}\n{"query": "b", "count": ' + "9" * 5000 + "}\n")
    err = refused(capsys, tiny_ws, "import", "querylog", tiny_ws, log)
    assert "log.jsonl:2:" in err and "5,000 digits" in err


def _exported(ws: Path, tmp_path: Path, capsys) -> tuple[Path, dict]:
    from tui.cli import main

    out = tmp_path / "snap.json"
    assert main(["snapshot", "export", str(ws), "s1", "--out", str(out)]) == 0
    capsys.readouterr()
    return out, json.loads(out.read_text(encoding="utf-8"))


def _write_like_export(path: Path, data: dict) -> str:
    text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


def test_a_huge_rank_in_a_snapshot_names_file_line_and_field(pooled, capsys, tmp_path):
    path, data = _exported(pooled, tmp_path, capsys)
    rows = data["retrievers"]["bm25-word"]["questions"]
    q = sorted(rows)[-1]
    rows[q]["rank"] = 2**63
    text = _write_like_export(path, data)
    line = text[: text.index(f'"rank": {2**63}')].count("\n") + 1
    err = refused(capsys, pooled, "score", pooled, "--against", path, "--no-pool")
    assert f"snap.json:{line}:" in err
    assert f"retrievers.bm25-word.questions.{q}.rank" in err


def test_a_non_finite_metric_value_in_a_snapshot_is_refused(pooled, capsys, tmp_path):
    path, data = _exported(pooled, tmp_path, capsys)
    q = sorted(data["retrievers"]["bm25-word"]["questions"])[0]
    data["retrievers"]["bm25-word"]["questions"][q]["values"]["mrr"] = 1e400  # Infinity
    _write_like_export(path, data)
    err = refused(capsys, pooled, "score", pooled, "--against", path, "--no-pool")
    assert "snap.json:" in err and f"questions.{q}.values.mrr" in err


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (
            lambda: '{"goldpan_snapshot": 1,\n "x": [' + "[" * 200 + "]" * 200 + "]}",
            "nested too deeply",
        ),
        (lambda: '{"goldpan_snapshot": 1,\n "name": ' + "7" * 4301 + "}", "4,301 digits"),
    ],
    ids=["recursion", "deeper than 64", "digits"],
)
def test_an_unreadable_snapshot_file_names_the_file(make, expected, pooled, capsys, tmp_path):
    path = tmp_path / "snap.json"
    path.write_text(make(), encoding="utf-8")
    err = refused(capsys, pooled, "score", pooled, "--against", path, "--no-pool")
    assert "snap.json" in err and expected in err
    if expected.endswith("digits"):
        assert "snap.json:2:" in err


def test_a_questions_file_with_a_5000_digit_number_names_file_and_line(tiny_ws, capsys, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"id": "n1", "text": "a"}\n{"id": "n2", "text": "b", "n": ' + "1" * 5000 + "}\n"
    )
    err = refused(capsys, tiny_ws, "import", "questions", tiny_ws, path)
    assert "q.jsonl:2:" in err and "digits" in err


# -- a served odd name starts its tab ------------------------------------------------------


@pytest.mark.timeout(120)
def test_an_accepted_odd_name_starts_its_tab(tmp_path):
    """A name with spaces, quotes, a `$` and a non-ASCII letter: its link opens an app
    that takes a question (a lease row under that very name)."""
    import aiohttp

    from engine.workspace_setup import new_workspace
    from tests.conftest import TINY_DOCS, TINY_QUESTIONS
    from tests.tui.serve.test_serve_load import load_bench
    from tui.serve.tokens import TokenBook

    name = 'Zoë O\'Neil "$x" ;'
    ws_path = tmp_path / "team.db"
    ws = new_workspace(ws_path)
    ws.write_docs(TINY_DOCS)
    ws.write_questions(TINY_QUESTIONS)
    ws.close()
    bench = load_bench()
    served = None
    try:
        served = bench.start_server(ws_path, [f"--annotator={name}"], tmp_path)
        import os

        os.environ["GOLDPAN_CONFIG_DIR"] = str(tmp_path)
        try:
            token = next(p.token for p in TokenBook(ws_path.absolute()).active() if p.name == name)
        finally:
            del os.environ["GOLDPAN_CONFIG_DIR"]

        async def connect() -> str | None:
            async with (
                aiohttp.ClientSession() as http,
                http.ws_connect(
                    f"ws://127.0.0.1:{served.port}/ws/{token}?width=100&height=30",
                    max_msg_size=0,
                ) as sock,
            ):
                await sock.send_json(["resize", {"width": 100, "height": 30}])
                db = sqlite3.connect(ws_path, timeout=30)
                try:
                    end = time.monotonic() + 60
                    while time.monotonic() < end:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(sock.receive(), 0.05)
                        row = db.execute(
                            "SELECT question_id FROM leases WHERE annotator = ?", (name,)
                        ).fetchone()
                        if row:
                            return str(row[0])
                    return None
                finally:
                    db.close()

        assert asyncio.run(connect()) is not None, served.output()
        assert f"{name} connected (annotator)" in served.output()
    finally:
        if served is not None:
            served.stop()


def test_an_argument_that_is_not_utf8_is_bad_input_not_a_crash(tiny_ws):
    """A raw byte from the shell (``$'\\x9d'``) is the user's input: exit 2, named."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = tiny_ws.read_bytes()
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"tui", b"score", bytes(tiny_ws), b"--tag", b"x\x9dy"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert b"not valid UTF-8" in proc.stderr and b"x\\x9dy" in proc.stderr
    assert b"\x9d" not in proc.stderr and b"internal error" not in proc.stderr
    assert tiny_ws.read_bytes() == before
