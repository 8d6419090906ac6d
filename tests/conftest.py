"""Fixtures compartilhadas: os modelos do curso são carregados uma vez por sessão de testes."""
import pytest

TEDDY = "A cute teddy bear is reading a book."
TEDDY_IDS = [101, 1037, 10140, 11389, 4562, 2003, 3752, 1037, 2338, 1012, 102]


@pytest.fixture(scope="session")
def encoder():
    from lncc_llm import load_encoder, set_offline

    set_offline(True)
    return load_encoder()


@pytest.fixture(scope="session")
def teddy_inputs(encoder):
    _, tokenizer = encoder
    return tokenizer(TEDDY, return_tensors="pt")


@pytest.fixture(scope="session")
def decoder():
    from lncc_llm import load_decoder, set_offline

    set_offline(True)
    return load_decoder()


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory):
    """Um Llama de chat minúsculo (d = 64, 2 camadas) com o tokenizador do SmolLM2: treinos em segundos."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from lncc_llm import silence_library_noise
    from lncc_llm.models import ensure_decoder_cache

    silence_library_noise()
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=49_152, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                      max_position_embeddings=256)
    path = tmp_path_factory.mktemp("tiny_chat_llama")
    LlamaForCausalLM(cfg).save_pretrained(path)
    AutoTokenizer.from_pretrained(ensure_decoder_cache()).save_pretrained(path)
    return path
