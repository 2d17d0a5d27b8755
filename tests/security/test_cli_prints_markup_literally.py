"""Markup and escape sequences in the data print literally from the CLI: Rich markup,
Textual ``$variables`` and ``[@click]`` actions show as the text they are, terminal escapes
never reach the terminal, ``--json`` escapes every control character, and an error that
names hostile data prints it literally too.

tests/security/test_cli_prints_escapes_as_pictures.py checks every escape family, and
tests/tui/test_markup_literal.py does the same for the screens.
"""

from __future__ import annotations

import csv
import json

import pytest

from tests.conftest import import_hostile_workspace
from tests.conftest import run_cli as run
from tui.cli.commands import common

CLEAR = "\x1b[2J"  # erase the screen: rich never writes it, so any copy came from the data
MARKUP_DOCS = [
    {"_id": "[bold]d1[/]", "title": f"[bold red]T1[/] {CLEAR}x", "text": "감쇠 보정 원리"},
    {
        "_id": "$d2",
        "title": "[link=https://e.x]T2[/link]",
        "text": "금속 인공물 [@click=app.quit]q[/]",
    },
    {"_id": "d3", "title": "plain \x9b6n", "text": "점검 공지 \x1b[31mred"},
]
MARKUP_QUESTIONS = [
    {"_id": "[i]q1[/i]", "text": "감쇠 보정 [bold]?[/]", "tags": ["[red]hard[/red]"]},
    {"_id": "$q2", "text": f"금속 인공물 {CLEAR}", "tags": ["easy"]},
    {"_id": "[i]q4[/i]", "text": "감쇠 보정 인공물", "tags": []},
    {"_id": "q5", "text": "우주 탐사 $accent", "tags": []},
]
KIM, LEE = "[b]kim[/b]", f"lee{CLEAR}\x9b6n"  # U+009B: CSI for some terminals
MARKUP_LABELS = [
    ("[i]q1[/i]", "[bold]d1[/]", KIM, 2),
    ("[i]q1[/i]", "[bold]d1[/]", LEE, 2),
    ("$q2", "$d2", KIM, 1),
    ("$q2", "d3", LEE, 1),
    ("[i]q4[/i]", "$d2", KIM, 2),
    ("[i]q4[/i]", "$d2", LEE, 2),
]
RETRIEVER = f"[red]r[/red]{CLEAR}"


@pytest.fixture
def markup_ws(tmp_path, capsys):
    ws = tmp_path / "m.db"
    assert run(capsys, "new", ws)[0] == 0
    docs, questions = tmp_path / "c.jsonl", tmp_path / "q.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in MARKUP_DOCS))
    questions.write_text("".join(json.dumps(q) + "\n" for q in MARKUP_QUESTIONS))
    with (tmp_path / "l.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["question_id", "doc_id", "annotator", "grade"])
        writer.writerows(MARKUP_LABELS)
    (tmp_path / "v.csv").write_text(
        f"question_id,annotator,verdict,note\nq5,{KIM},no_answer,[b]why[/b]\n"
    )
    files = [("docs", docs), ("questions", questions)]
    files += [("labels", tmp_path / "l.csv"), ("verdicts", tmp_path / "v.csv")]
    return import_hostile_workspace(capsys, ws, files, RETRIEVER)


def _no_escapes(text: str) -> None:
    assert CLEAR not in text and "\x1b[31m" not in text and "\x9b" not in text
    if not (common.out.is_terminal or common.err.is_terminal):
        assert "\x1b" not in text  # no colour codes either: the output is not a terminal


def test_markup_and_escapes_print_literally(markup_ws, capsys):
    ws = markup_ws
    seen: dict[str, str] = {}

    def cli(*argv: str) -> str:
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        _no_escapes(out + err)
        seen[argv[0]] = out
        return out

    out = cli("info", str(ws))
    assert KIM in out and "lee␛[2J\ufffd6n" in out
    out = cli("retriever", "list", str(ws))
    assert "[red]r[/red]␛[2J" in out
    out = cli("score", str(ws), "--quiet")
    assert "[red]r[/red]␛[2J" in out and "bm25-word" in out
    out = cli("score", str(ws), "--quiet", "--tag", "[red]hard[/red]")
    assert "scores (tag [red]hard[/red])" in out
    out = cli("failures", str(ws), "--retriever", RETRIEVER)
    assert "[i]q4[/i]" in out and "[bold]d1[/]" in out and "[bold red]T1[/] ␛[2Jx" in out
    out = cli("queue", str(ws))
    assert "$q2" in out and "[red]r[/red]␛[2J" in out
    out = cli("compare", str(ws), "bm25-word", RETRIEVER, "--samples", "50")
    assert "B [red]r[/red]␛[2J" in out
    out = cli("overlap", str(ws))
    assert "[i]q1[/i]" in out and "$q2" in out
    out = cli("agreement", str(ws))
    assert KIM in out and "lee␛[2J" in out
    out = cli("noanswer", str(ws), "--retriever", RETRIEVER)
    assert "[red]r[/red]␛[2J: " in out
    out = cli("sweep", str(ws), "--retriever", RETRIEVER, "--k1", "1.2", "--b", "0.75")
    assert "[red]r[/red]␛[2J: mrr over k1 x b" in out
    code, _, err = run(
        capsys, "label", str(ws), "[i]q1[/i]", "$d2", "1", "--annotator", f"me{CLEAR}"
    )
    assert code == 2 and "printable characters" in err  # a name typed now is checked
    _no_escapes(err)
    out = cli("label", str(ws), "[i]q1[/i]", "$d2", "1", "--annotator", "[u]me[/u]")
    assert out.strip() == "[u]me[/u]: [i]q1[/i] $d2 = 1"
    out = cli("verdict", str(ws), "$q2", "skip", "--annotator", "[u]me[/u]")
    assert out.strip() == "[u]me[/u]: $q2 is skip"


def test_json_output_escapes_every_control_character(markup_ws, capsys):
    ws = str(markup_ws)
    for argv in (
        ["info", ws],
        ["failures", ws, "--retriever", RETRIEVER],
        ["queue", ws],
        ["overlap", ws],
        ["agreement", ws],
        ["retriever", "list", ws],
    ):
        code, out, err = run(capsys, *argv, "--json")
        assert code == 0, err
        assert "\x1b" not in out and "\x9b" not in out
        json.loads(out)  # still JSON
    code, out, _ = run(capsys, "info", str(markup_ws), "--json")
    assert "lee\\u001b[2J\\u009b6n" in out and LEE in json.loads(out)["annotators"]


def test_an_error_naming_hostile_data_prints_it_literally(markup_ws, tmp_path, capsys):
    bad = tmp_path / f"x{CLEAR}[bold].md"
    bad.write_text("---\nid: [oops\n---\n")
    code, out, err = run(capsys, "import", "docs", markup_ws, bad)
    assert code == 2 and "x␛[2J[bold].md:3: bad YAML front matter" in err
    _no_escapes(out + err)
    code, _, err = run(capsys, "failures", markup_ws, "--retriever", f"no{CLEAR}")
    assert code == 2 and "no\\x1b[2J" in err  # named by repr in the message
    _no_escapes(err)
