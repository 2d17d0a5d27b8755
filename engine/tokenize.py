r"""Tokenizers: ``word``, ``bigram``, ``word+bigram`` and ``kiwi``, behind one protocol.

Each tokenizer turns a text into a list of string tokens. The same pipeline is applied
to documents and to questions, so an index and its queries always agree.

* ``word``: the lowercase ``\w+`` runs of the text.
* ``bigram``: each ``word`` token containing a Hangul syllable becomes its overlapping
  2-character pieces (``보정은`` -> ``보정``, ``정은``), so a query word without its
  particle still matches; any other word stays whole. A one-syllable Hangul word has no
  pair and stays whole, as Lucene's ``CJKBigramFilter`` emits a lone character as a
  unigram.
* ``word+bigram``: the ``word`` list followed by the ``bigram`` list.
* ``kiwi``: Kiwi morphemes with content tags, lowercased; serial numbers
  (``W_SERIAL``, e.g. ``2024-0137``) are kept whole *and* indexed by their digit groups,
  so a user who types ``0137`` finds ``TD-2024-0137``.

Kiwi needs about 2.5 s and 0.5 GB to load; it is loaded on first use, once per process
(in the terminal app, in a helper process: :mod:`engine.kiwi_helper`).
Kiwi cannot decode a lone surrogate (it raises), and its time on a run of letters without
a space grows with the square of the run's length (a 200,000-letter run took half a
minute), so text reaches it with lone surrogates as U+FFFD and such runs (outside
Hangul, which Kiwi reads in linear time) cut every 1,023 characters, where Kiwi cuts them
itself: ordinary text is unchanged.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from engine.errors import UnknownName

_WORD = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+")
_HANGUL_FIRST, _HANGUL_LAST = 0xAC00, 0xD7A3  # the precomposed syllables 가 .. 힣
_HANGUL_SYLLABLE = re.compile(f"[{chr(_HANGUL_FIRST)}-{chr(_HANGUL_LAST)}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
KIWI_MAX_RUN = 1023
"""Kiwi's own cut of a run without spaces (a longer run comes back in pieces this long)."""
# Hangul runs take linear time and are left whole; other long runs are cut.
_LONG_RUN = re.compile(r"[^\s\uac00-\ud7a3]{" + str(KIWI_MAX_RUN + 1) + ",}")


class Tokenizer(Protocol):
    """Turns text into tokens; ``tokenize_many`` may batch (Kiwi uses threads)."""

    name: str

    def __call__(self, text: str) -> list[str]:
        """Tokens of one text."""
        ...

    def tokenize_many(self, texts: Sequence[str]) -> list[list[str]]:
        """Tokens of many texts, in input order."""
        ...

    def ready(self) -> None:
        """Load what tokenizing needs (Kiwi's model), so that no ranking's time pays for it."""
        ...


_CHUNK = 1 << 16
"""Characters per piece when a long text is counted piece by piece (:func:`token_counts`)."""
_SPACE = re.compile(r"\s")


def text_pieces(text: str, size: int | None = None) -> Iterator[str]:
    r"""``text`` in pieces of about ``size`` characters, each cut just after a whitespace.

    No ``\w+`` run spans a whitespace, and lowercasing a piece gives the same characters
    as lowercasing the whole text (a final sigma looks only as far as the space), so the
    word tokens of the pieces are those of the text, in order.
    """
    size = size or _CHUNK
    start, n = 0, len(text)
    while start < n:
        m = _SPACE.search(text, start + size) if start + size < n else None
        end = m.end() if m else n
        yield text[start:end]
        start = end


class _FunctionTokenizer:
    """A tokenizer made from a plain function of one text.

    ``passes`` are the same tokens as functions of the word list, one list after the
    other: what :meth:`count` uses to count a long text piece by piece.
    """

    def __init__(
        self,
        name: str,
        fn: Callable[[str], list[str]],
        passes: Sequence[Callable[[list[str]], list[str]]] = (),
    ) -> None:
        self.name = name
        self._fn = fn
        self._passes = passes

    def count(self, text: str) -> Counter[str]:
        """How often each token occurs, keys in order of first occurrence.

        The same as ``Counter(self(text))``, without holding every token of the text at
        once: a 250 MB document made ~45 million token strings (several GB).
        """
        if not self._passes or len(text) <= _CHUNK:
            return Counter(self._fn(text))
        counts: Counter[str] = Counter()
        for tokens_of in self._passes:
            for piece in text_pieces(text):
                counts.update(tokens_of(_WORD.findall(piece.lower())))
        return counts

    def __call__(self, text: str) -> list[str]:
        return self._fn(text)

    def tokenize_many(self, texts: Sequence[str]) -> list[list[str]]:
        fn = self._fn
        return [fn(t) for t in texts]

    def ready(self) -> None:
        """Nothing to load: a function of the text."""

    def __repr__(self) -> str:
        return f"Tokenizer({self.name!r})"


def word_tokens(text: str) -> list[str]:
    r"""Lowercase ``\w+`` runs: ``'보정은 CT로'`` -> ``['보정은', 'ct로']``."""
    return _WORD.findall(text.lower())


def _bigrams_of(words: list[str]) -> list[str]:
    out: list[str] = []
    hangul = _HANGUL_SYLLABLE.search
    for w in words:
        if len(w) > 1 and hangul(w):
            out.extend([w[i : i + 2] for i in range(len(w) - 1)])
        else:
            out.append(w)
    return out


_NUMPY_WORDS = 256
"""From this many words on, :func:`bigram_expansion` works on arrays."""


def _bigram_expansion_loop(words: Sequence[str]) -> tuple[list[str], list[int]]:
    out: list[str] = []
    sizes: list[int] = []
    for w in words:
        made = _bigrams_of([w])
        out.extend(made)
        sizes.append(len(made))
    return out, sizes


def bigram_expansion(words: Sequence[str]) -> tuple[list[str], list[int]]:
    """The ``bigram`` tokens of each word on its own, end to end, and how many each gives.

    ``bigram`` maps every word independently, so an index can count a corpus's bigrams
    from its word counts: each distinct word is expanded once, not once per occurrence.
    The rule is :func:`bigram_tokens`'s; a long list is expanded with numpy (half the
    time: the pairs are cut from the words' code points at once).
    """
    if len(words) < _NUMPY_WORDS:
        return _bigram_expansion_loop(words)
    import numpy as np  # pooling only; the CLI's quick commands never get here

    n = len(words)
    codes = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    if not codes.all():  # numpy's fixed-width strings would drop a NUL at a pair's end
        return _bigram_expansion_loop(words)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=n)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    hangul_before = np.zeros(codes.size + 1, dtype=np.int64)
    np.cumsum((codes >= _HANGUL_FIRST) & (codes <= _HANGUL_LAST), out=hangul_before[1:])
    split = (lengths > 1) & (hangul_before[ends] > hangul_before[starts])
    sizes = np.where(split, lengths - 1, 1)
    slot = np.cumsum(sizes) - sizes  # where each word's tokens begin in the output
    out = np.empty(int(sizes.sum()), dtype=object)
    whole = np.flatnonzero(~split)
    out[slot[whole]] = np.array(words, dtype=object)[whole]
    cut = np.flatnonzero(split)
    if cut.size:
        counts = sizes[cut]
        k = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
            np.cumsum(counts) - counts, counts
        )  # the pair's place in its word
        pairs = np.empty((codes.size - 1, 2), dtype="<u4")
        pairs[:, 0], pairs[:, 1] = codes[:-1], codes[1:]
        first = np.repeat(starts[cut], counts) + k
        out[np.repeat(slot[cut], counts) + k] = pairs.view("<U2")[first, 0].astype(object)
    return out.tolist(), sizes.tolist()


def bigram_tokens(text: str) -> list[str]:
    """Hangul words as overlapping character bigrams, other words whole.

    ``'감쇠 보정은 CT로 어떻게 하나'`` ->
    ``['감쇠', '보정', '정은', 'ct', 't로', '어떻', '떻게', '하나']``.
    """
    return _bigrams_of(word_tokens(text))


def word_bigram_tokens(text: str) -> list[str]:
    """The ``word`` tokens followed by the ``bigram`` tokens."""
    words = word_tokens(text)
    return words + _bigrams_of(words)


# Kiwi tags whose morphemes carry content. VV/VA may carry -R/-I (regular/irregular)
# suffixes since kiwipiepy 0.12, so tags are compared without the suffix.
KIWI_CONTENT_TAGS = frozenset({"NNG", "NNP", "NR", "SL", "SH", "SN", "XR", "VV", "VA"})
KIWI_WHOLE_TAGS = frozenset({"W_URL", "W_EMAIL", "W_HASHTAG", "W_MENTION", "W_SERIAL"})


def _cut_run(m: re.Match[str]) -> str:
    run = m.group()
    return " ".join(run[i : i + KIWI_MAX_RUN] for i in range(0, len(run), KIWI_MAX_RUN))


def kiwi_safe(text: str) -> str:
    """``text`` as Kiwi can take it quickly: lone surrogates as U+FFFD, long runs cut."""
    if _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    if _LONG_RUN.search(text):
        text = _LONG_RUN.sub(_cut_run, text)
    return text


class KiwiTokenizer:
    """Kiwi morphemes of content tags, lowercased, serials also split into digit groups."""

    name = "kiwi"
    _kiwi: Any = None
    _lock = threading.Lock()
    helper: Any = None
    """A :class:`~engine.kiwi_helper.KiwiHelper` that tokenizes in a process of its own
    (set for the whole process by :func:`~engine.kiwi_helper.use_kiwi_helper`), or None:
    Kiwi loads and runs in this process."""

    @classmethod
    def model(cls) -> Any:
        """The process-wide Kiwi instance, loaded on first use."""
        with cls._lock:
            if cls._kiwi is None:
                from kiwipiepy import Kiwi

                cls._kiwi = Kiwi()
            return cls._kiwi

    @staticmethod
    def _keep(tokens: Any) -> list[str]:
        out: list[str] = []
        for tok in tokens:
            tag = str(tok.tag)
            base = tag.split("-", 1)[0]
            if base in KIWI_WHOLE_TAGS:
                form = tok.form.lower()
                out.append(form)
                if base == "W_SERIAL":
                    groups = _DIGITS.findall(form)
                    if len(groups) > 1 or (groups and groups[0] != form):
                        out.extend(groups)
            elif base in KIWI_CONTENT_TAGS:
                out.append(tok.form.lower())
        return out

    def ready(self) -> None:
        """Load Kiwi's model now, once per process.

        ``Kiwi()`` takes about 1.5 s and its first analysis, which finishes the loading,
        about 2.5 s more: a first question ranked alone took that long. With a helper
        process, that is where it loads (this thread waits, letting Python's lock go).
        """
        if self.helper is not None:
            self.helper.ready()
            return
        self.model().tokenize("가")

    def __call__(self, text: str) -> list[str]:
        """Content morphemes of one text."""
        if not text.strip():
            return []
        if self.helper is not None:
            tokens: list[str] = self.helper.tokenize_many([kiwi_safe(text)])[0]
            return tokens
        return self._keep(self.model().tokenize(kiwi_safe(text)))

    def tokenize_many(self, texts: Sequence[str]) -> list[list[str]]:
        """Content morphemes of many texts (Kiwi's worker threads), in input order."""
        if not texts:
            return []
        if self.helper is not None:
            many: list[list[str]] = self.helper.tokenize_many([kiwi_safe(t) for t in texts])
            return many
        kiwi = self.model()
        # Kiwi analyses an iterable with its worker threads and yields in input order.
        results = kiwi.tokenize([kiwi_safe(t) for t in texts])
        return [self._keep(toks) for toks in results]

    def __repr__(self) -> str:
        return "Tokenizer('kiwi')"


def _same(words: list[str]) -> list[str]:
    return words


TOKENIZERS: dict[str, Callable[[], Tokenizer]] = {
    "word": lambda: _FunctionTokenizer("word", word_tokens, [_same]),
    "bigram": lambda: _FunctionTokenizer("bigram", bigram_tokens, [_bigrams_of]),
    "word+bigram": lambda: _FunctionTokenizer(
        "word+bigram", word_bigram_tokens, [_same, _bigrams_of]
    ),
    "kiwi": KiwiTokenizer,
}
"""The tokenizer registry: name -> factory."""

COMPOSED: dict[str, tuple[str, ...]] = {"word+bigram": ("word", "bigram")}
"""Tokenizers whose tokens are other tokenizers' tokens one list after the other (an
indexer that has those lists already can join them instead of tokenizing again)."""

WORD_MAPS: dict[str, Callable[[Sequence[str]], tuple[list[str], list[int]]]] = {
    "bigram": bigram_expansion
}
"""Tokenizers whose tokens are each ``word`` token mapped on its own, in order: name ->
the tokens of each word of a list, end to end, and how many each word gives (an indexer
can count them from the ``word`` counts)."""


def token_counts(tokenizer: Tokenizer, texts: Sequence[str]) -> list[Counter[str]]:
    """Each text's token counts (keys in order of first occurrence), as an index needs.

    Equal to ``[Counter(t) for t in tokenizer.tokenize_many(texts)]``; the built-in
    word tokenizers count piece by piece, so the memory needed stays a small multiple
    of the largest text (Kiwi's tokens are counted one text at a time).
    """
    count = getattr(tokenizer, "count", None)
    if count is not None:
        return [count(t) for t in texts]
    out: list[Counter[str]] = []
    for start in range(0, len(texts), _BATCH):  # batches keep Kiwi's threads busy
        out.extend(Counter(t) for t in tokenizer.tokenize_many(texts[start : start + _BATCH]))
    return out


_BATCH = 256


def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer registered as ``name``.

    Raises:
        UnknownName: with a message that lists every registered name.
    """
    try:
        factory = TOKENIZERS[name]
    except KeyError:
        known = ", ".join(sorted(TOKENIZERS))
        raise UnknownName(f"unknown tokenizer {name!r}; known tokenizers: {known}") from None
    return factory()
