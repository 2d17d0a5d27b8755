"""Series and overview posts told from titles and front matter (:mod:`engine.series`).

The title table holds Korean and English titles written each way a series numbers its
posts, and near-misses that are no series: a year, a version, a model number, a date.
"""

from __future__ import annotations

import pytest

from engine.series import place, relation, title_ordinal
from engine.types import Doc

TITLES = [
    # (title, stem, number, mark): None where the title writes no ordinal
    ("PET 원리 ⑤", "PET 원리", 5, "⑤"),
    ("PET 원리 ⑳ 마지막", "PET 원리", 20, "⑳"),
    ("오개념 ⓪ 개요", "오개념", 0, "⓪"),
    ("쿠버네티스 입문 1편", "쿠버네티스 입문", 1, "1편"),
    ("[2편] 쿠버네티스 입문", "쿠버네티스 입문", 2, "2편"),  # nothing before: the stem after
    ("한국사 2부: 조선", "한국사", 2, "2부"),
    ("운영체제 제3장 프로세스", "운영체제", 3, "제3장"),
    ("Docker Part 2: Compose", "Docker", 2, "Part 2"),
    ("Docker pt. 3", "Docker", 3, "pt. 3"),
    ("Rust 튜토리얼 #3", "Rust 튜토리얼", 3, "#3"),
    ("PET/CT 일일 QC (3) 균일도 팬텀 점검", "PET/CT 일일 QC", 3, "(3)"),
    ("정리 노트 3/5", "정리 노트", 3, "3/5"),
    ("Linear Algebra II", "Linear Algebra", 2, "II"),
    ("Compilers — Chapter IV: Parsing", "Compilers", 4, "Chapter IV"),
    ("Go 동시성 Episode 7", "Go 동시성", 7, "Episode 7"),
    ("Rust 입문 Part I", "Rust 입문", 1, "Part I"),  # a lone I after a keyword
    # near-misses: no ordinal
    ("2024 회고", None, None, None),  # a year
    ("회고 (2024)", None, None, None),  # a year in parentheses: an ordinal has <= 3 digits
    ("장애 회고 #2024", None, None, None),
    ("Python 3.12 새 기능", None, None, None),  # a version
    ("goldpan v2.0 릴리스", None, None, None),
    ("A100 벤치마크", None, None, None),  # a model number
    ("iPhone 15 리뷰", None, None, None),  # a bare number
    ("RTX 4090 후기", None, None, None),
    ("회의록 2024/3/5", None, None, None),  # a date
    ("24/7 운영 체계", None, None, None),  # not "part 24 of 7"
    ("3부작 영화 리뷰", None, None, None),  # a trilogy, not part 3
    ("Who am I", None, None, None),  # a lone I is a word
    ("Counterpart 2 notes", None, None, None),  # "part" inside a word
    ("C#3 문법", None, None, None),
]


@pytest.mark.parametrize(("title", "stem", "number", "mark"), TITLES)
def test_title_ordinal(title, stem, number, mark):
    found = title_ordinal(title)
    if stem is None:
        assert found is None
    else:
        assert found is not None
        assert (found.stem, found.number, found.mark) == (stem, number, mark)


def test_the_table_has_twenty_titles_and_near_misses_of_each_kind():
    assert len(TITLES) >= 20
    assert sum(1 for t in TITLES if t[1] is None) >= 10
    assert any(any("가" <= c <= "힣" for c in t[0]) for t in TITLES)
    assert any(t[0].isascii() for t in TITLES)


def test_stems_compare_up_to_case_width_and_spacing():
    a, b = title_ordinal("docker  PART 1"), title_ordinal("Ｄｏｃｋｅｒ Part 2")
    assert a is not None and b is not None and a.key == b.key


@pytest.mark.parametrize(
    ("title", "overview"),
    [
        ("오개념 ⓪ 개요", True),  # a title word and the 0th post
        ("PET 원리 ⓪", True),  # the series' 0th post
        ("PET 원리 ⑤", False),
        ("PET/CT 품질관리 시리즈 총정리", True),
        ("시리즈 목차", True),
        ("새 장비 소개", True),
        ("Overview of dense retrieval", True),
        ("An Introduction to BM25", True),
        ("Index", True),
        ("Table of Contents", True),
        ("Vector indexing with HNSW", False),  # English overview words are whole words
        ("Reindex the corpus", False),
        ("2024 회고", False),
    ],
)
def test_overview_from_the_title(title, overview):
    assert place(Doc("d", title, "")).overview is overview


def test_front_matter_overrides_the_title():
    # series: a field names the series whatever the title says
    a = Doc("a", "PET 원리 ⑤", "", {"series": "pet"})
    b = Doc("b", "PET 원리 ⑥", "", {"series": "physics"})
    assert relation(b, a).kind == "other"
    c = Doc("c", "감쇠 이야기", "", {"series": "pet"})  # no ordinal in the title
    assert relation(c, a).detail == "neighbour in series 'pet'"
    # overview: true / false beats the title's words
    assert place(Doc("o", "PET 원리 ⑦", "", {"overview": True})).overview
    assert not place(Doc("o", "PET 원리 개요", "", {"overview": False})).overview
    assert place(Doc("o", "PET 원리 ⑦", "", {"overview": "yes"})).overview  # CSV text
    said = relation(Doc("o", "PET 원리 개요", "PET 원리 ⑤ 참고", {"overview": False}), a)
    assert said.kind == "other"  # not an overview, not even by quoting the gold's title


def test_neighbour_in_a_title_series_names_both_ordinals():
    gold = Doc("g", "PET 원리 ⑤ 감쇠", "")
    top = Doc("t", "PET 원리 ⑥ 산란", "")
    said = relation(top, gold)
    assert (said.kind, said.series) == ("neighbour", "PET 원리")
    assert said.detail == "neighbour in series 'PET 원리' (⑤ vs ⑥)"
    # parenthesised marks are not put in parentheses again
    said = relation(Doc("t", "영상 재구성 (7)", ""), Doc("g", "영상 재구성 (2)", ""))
    assert said.detail == "neighbour in series '영상 재구성' (2) vs (7)"


def test_marks_of_two_title_series_inside_one_front_matter_series_are_not_compared():
    gold = Doc("g", "감쇠 보정 (2) CT 기반 방법", "", {"series": "recon"})
    top = Doc("t", "영상 재구성 (7) 정칙화", "", {"series": "recon"})
    assert relation(top, gold).detail == "neighbour in series 'recon'"


def test_overview_of_the_gold_series_and_of_another():
    gold = Doc("g", "오개념 ③ 틀린 믿음", "")
    said = relation(Doc("o", "오개념 ⓪ 개요", ""), gold)
    assert said.kind == "overview"
    assert said.detail == "overview of series '오개념' (개요)"
    said = relation(Doc("o", "PET 원리 ⓪", ""), gold)
    assert said.detail == "overview (⓪)"


def test_an_overview_quotes_the_gold_title():
    gold = Doc("g", "감쇠 보정 원리", "")
    assert relation(Doc("i", "공지", "앞 글: 감쇠 보정 원리 참고"), gold).detail == (
        "overview (quotes the gold's title)"
    )
    # a title of a few letters is found everywhere: never "quoted"
    assert relation(Doc("i", "공지", "PET 이야기"), Doc("g", "PET", "")).kind == "other"


def test_near_misses_are_never_neighbours():
    for a, b in [
        ("A100 벤치마크", "A200 벤치마크"),
        ("2023 회고", "2024 회고"),
        ("Python 3.11 새 기능", "Python 3.12 새 기능"),
        ("회의록 2024/3/5", "회의록 2024/3/12"),
    ]:
        assert relation(Doc("t", b, ""), Doc("g", a, "")).kind == "other", (a, b)


def test_shared_fields_make_neighbours():
    gold = Doc("g", "감쇠 보정 원리", "", {"number": "TD-1", "article": "감쇠"})
    assert relation(Doc("n", "다른 글", "", {"number": "TD-1"}), gold).detail == (
        "neighbour: the same number 'TD-1'"
    )
    assert relation(Doc("n", "다른 글", "", {"article": "감쇠"}), gold).kind == "neighbour"
    assert relation(Doc("n", "다른 글", "", {"version": "2"}), gold).kind == "other"
