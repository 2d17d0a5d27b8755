"""``goldpan import squad --onto``: questions attached to a corpus already in the workspace
by their article's title, or refused with the reason and nothing written. Real processes."""

from __future__ import annotations

import json

import pytest

from engine.types import Doc
from engine.workspace import Workspace
from engine.workspace_setup import new_workspace
from tests.cli.test_cli_exit import goldpan
from tests.conftest import snapshot


def squad_file(path, articles):
    """A SQuAD 2.0 file: articles as (title, [(qid, question, impossible)])."""
    answer = [{"text": "본문", "answer_start": 0}]
    data = {
        "version": "v2.0",
        "data": [
            {
                "title": title,
                "paragraphs": [
                    {
                        "context": f"{title} 본문",
                        "qas": [
                            {
                                "id": qid,
                                "question": text,
                                "answers": [] if impossible else answer,
                                "is_impossible": impossible,
                            }
                            for qid, text, impossible in qas
                        ],
                    }
                ],
            }
            for title, qas in articles
        ],
    }
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def posts(tmp_path):
    """A workspace whose corpus is a team's posts (ids are file names, not titles)."""
    path = tmp_path / "posts.db"
    ws = new_workspace(path)
    ws.write_docs(
        [
            Doc("pet-5", "PET 원리 ⑤ 감쇠", "감쇠 보정"),
            Doc("pet-6", "PET 원리 ⑥ 산란", "산란 보정"),
            Doc("notice-1", "공지", "첫 공지"),
            Doc("notice-2", "공지", "둘째 공지"),
        ]
    )
    ws.close()
    return path


def test_questions_attach_to_the_documents_of_their_titles(posts, tmp_path):
    squad = squad_file(
        tmp_path / "qa.json",
        [
            ("PET_원리_⑤_감쇠", [("a1", "감쇠 보정은?", False), ("a2", "없는 것", True)]),
            ("pet 원리  ⑥ 산란", [("b1", "산란 보정은?", False)]),  # case and spacing
            ("공지", [("c1", "답 없는 질문", True)]),  # two documents: no gold needed
        ],
    )
    done = goldpan(tmp_path, "import", "squad", posts, squad, "--onto")
    assert done.returncode == 0, done.stderr
    assert "attached by title to 2 existing documents" in done.stdout
    ws = Workspace.open(posts, readonly=True)
    try:
        assert ws.doc_count() == 4  # no article became a document
        gold = {(lab.question_id, lab.doc_id) for lab in ws.labels()}
        assert gold == {("a1", "pet-5"), ("b1", "pet-6")}
        assert {(v.question_id, v.verdict) for v in ws.verdicts()} == {
            ("a2", "no_answer"),
            ("c1", "no_answer"),
        }
    finally:
        ws.close()


def test_no_such_title_is_refused_naming_the_article_and_the_nearest_title(posts, tmp_path):
    squad = squad_file(
        tmp_path / "qa.json",
        [("PET 원리 ⑤ 감쇠", [("a1", "감쇠?", False)]), ("PET 원리 ⑦", [("d1", "?", False)])],
    )
    before = snapshot(posts)
    done = goldpan(tmp_path, "import", "squad", posts, squad, "--onto")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    message = " ".join(done.stderr.split())
    assert "1 of 2 articles cannot be attached" in message
    assert "data[1]: no document is titled 'PET 원리 ⑦'" in message
    assert (
        "the nearest: 'PET 원리 ⑥ 산란'" in message or "the nearest: 'PET 원리 ⑤ 감쇠'" in message
    )
    assert "Nothing was imported" in message
    assert snapshot(posts) == before


def test_two_documents_with_the_title_are_refused_naming_both(posts, tmp_path):
    squad = squad_file(tmp_path / "qa.json", [("공지", [("c1", "첫 공지는?", False)])])
    before = snapshot(posts)
    done = goldpan(tmp_path, "import", "squad", posts, squad, "--onto")
    assert done.returncode == 2
    message = " ".join(done.stderr.split())
    assert "data[0]: 2 documents are titled '공지' ('notice-1', 'notice-2')" in message
    assert snapshot(posts) == before


def test_onto_an_empty_corpus_or_paragraphs_is_refused(tmp_path):
    empty = tmp_path / "empty.db"
    new_workspace(empty).close()
    squad = squad_file(tmp_path / "qa.json", [("PET 원리", [("a1", "?", False)])])
    before = snapshot(empty)
    done = goldpan(tmp_path, "import", "squad", empty, squad, "--onto")
    assert done.returncode == 2
    assert "the workspace has no documents yet; import the corpus first" in done.stderr
    done = goldpan(tmp_path, "import", "squad", empty, squad, "--onto", "--level", "paragraph")
    assert done.returncode == 2 and "use --level article" in " ".join(done.stderr.split())
    assert snapshot(empty) == before
