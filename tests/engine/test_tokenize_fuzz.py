"""Every registered tokenizer on arbitrary Unicode: no exception, the same tokens for the
same text (one call, a second call, a fresh instance, and ``tokenize_many``), and every
token a non-empty string.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.tokenize import KIWI_MAX_RUN, TOKENIZERS, Tokenizer, kiwi_safe

NAMES = sorted(TOKENIZERS)
SETTINGS = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])

SPECIAL = [
    "\u200d",  # zero width joiner
    "\u0301",  # combining acute
    "\ufeff",
    "\x00",
    "\x1b",
    "\x85",
    "\u2028",
    "\u202e",  # right-to-left override
    "\ud800",  # lone surrogates: a Python str can hold them
    "\udfff",
    "\U0001f468",
    "가",
    "ㄱ",
    "-",
    " ",
]
# all of Unicode, lone surrogates included, with the awkward characters drawn often
CHARS = st.one_of(
    st.characters(),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    st.sampled_from(SPECIAL),
)
# st.text leaves surrogates out whatever the alphabet: join the characters instead
TEXT = st.lists(CHARS, max_size=60).map("".join)

CASES = {
    "empty": "",
    "blank": " \t\n\r\u3000",
    "emoji zwj family": "👨\u200d👩\u200d👧\u200d👦 가족 사진 👍🏽",
    "flags and keycaps": "🇰🇷🇯🇵 1\ufe0f\u20e3 #\ufe0f\u20e3",
    "combining marks": "e\u0301\u0301\u0301 a\u0308 \u1100\u1161\u11a8 Z\u0351\u0337\u0353",
    "arabic": "مرحبا بالعالم ٢٠٢٤",
    "hebrew": "שלום עולם",
    "bidi overrides": "abc\u202edef\u202c \u2066x\u2069",
    "nul and controls": "a\x00b\x01c\x1b[31md\x7f\x85e\x9b6n 감\x00쇠",
    "lone surrogates": "a\ud800b \udc00감쇠 \ud83d",
    "mixed scripts": "감쇠보정AC2024년 CT로 PET-CT 3D재구성 v2.3 ①②",
    "document number": "2024-0137",
    "serial in text": "TD-2024-0137 문서의 보정",
    "only punctuation": "!!! ??? ... ---",
    "private use and noncharacters": "\ue000\uf8ff\ufdd0\uffff\U0010ffff",
    "latin run 100k": "a" * 100_000,
    "digit run 100k": "7" * 100_000,
    "mixed run 100k": ("감쇠a1" * 25_000)[:100_000],
    "hangul run 10k": "가" * 10_000,
}


@pytest.fixture(scope="module")
def tokenizers() -> dict[str, Tokenizer]:
    """One instance of each tokenizer (Kiwi loads once per process)."""
    return {name: TOKENIZERS[name]() for name in NAMES}


def check(tok: Tokenizer, text: str) -> list[str]:
    tokens = tok(text)
    assert isinstance(tokens, list)
    assert all(isinstance(t, str) and t for t in tokens), [t for t in tokens if not t][:3]
    assert tok(text) == tokens  # deterministic
    return tokens


@pytest.mark.kiwi
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", NAMES)
def test_explicit_cases(tokenizers, name, case):
    tok = tokenizers[name]
    text = CASES[case]
    tokens = check(tok, text)
    assert TOKENIZERS[name]()(text) == tokens  # a fresh instance agrees
    assert tok.tokenize_many([text, "감쇠 보정", text]) == [tokens, tok("감쇠 보정"), tokens]
    if case in ("empty", "blank", "only punctuation"):
        assert tokens == []


@pytest.mark.kiwi
@SETTINGS
@given(texts=st.lists(TEXT, max_size=6))
def test_arbitrary_unicode(tokenizers, texts):
    for name in NAMES:
        tok = tokenizers[name]
        singles = [check(tok, t) for t in texts]
        assert tok.tokenize_many(texts) == singles, name


@pytest.mark.parametrize("name", ["word", "bigram", "word+bigram"])
def test_the_word_tokenizers_on_a_100k_hangul_run(tokenizers, name):
    run = "가" * 100_000
    expected = {
        "word": [run],
        "bigram": ["가가"] * 99_999,
        "word+bigram": [run] + ["가가"] * 99_999,
    }[name]
    assert check(tokenizers[name], run) == expected


def test_word_tokens_of_the_hostile_cases_are_known(tokenizers):
    word = tokenizers["word"]
    assert word(CASES["document number"]) == ["2024", "0137"]
    assert word(CASES["nul and controls"]) == ["a", "b", "c", "31md", "e", "6n", "감", "쇠"]
    assert word(CASES["lone surrogates"]) == ["a", "b", "감쇠"]
    assert word(CASES["hebrew"]) == ["שלום", "עולם"]
    assert tokenizers["bigram"]("감\u200d쇠보정") == ["감", "쇠보", "보정"]


@pytest.mark.kiwi
def test_kiwi_keeps_the_document_number_and_its_groups(tokenizers):
    kiwi = tokenizers["kiwi"]
    assert kiwi(CASES["document number"]) == ["2024-0137", "2024", "0137"]
    assert {"2024-0137", "0137", "문서", "보정"} <= set(kiwi(CASES["serial in text"]))
    # a lone surrogate (Kiwi cannot decode one) leaves the words around it as they were
    assert kiwi("a\ud800b 감쇠") == kiwi("a\ufffdb 감쇠")
    assert "감쇠" in kiwi(CASES["lone surrogates"])


@pytest.mark.kiwi
def test_kiwi_on_a_long_letter_run_is_linear(tokenizers):
    # Kiwi's time on one run of letters grows with its square: 200,000 letters took about
    # 30 s before long runs were cut where Kiwi cuts them itself (every 1,023 characters)
    kiwi = tokenizers["kiwi"]
    started = time.perf_counter()
    tokens = kiwi("x" * 200_000 + " 감쇠 보정")
    assert time.perf_counter() - started < 5
    assert tokens[-2:] == ["감쇠", "보정"]
    assert "".join(tokens[:-2]) == "x" * 200_000
    assert max(len(t) for t in tokens) == KIWI_MAX_RUN


def test_kiwi_safe_changes_only_what_kiwi_cannot_take():
    ordinary = "감쇠 보정은 CT로 어떻게 하나? TD-2024-0137, https://e.x/a?b=c " + "가" * 5000
    assert kiwi_safe(ordinary) == ordinary
    assert kiwi_safe("a\ud800b\udfff") == "a\ufffdb\ufffd"
    cut = kiwi_safe("q" * 2500)
    assert cut.split(" ") == ["q" * 1023, "q" * 1023, "q" * 454]


@SETTINGS
@given(texts=st.lists(TEXT, min_size=1, max_size=40), pad=st.integers(0, 300))
def test_bigram_expansion_of_many_words_is_the_bigram_rule_word_by_word(texts, pad):
    # a long list is cut into pairs with numpy: every word must give what bigram_tokens
    # gives it (Hangul pairs, any other word whole), in order, with its own count
    from engine.tokenize import bigram_expansion, bigram_tokens, word_tokens

    words = [w for t in texts for w in word_tokens(t)] + ["감쇠보정", "a", "가", "x가y"] * pad
    each = [bigram_tokens(w) for w in words]
    assert bigram_expansion(words) == ([t for ts in each for t in ts], [len(ts) for ts in each])


def test_bigram_expansion_takes_any_strings_long_lists_too():
    from engine.tokenize import bigram_expansion

    words = ["가\x00나", "", "\ud800가", "가\U0001f600나", "힣\uabff", "ab"] * 60
    flat, sizes = bigram_expansion(words)
    assert sizes == [2, 1, 1, 2, 1, 1] * 60
    assert flat[:8] == [
        "가\x00",
        "\x00나",
        "",
        "\ud800가",
        "가\U0001f600",
        "\U0001f600나",
        "힣\uabff",
        "ab",
    ]
    assert bigram_expansion(words[:6]) == (flat[:8], sizes[:6])  # the short path agrees
