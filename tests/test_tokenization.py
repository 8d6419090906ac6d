"""Testes de lncc_llm.tokenization: o BPE do GPT-2 offline, idêntico ao r50k_base."""
import importlib.util
import sys

import pytest

from lncc_llm import tokenization
from lncc_llm.tokenization import (
    ENDOFTEXT,
    ENDOFTEXT_ID,
    R50K_PATTERN,
    R50K_SHA256,
    TokenizerNotAvailableError,
    file_sha256,
    gpt2_bpe_path,
    gpt2_tokenizer,
)


def test_every_effort_moves_you():
    tok = gpt2_tokenizer()
    assert tok.encode("Every effort moves you") == [6109, 3626, 6100, 345]
    assert tok.encode("Every day holds a") == [6109, 1110, 6622, 257]
    assert tok.encode("Hello, I am") == [15496, 11, 314, 716]


def test_decode_round_trip():
    tok = gpt2_tokenizer()
    text = "Atenção: o modelo   lê 123 tokens!\n\tNovo parágrafo — com acentos e emoji 🙂."
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert all(0 <= i < 50257 for i in ids)


def test_endoftext_is_50256_and_vocab_is_50257():
    tok = gpt2_tokenizer()
    assert tok.n_vocab == 50257 and tok.eot_token == ENDOFTEXT_ID == 50256
    assert tok.encode(ENDOFTEXT, allowed_special={ENDOFTEXT}) == [50256]
    with pytest.raises(ValueError):  # o tiktoken recusa o especial se não for permitido
        tok.encode(ENDOFTEXT)


def test_pattern_is_tiktokens_own_r50k_pattern():
    from tiktoken_ext.openai_public import r50k_pat_str

    assert R50K_PATTERN == r50k_pat_str


def test_file_is_the_published_r50k_base_and_whisper_is_not_imported():
    path = gpt2_bpe_path()
    assert path.name == "gpt2.tiktoken" and path.parent.name == "assets"
    assert file_sha256(path) == R50K_SHA256
    gpt2_tokenizer()
    assert "whisper" not in sys.modules


def test_missing_whisper_says_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "whisper" else real(name, *a))
    tokenization.gpt2_tokenizer.cache_clear()
    try:
        with pytest.raises(TokenizerNotAvailableError, match=r"pip install --no-deps openai-whisper==20250625") as info:
            gpt2_tokenizer()
        assert "não está instalado" in str(info.value)
    finally:
        tokenization.gpt2_tokenizer.cache_clear()
