"""``goldpan docs``: list and search the documents, in real goldpan processes."""

from __future__ import annotations

import json

from engine.types import Doc
from engine.workspace import Workspace
from tests.cli.test_cli_exit import goldpan


def docs_json(ws, *argv: object) -> dict:
    done = goldpan(ws.parent, "docs", ws, "--json", *argv)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_docs_lists_id_title_and_length_in_id_order(tiny_ws):
    done = goldpan(tiny_ws.parent, "docs", tiny_ws)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "documents: 4"
    rows = [[c.strip() for c in line.strip("│").split("│")] for line in lines if "│ d" in line]
    # d1 "감쇠 보정은 CT 영상으로 감쇠 계수를 구한다." is 26 characters
    assert rows[0] == ["d1", "감쇠 보정 원리", "26"]
    assert [r[0] for r in rows] == ["d1", "d2", "d3", "d4"]
    data = docs_json(tiny_ws)
    assert (data["search"], data["total"], data["corpus"]) == (None, 4, 4)
    assert data["docs"][3] == {
        "id": "d4",
        "title": "notice",
        "length": len("점검 공지."),
        "found_in": [],
        "snippet": None,
    }


def test_a_search_finds_id_title_or_text_whatever_the_case(tiny_ws):
    data = docs_json(tiny_ws, "--search", "td-2024")
    # d3: id d3, title "TD-2024-0137", text "문서번호 TD-2024-0137 팬텀 점검 절차."
    assert [d["id"] for d in data["docs"]] == ["d3"]
    assert data["docs"][0]["found_in"] == ["title", "text"]
    assert data["docs"][0]["snippet"] == "문서번호 TD-2024-0137 팬텀 점검 절차."
    data = docs_json(tiny_ws, "--search", "점검")
    assert [d["id"] for d in data["docs"]] == ["d3", "d4"] and data["total"] == 2
    assert docs_json(tiny_ws, "--search", "D4")["docs"][0]["found_in"] == ["id"]


def test_the_snippet_is_the_text_around_the_first_match(tmp_path):
    from engine.workspace_setup import new_workspace

    ws = new_workspace(tmp_path / "long.db")
    text = "가" * 100 + " 바늘 " + "나" * 100
    ws.write_docs([Doc("long", "긴 글", text)])
    ws.close()
    (found,) = docs_json(tmp_path / "long.db", "--search", "바늘")["docs"]
    # 30 characters each side of the match, cut with an ellipsis
    assert found["snippet"] == "…" + "가" * 29 + " 바늘 " + "나" * 29 + "…"


def test_a_search_that_finds_nothing_says_so(tiny_ws):
    done = goldpan(tiny_ws.parent, "docs", tiny_ws, "--search", "화성 탐사")
    assert done.returncode == 0
    assert done.stdout.strip() == (
        "no document holds '화성 탐사' in its id, title or text (4 documents searched)"
    )
    data = docs_json(tiny_ws, "--search", "화성 탐사")
    assert (data["total"], data["docs"]) == (0, [])


def test_the_limit_says_how_many_more_there_are(tiny_ws):
    done = goldpan(tiny_ws.parent, "docs", tiny_ws, "--limit", "2")
    assert done.returncode == 0
    assert "2 shown of 4: --limit N shows more (0: all)" in done.stdout
    assert len(docs_json(tiny_ws, "--limit", "2")["docs"]) == 2
    assert len(docs_json(tiny_ws, "--limit", "0")["docs"]) == 4
    assert "shown of" not in goldpan(tiny_ws.parent, "docs", tiny_ws, "--limit", "0").stdout


def test_bad_usage_exits_2_and_writes_nothing(tiny_ws):
    before = Workspace.open(tiny_ws, readonly=True)
    count = before.doc_count()
    before.close()
    for argv, said in (
        (["--search", "  "], "--search needs some text to look for"),
        (["--limit", "-1"], "--limit"),
        (["--limit", "ten"], "--limit"),
    ):
        done = goldpan(tiny_ws.parent, "docs", tiny_ws, *argv)
        assert done.returncode == 2 and said in done.stderr, argv
        assert "Traceback" not in done.stderr
    after = Workspace.open(tiny_ws, readonly=True)
    assert after.doc_count() == count
    after.close()
