"""BPE à mão (lncc_llm.bpe) contra o BpeTrainer da biblioteca tokenizers."""
import random

import pytest

from lncc_llm import bpe


def test_known_merges_on_the_classic_corpus():
    # Sem marca de fim de palavra: "es" e "st" empatam com 9 (newest 6 + widest 3); vence "es",
    # porque "e" vem antes de "s" no alfabeto. Depois "es"+"t" (9). Aí "we" de newest sumiu (o "e"
    # foi para "es") e sobra 2, de lower; "lo" e "ow" empatam com 7 (low 5 + lower 2): vence "lo".
    table = bpe.learn_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 3)
    assert table.merges == [("e", "s"), ("es", "t"), ("l", "o")]
    assert table.counts == [9, 9, 7]
    assert table.ties == [2, 1, 2]
    assert table.segments["newest"] == ["n", "e", "w", "est"]


def test_ties_follow_the_symbol_order_of_the_library():
    # Dois pares com a mesma contagem: a regra decide, e a biblioteca usa a mesma.
    corpus = {"cd": 1, "ab": 1}
    assert bpe.learn_bpe(corpus, 1).merges == [("a", "b")]
    assert bpe.library_bpe_merges(corpus, 1) == [("a", "b")]


@pytest.mark.parametrize("seed", range(40))
def test_hand_bpe_learns_the_same_merges_as_bpetrainer(seed):
    rng = random.Random(seed)
    letters = "aeiouçãér" if seed % 3 == 0 else "abcde"
    words = {"".join(rng.choice(letters) for _ in range(rng.randint(1, 8))) for _ in range(rng.randint(2, 25))}
    corpus = {w: rng.randint(1, 9) for w in sorted(words)}
    n = rng.randint(1, 20)
    table = bpe.learn_bpe(corpus, n)
    assert table.merges == bpe.library_bpe_merges(corpus, n)


def test_course_corpus_learns_suffixes_and_matches_the_library():
    corpus = bpe.bpe_corpus()
    table = bpe.learn_bpe(corpus, 12)
    assert table.merges == bpe.library_bpe_merges(corpus, 12)
    assert ("am", "ente") in table.merges and ("a", "ção") in table.merges
    assert bpe.segment("calmamente", table.merges) == ["c", "a", "l", "m", "amente"]
    assert all(bpe.segment(w, table.merges) == segs for w, segs in table.segments.items())
    assert all("".join(segs) == w for w, segs in table.segments.items())


def test_segment_merges_left_to_right_without_overlap():
    assert bpe.segment("aaaaa", [("a", "a")]) == ["aa", "aa", "a"]
    assert bpe.segment("abc", []) == ["a", "b", "c"]
    assert bpe.segment("abc", [("b", "c"), ("a", "b")]) == ["a", "bc"]   # a ordem da tabela importa


def test_stops_when_no_pair_is_left():
    table = bpe.learn_bpe({"ab": 2, "c": 5}, 10)
    assert table.merges == [("a", "b")]


def test_tokens_per_word_counts_words_by_spaces():
    assert bpe.tokens_per_word(lambda s: list(s.replace(" ", "")), "ab cde") == 2.5
    with pytest.raises(ValueError, match="vazio"):
        bpe.tokens_per_word(len, "   ")
    with pytest.raises(TypeError, match="função"):
        bpe.tokens_per_word("não é função", "a b")


@pytest.mark.parametrize("bad, message", [
    ({}, "vazio"),
    ({"a b": 1}, "sem espaços"),
    ({"": 1}, "sem espaços"),
    ({"ab": 0}, "inteiros positivos"),
    ({"ab": 1.5}, "inteiros positivos"),
])
def test_bad_corpora_get_clear_errors(bad, message):
    with pytest.raises(ValueError, match=message):
        bpe.learn_bpe(bad, 2)


def test_text_instead_of_counts_and_bad_n_merges():
    with pytest.raises(TypeError, match="Counter"):
        bpe.learn_bpe("um texto qualquer", 2)
    with pytest.raises(ValueError, match="n_merges"):
        bpe.learn_bpe({"ab": 1}, 0)
    with pytest.raises(ValueError, match="sem espaços"):
        bpe.segment("duas palavras", [])


def test_segment_accepts_the_table_and_names_merges_otherwise():
    table = bpe.learn_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 3)
    assert bpe.segment("lowest", table) == bpe.segment("lowest", table.merges) == ["lo", "w", "est"]
    with pytest.raises(TypeError, match="merges"):
        bpe.segment("lowest", 3)
    with pytest.raises(TypeError, match="merges"):
        bpe.segment("lowest", ["es", "t"])          # textos soltos, não pares


def test_course_data():
    pairs = bpe.parallel_texts()
    assert len(pairs) >= 3 and all(p["pt"].split() and p["en"].split() for p in pairs)
    assert {"Petrópolis", "tokenização"} <= set(bpe.sample_words())
