"""Question-vs-title lexical overlap: the easy-question warning of blind authoring.

A question that copies most of its words from a document title makes an easy test (the
seed studies: every method scores about 1.0 on such questions). The overlap of a question
with a title is the share of the question's distinct tokens that appear in the title;
the meter reports the highest share over all titles under each tokenizer, never which
title it was (the author must stay blind to titles).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.tokenize import bigram_tokens, word_tokens

EASY_THRESHOLD = 0.6
"""At or above this share of question tokens found in one title: likely an easy question."""

_TOKENIZERS = {"word": word_tokens, "bigram": bigram_tokens}


@dataclass(frozen=True)
class Overlap:
    """The highest overlap of a question with any title, per tokenizer."""

    by_tokenizer: dict[str, float]

    @property
    def score(self) -> float:
        """The highest of the per-tokenizer overlaps (0 when the question is empty)."""
        return max(self.by_tokenizer.values(), default=0.0)

    @property
    def likely_easy(self) -> bool:
        """True when the question shares most of its words with some title."""
        return self.score >= EASY_THRESHOLD


class TitleOverlap:
    """An index of document titles for fast overlap queries as the author types."""

    def __init__(self, titles: Sequence[str]) -> None:
        """Tokenize every title once, with an inverted index per tokenizer."""
        self._postings: dict[str, dict[str, list[int]]] = {}
        for name, tok in _TOKENIZERS.items():
            postings: dict[str, list[int]] = {}
            for i, title in enumerate(titles):
                for t in set(tok(title)):
                    postings.setdefault(t, []).append(i)
            self._postings[name] = postings

    def overlap(self, question: str) -> Overlap:
        """The highest share of the question's distinct tokens found in one title."""
        out: dict[str, float] = {}
        for name, tok in _TOKENIZERS.items():
            q = set(tok(question))
            if not q:
                out[name] = 0.0
                continue
            counts: dict[int, int] = {}
            postings = self._postings[name]
            for t in q:
                for i in postings.get(t, ()):
                    counts[i] = counts.get(i, 0) + 1
            out[name] = max(counts.values(), default=0) / len(q)
        return Overlap(out)
