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
