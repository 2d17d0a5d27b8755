"""Series and overview posts, from front matter or from titles: what beat a gold document.

The seed studies read their failed questions and found two usual winners: a neighbouring
post of the same series ("PET 원리 ⑥" above the gold "PET 원리 ⑤") and an overview post
("오개념 ⓪ 개요"). A team's posts rarely say so in front matter, so both are also told
from the titles. This module is the one home of that rule; ``goldpan failures`` and the
Review screen's failures panel present its :class:`Relation`.

**A series from a title** is a stem followed (or preceded) by an ordinal, written one of
these ways (:data:`ORDINALS`): a circled number ``①``-``⑳`` or ``⓪``; a Korean counter
``1편`` / ``2부`` / ``3화`` / ``4강`` or ``제3장`` (``제`` then a number and 장, 편, 부,
화, 강, 절 or 권); a keyword ``Part 2``, ``Pt. 2``, ``Chapter 3``, ``Ch. 3``,
``Episode 4``, ``Ep 4``, ``Lesson 5``, ``Vol. 2`` (a number or a roman numeral);
``#3``; ``(3)``; ``3/5`` (part 3 of 5); a roman numeral ``II`` to ``XX`` standing last or
before a ``:``, ``-`` or ``(``. The stem is the title before the first ordinal (after
it, when nothing comes before: ``[1편] 쿠버네티스 입문``), without the brackets and
separators around it; two titles are in one series when their stems are equal up to
case, width and spacing. Numbers that are not ordinals are left alone: a bare number
(``iPhone 15``, ``A100``), a year (``(2024)``, ``#2024``: an ordinal has at most three
digits), a version (``v2.0``, ``3.12``), a date (``2024/3/5``), ``3부작`` (a trilogy),
and a lone ``I`` (``Who am I``; ``Part I`` is an ordinal).

**An overview** is a post whose title says so (:data:`OVERVIEW_WORDS`: 개요, 목차,
총정리, 소개, 목록, 모음, overview, introduction, index, contents, summary; English as
whole words, Korean inside words, where particles attach) or that is its series' 0th
post (``⓪``, ``0편``, ``Part 0``), or that quotes the gold's title in its text (an index
of posts).

**Front matter overrides**: a ``series`` field names the document's series whatever its
title says (a title's ordinal is still shown); ``overview: true`` makes a post an
overview and ``overview: false`` makes it none. A shared ``number``, ``version`` or
``article`` field (a document number, a SQuAD article's paragraphs) also makes two
documents neighbours.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

from engine.types import Doc

RelationKind = Literal["overview", "neighbour", "other"]

OVERVIEW_WORDS = (
    "개요",
    "목차",
    "총정리",
    "소개",
    "목록",
    "모음",
    "overview",
    "introduction",
    "index",
    "contents",
    "summary",
)
"""Title words of a post that sums up a series (English ones as whole words)."""

SHARED_FIELDS = ("number", "version", "article")
"""Front-matter fields besides ``series`` whose shared value makes two documents
neighbours (a document number and its versions, a SQuAD article's paragraphs)."""

_CIRCLED = {chr(0x2460 + i): i + 1 for i in range(20)} | {"⓪": 0}
_ROMAN = {
    "I": 1,
    "II": 2,
    "III": 3,
    "IV": 4,
    "V": 5,
    "VI": 6,
    "VII": 7,
    "VIII": 8,
    "IX": 9,
    "X": 10,
    "XI": 11,
    "XII": 12,
    "XIII": 13,
    "XIV": 14,
    "XV": 15,
    "XVI": 16,
    "XVII": 17,
    "XVIII": 18,
    "XIX": 19,
    "XX": 20,
}
_ROMAN_ALT = "|".join(sorted(_ROMAN, key=len, reverse=True))
_ROMAN_BARE = "|".join(r for r in sorted(_ROMAN, key=len, reverse=True) if len(r) > 1)
_NUM = r"\d{1,3}"

ORDINALS: tuple[re.Pattern[str], ...] = (
    re.compile("(?P<n>[" + "".join(_CIRCLED) + "])"),
    re.compile(rf"제\s*(?P<n>{_NUM})\s*[장편부화강절권](?![가-힣])"),
    re.compile(rf"(?<![\d.,])(?P<n>{_NUM})\s*[편부화강](?![가-힣])"),
    re.compile(
        rf"(?<![^\W\d_])(?:part|pt\.?|chapter|ch\.|episode|ep\.?|lesson|vol\.?|volume)\s*"
        rf"(?P<n>{_NUM}|{_ROMAN_ALT})(?![\w.])",
        re.IGNORECASE,
    ),
    re.compile(rf"(?<![\w#])#\s?(?P<n>{_NUM})(?![\w.])"),
    re.compile(rf"[(（]\s*(?P<n>{_NUM})\s*[)）]"),
    re.compile(r"(?<![\w./-])(?P<n>\d{1,2})\s*/\s*(?P<of>\d{1,2})(?![\w./-])"),
    re.compile(rf"(?<![\w.])(?P<n>{_ROMAN_BARE})(?=\s*(?:$|[:\-–—|(]))"),
)
"""The ways a title writes its place in a series (see the module doc); the first match
from the left is the title's ordinal."""

_ENGLISH_WORDS = re.compile(
    r"(?<![^\W\d_])(?:" + "|".join(w for w in OVERVIEW_WORDS if w.isascii()) + r")(?![^\W\d_])",
    re.IGNORECASE,
)
_KOREAN_WORDS = tuple(w for w in OVERVIEW_WORDS if not w.isascii())
_EDGES = " \t\r\n-–—:|·•,.;/[](){}<>「」『』【】〈〉《》\"'“”‘’"
_MIN_QUOTED_TITLE = 4
"""A gold title shorter than this is not looked for in the winner's text (two letters
are found everywhere)."""


@dataclass(frozen=True)
class TitleOrdinal:
    """Where a title puts its post in a series."""

    stem: str
    """The series' name as the title writes it (``PET 원리``)."""
    number: int
    """The post's number in the series (0 for ``⓪``)."""
    mark: str
    """The ordinal as written (``⑤``, ``Part 2``, ``(3)``, ``3/5``)."""

    @property
    def key(self) -> str:
        """The stem as compared: case, width and spacing folded."""
        return fold(self.stem)


def fold(name: str) -> str:
    """A series name as compared: NFKC, case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def _has_word(text: str) -> bool:
    return any(c.isalnum() for c in text)


def title_ordinal(title: str) -> TitleOrdinal | None:
    """The series stem and ordinal a title writes, or None (see the module doc)."""
    best: re.Match[str] | None = None
    for pattern in ORDINALS:
        for m in pattern.finditer(title):
            if _ordinal_value(m) is None:
                continue
            if best is None or m.start() < best.start():
                best = m
            break
    if best is None:
        return None
    number = _ordinal_value(best)
    assert number is not None
    before = title[: best.start()].strip(_EDGES)
    after = title[best.end() :].strip(_EDGES)
    stem = before if _has_word(before) else after
    if not _has_word(stem):
        return None
    return TitleOrdinal(stem, number, best.group(0).strip())


def _ordinal_value(m: re.Match[str]) -> int | None:
    """The number a match writes, or None when it is no ordinal (``5/3``, ``0/4``)."""
    n = m.group("n")
    if n in _CIRCLED:
        return _CIRCLED[n]
    if n.upper() in _ROMAN:
        return _ROMAN[n.upper()]
    value = int(n)
    of = m.groupdict().get("of")
    if of is not None and not (1 <= value <= int(of) and int(of) >= 2):
        return None
    return value


def _flag(value: Any) -> bool | None:
    """A front-matter yes/no (``true``, ``"yes"``, ``false``...), None when not one."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().casefold()
        if word in ("true", "yes"):
            return True
        if word in ("false", "no"):
            return False
    return None


def _text(value: Any) -> str | None:
    """A front-matter value as a name (None when empty, a list or a mapping)."""
    if value is None or isinstance(value, bool | list | dict):
        return None
    text = str(value).strip()
    return text or None


@dataclass(frozen=True)
class Place:
    """A document's series and whether it is an overview post."""

    series: str | None
    """The series' name: front matter's ``series``, else the title's stem."""
    ordinal: TitleOrdinal | None
    """The title's ordinal, if it writes one."""
    overview: bool
    """An overview post (front matter's ``overview``, else its title)."""
    overview_why: str
    """What made it one: the title's word (``개요``), its 0th ordinal (``⓪``) or
    ``front matter``; empty when it is none."""

    @property
    def mark(self) -> str | None:
        """The ordinal as the title writes it."""
        return self.ordinal.mark if self.ordinal else None


def place(doc: Doc) -> Place:
    """Where a document stands: its series and whether it is an overview post."""
    ordinal = title_ordinal(doc.title)
    series = _text(doc.fields.get("series")) or (ordinal.stem if ordinal else None)
    said = _flag(doc.fields.get("overview"))
    if said is not None:
        return Place(series, ordinal, said, "front matter" if said else "")
    word = overview_word(doc.title)
    if word is not None:
        return Place(series, ordinal, True, word)
    if ordinal is not None and ordinal.number == 0:
        return Place(series, ordinal, True, ordinal.mark)
    return Place(series, ordinal, False, "")


def overview_word(title: str) -> str | None:
    """The overview word a title holds (:data:`OVERVIEW_WORDS`), or None."""
    m = _ENGLISH_WORDS.search(title)
    if m is not None:
        return m.group(0)
    return next((w for w in _KOREAN_WORDS if w in title), None)


@dataclass(frozen=True)
class Relation:
    """How the document ranked first relates to a gold document it beat."""

    kind: RelationKind
    """``overview``, ``neighbour`` or ``other``."""
    detail: str
    """The relation in words: ``neighbour in series 'PET 원리' (⑤ vs ⑥)``."""
    series: str | None = None
    """The series (or shared field value) the two have in common."""


OTHER = Relation("other", "other")


def _same_series(top: Place, gold: Place) -> bool:
    if top.series is None or gold.series is None:
        return False
    return fold(top.series) == fold(gold.series)


def _marks(gold: Place, top: Place) -> str:
    """`` (⑤ vs ⑥)``: the gold's ordinal, then the winner's.

    Empty unless both titles write one on the same stem (two title series inside one
    front-matter series number their posts apart).
    """
    g, t = gold.ordinal, top.ordinal
    if g is None or t is None or g.key != t.key:
        return ""
    said = f"{g.mark} vs {t.mark}"
    return f" {said}" if "(" in said else f" ({said})"


def relation(top: Doc, gold: Doc) -> Relation:
    """How ``top`` (ranked first) relates to ``gold`` (a gold document it beat).

    An overview first (its own front matter or title, or its text quoting the gold's
    title), then a neighbour (the same series, or a shared :data:`SHARED_FIELDS` value),
    else ``other``.
    """
    t, g = place(top), place(gold)
    same = _same_series(t, g)
    quotes = (
        _flag(top.fields.get("overview")) is not False
        and len(gold.title.strip()) >= _MIN_QUOTED_TITLE
        and gold.title.strip() in top.text
    )
    if t.overview or quotes:
        why = t.overview_why if t.overview else "quotes the gold's title"
        where = f" of series '{t.series}'" if same else ""
        return Relation("overview", f"overview{where} ({why})", t.series if same else None)
    if same:
        assert t.series is not None
        return Relation("neighbour", f"neighbour in series '{t.series}'{_marks(g, t)}", t.series)
    for key in SHARED_FIELDS:
        value = _text(top.fields.get(key))
        if value is not None and value == _text(gold.fields.get(key)):
            return Relation("neighbour", f"neighbour: the same {key} '{value}'", value)
    return OTHER
