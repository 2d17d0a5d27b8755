"""Every terminal escape family in the data prints as control pictures from every CLI
command that shows data, and as ``\\uXXXX`` escapes in ``--json`` output.

The families: CSI (colour, erase the screen), OSC 52 (write the clipboard), OSC 8 (a
hyperlink), DCS, the single-byte C1 forms of CSI and OSC, and a bidi override. Captured
output is not a terminal, so rich writes no colour codes of its own: any ESC, BEL, C1 or
bidi control in it came from the data.

tests/security/test_screens_show_escapes_as_pictures.py does the same for the screens;
tests/security/test_cli_prints_markup_literally.py checks markup.
"""

from __future__ import annotations

import csv
import json
import re

import pytest

from tests.conftest import import_hostile_workspace
from tests.conftest import run_cli as run
from tui.literal import visible

FAMILIES = (
    "\x1b[31m",  # CSI: colour
    "\x1b[2J",  # CSI: erase the screen
    "\x1b]52;c;SGVsbG8=\x07",  # OSC 52: write the clipboard
    "\x1b]8;;http://x\x1b\\",  # OSC 8: a hyperlink
    "\x1bPq#0;2;0;0;0\x1b\\",  # DCS
    "\x9b2J",  # C1 CSI
    "\x9d52;c;SGVsbG8=\x9c",  # C1 OSC
    "\u202e",  # bidi override
)
EVIL = "".join(FAMILIES)
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
KIM, LEE = f"kim{EVIL}", f"lee{EVIL}"
RETRIEVER = "r" + "".join(f for f in FAMILIES if not set(f) & set(" :=,"))  # name grammar
TAG = f"hard{EVIL}"


@pytest.fixture
def evil_ws(tmp_path, capsys):
    """Escapes in titles, texts, tags, annotators, a note, a retriever name, a query log."""
    ws = tmp_path / "e.db"
    assert run(capsys, "new", ws)[0] == 0
    docs, questions = tmp_path / "c.jsonl", tmp_path / "q.jsonl"
    docs.write_text(
        "".join(
            json.dumps(d) + "\n"
            for d in (
                {"_id": "d1", "title": f"T1 {EVIL}", "text": f"감쇠 보정 원리 {EVIL}"},
                {"_id": "d2", "title": f"T2 {EVIL}", "text": f"금속 인공물 {EVIL}"},
                {"_id": "d3", "title": "T3", "text": "점검 공지 절차"},
            )
        )
    )
    questions.write_text(
        "".join(
            json.dumps(q) + "\n"
            for q in (
                {"_id": "q1", "text": f"감쇠 보정 {EVIL}", "tags": [TAG]},
                {"_id": "q2", "text": f"금속 인공물 {EVIL}", "tags": ["easy"]},
                {"_id": "q3", "text": "점검 공지", "tags": [TAG]},
                {"_id": "q4", "text": "감쇠 보정 원리", "tags": []},  # d1 beats its gold
            )
        )
    )
    with (tmp_path / "l.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["question_id", "doc_id", "annotator", "grade"])
        writer.writerows(
            [
                ("q1", "d1", KIM, 2),
                ("q1", "d2", LEE, 1),
                ("q2", "d2", KIM, 2),
                ("q2", "d2", LEE, 2),
                ("q3", "d3", KIM, 1),
                ("q3", "d3", LEE, 1),
                ("q4", "d2", KIM, 1),
                ("q4", "d2", LEE, 1),
            ]
        )
    with (tmp_path / "v.csv").open("w", newline="") as f:
        csv.writer(f).writerows(
            [["question_id", "annotator", "verdict", "note"], ["q1", KIM, "ambiguous", EVIL]]
        )
    files = [("docs", docs), ("questions", questions)]
    files += [("labels", tmp_path / "l.csv"), ("verdicts", tmp_path / "v.csv")]
    return import_hostile_workspace(capsys, ws, files, RETRIEVER)


def clean(text: str) -> str:
    assert not UNSAFE.search(text), sorted(set(UNSAFE.findall(text)))
    return text


def test_every_command_prints_escapes_as_pictures(evil_ws, tmp_path, capsys):
    ws = str(evil_ws)

    def cli(*argv: str) -> str:
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        return clean(out + err)

    assert visible(KIM)[:8] in cli("info", ws)
    assert visible(RETRIEVER)[:8] in cli("retriever", "list", ws)
    assert visible(RETRIEVER)[:8] in cli("score", ws, "--quiet")
    assert f"tag {visible(TAG)}" in cli("score", ws, "--quiet", "--tag", TAG)
    failures = cli("failures", ws, "--retriever", RETRIEVER)
    assert "d1 T1" in failures and "␛[31m␛[2J" in failures  # the title wraps after T1
    assert visible(RETRIEVER)[:8] in cli("queue", ws)
    assert f"B {visible(RETRIEVER)}" in cli(
        "compare", ws, "bm25-word", RETRIEVER, "--samples", "50"
    )
    cli("overlap", ws)
    assert visible(LEE)[:8] in cli("agreement", ws)  # (a table cell wraps)
    cli("noanswer", ws, "--retriever", RETRIEVER)
    cli("sweep", ws, "--retriever", RETRIEVER, "--k1", "1.2", "--b", "0.75")
    # an annotator or snapshot name with controls is printed, or refused and quoted by repr
    for name, argv in (
        (KIM, ("label", ws, "q3", "d1", "1", "--annotator", KIM)),
        (LEE, ("verdict", ws, "q3", "skip", "--annotator", LEE)),
        (f"s{EVIL}", ("snapshot", ws, f"s{EVIL}")),
    ):
        got, out, err = run(capsys, *argv)
        assert got in (0, 2), err
        assert visible(name)[:6] in clean(out + err) or repr(name)[1:8] in err
    cli("snapshot", ws, "s1")
    assert visible(RETRIEVER)[:8] in cli("snapshot", "show", ws, "s1")
    log = tmp_path / "log.txt"
    log.write_text(f"감쇠 보정 {EVIL}\n감쇠 보정 {EVIL}!\n금속 인공물\n", encoding="utf-8")
    cli("import", "querylog", ws, str(log))
    cli("check", ws)


def test_json_output_escapes_every_family(evil_ws, capsys):
    ws = str(evil_ws)
    for argv in (
        ["info", ws],
        ["failures", ws, "--retriever", RETRIEVER],
        ["queue", ws],
        ["overlap", ws],
        ["agreement", ws],
        ["retriever", "list", ws],
        ["score", ws, "--quiet"],
    ):
        code, out, err = run(capsys, *argv, "--json")
        assert code == 0, err
        data = json.loads(clean(out))  # still JSON, and the data comes back whole
        if argv[0] == "info":
            assert KIM in data["annotators"]
