import pytest

from engine.errors import UnknownName
from engine.tokenize import (
    TOKENIZERS,
    KiwiTokenizer,
    bigram_tokens,
    get_tokenizer,
    word_bigram_tokens,
    word_tokens,
)

SEED = "감쇠 보정은 CT로 어떻게 하나"


def test_word_is_lowercase_word_runs():
    assert word_tokens(SEED) == ["감쇠", "보정은", "ct로", "어떻게", "하나"]
    assert word_tokens("TD-2024-0137, v2.3!") == ["td", "2024", "0137", "v2", "3"]


def test_bigram_matches_the_seed_example():
    assert bigram_tokens(SEED) == ["감쇠", "보정", "정은", "ct", "t로", "어떻", "떻게", "하나"]


def test_bigram_keeps_non_hangul_words_and_single_syllables_whole():
    assert bigram_tokens("PET 집 scanner 보정") == ["pet", "집", "scanner", "보정"]


def test_bigram_recovers_a_word_without_its_particle():
    # the seed study's point: `보정` in the question matches `보정은` in a document
    assert "보정" in bigram_tokens("보정은")
    assert "보정" not in word_tokens("보정은")


def test_word_plus_bigram_is_both_lists():
    assert word_bigram_tokens(SEED) == word_tokens(SEED) + bigram_tokens(SEED)


def test_registry_error_lists_every_name():
    with pytest.raises(UnknownName) as exc:
        get_tokenizer("whitespace")
    for name in TOKENIZERS:
        assert name in str(exc.value)


@pytest.mark.kiwi
def test_kiwi_keeps_serials_whole_and_by_digit_groups(kiwi: KiwiTokenizer):
    toks = kiwi("TD-2024-0137 문서의 보정")
    assert "2024-0137" in toks and "2024" in toks and "0137" in toks
    assert "td" in toks  # SL lowercased
    assert "의" not in toks  # particles are not content
    # a user typing the last group finds the document
    assert set(kiwi("0137 문서")) & set(toks) >= {"0137", "문서"}


@pytest.mark.kiwi
def test_kiwi_batch_equals_one_by_one(kiwi: KiwiTokenizer):
    texts = ["감쇠 보정은 CT로 어떻게 하나", "", "v2.3.1 배포 공지", "걷는 사람이 덥다"]
    assert kiwi.tokenize_many(texts) == [kiwi(t) for t in texts]
    # irregular verb stems (VV-I / VA-I) are content too
    assert {"걷", "덥"} <= set(kiwi("걷는 사람이 덥다"))
