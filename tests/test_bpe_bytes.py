"""O BPE de bytes (``lncc_llm.bpe_bytes``): o encode e o decode contra o tiktoken com as mesmas junções,
o token especial, e as junções do GPT-2 recuperadas dos postos dão os ids do próprio GPT-2."""
from __future__ import annotations

import pytest
import regex
import tiktoken
from tiktoken_ext.openai_public import r50k_pat_str

from lncc_llm.bpe_bytes import (
    byte_bpe_decode,
    byte_bpe_encode,
    byte_bpe_vocab,
    merge_pair,
    recover_merges,
)
from lncc_llm.exercicios.cap02_nucleo_transformer import _treinar
from lncc_llm.tokenization import gpt2_tokenizer

TREINO = ("o rato roeu a roupa do rei de Roma; a rainha, com raiva, resolveu remendar. "
          "Ação, atenção, coração: ç e ã aparecem muito em português. 🙂🙂")
TEXTOS = ["O rato e a rainha 🙂", "código: x = 1_000\n\n  fim", "ção", "", "東京 e Roma"]


def test_merge_pair_troca_da_esquerda_para_a_direita_sem_sobrepor():
    assert merge_pair([1, 1, 1], (1, 1), 9) == [9, 1]
    assert merge_pair([1, 2, 1, 2], (1, 2), 7) == [7, 7]
    assert merge_pair([], (1, 2), 7) == []


@pytest.mark.parametrize("n", [0, 10, 80])
def test_encode_e_decode_iguais_ao_tiktoken_com_as_mesmas_juncoes(n):
    merges = _treinar(TREINO, n)
    vocab = byte_bpe_vocab(merges)
    ref = tiktoken.Encoding("t", pat_str=r50k_pat_str, mergeable_ranks={b: i for i, b in vocab.items()},
                            special_tokens={})
    for texto in TEXTOS:
        ids = byte_bpe_encode(texto, merges)
        assert ids == ref.encode_ordinary(texto)
        assert byte_bpe_decode(ids, merges) == texto


def test_o_token_especial_sai_inteiro_e_nenhuma_juncao_o_produz():
    merges = _treinar(TREINO + " <|endoftext|>" * 5, 60)
    special = {"<|endoftext|>": 256 + len(merges)}
    ids = byte_bpe_encode("fim<|endoftext|>início", merges, special)
    assert ids.count(special["<|endoftext|>"]) == 1
    assert byte_bpe_decode(ids, merges, special) == "fim<|endoftext|>início"
    assert special["<|endoftext|>"] not in byte_bpe_encode("fim <|endoftext", merges, special)


def test_decode_junta_os_bytes_antes_de_decodificar():
    assert byte_bpe_decode([195, 163, 111], {}) == "ão"


def test_erros_em_pt_br():
    with pytest.raises(TypeError, match="dict"):
        byte_bpe_encode("a", [(1, 2)])
    with pytest.raises(TypeError, match="str"):
        byte_bpe_encode(b"a", {})
    with pytest.raises(ValueError, match="fora do vocabulário"):
        byte_bpe_decode([999], {})


def test_juncoes_recuperadas_do_gpt2_dao_os_ids_do_gpt2():
    gpt2 = gpt2_tokenizer()
    ranks = gpt2._mergeable_ranks
    merges = recover_merges(ranks)
    assert len(merges) == 50_000
    textos = ["Hello world, this is GPT-2!", "A tokenização do português: ação 🙂",
              "def f(x):\n    return x ** 2\n", "  spaces   and\ttabs\n\n", "don't 1234567"]
    for texto in textos:
        ids = [ranks[bytes([i])] if i < 256 else i for i in byte_bpe_encode(texto, merges)]
        assert ids == gpt2.encode_ordinary(texto)
    assert regex.findall(r50k_pat_str, "Olá, mundo") == ["Olá", ",", " mundo"]
