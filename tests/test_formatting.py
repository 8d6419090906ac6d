"""Testes de lncc_llm.formatting: inteiros com espaço fino nos milhares, no estilo do SI."""
import numpy as np
import pytest
import torch

from lncc_llm import fmt_int
from lncc_llm.formatting import THIN_SPACE

T = THIN_SPACE


def test_the_gpt2_parameter_count():
    assert fmt_int(124_439_808) == f"124{T}439{T}808"
    assert THIN_SPACE == "\u202f" and THIN_SPACE.isspace() and THIN_SPACE != " "


@pytest.mark.parametrize("value, text", [
    (0, "0"), (7, "7"), (999, "999"), (1000, f"1{T}000"), (1024, f"1{T}024"), (49_152, f"49{T}152"),
    (100_000, f"100{T}000"), (1_000_000, f"1{T}000{T}000"), (-1, "-1"), (-1234, f"-1{T}234"),
    (-100_000, f"-100{T}000"), (10**12, f"1{T}000{T}000{T}000{T}000"),
])
def test_groups_of_three_from_the_right(value, text):
    assert fmt_int(value) == text


def test_no_comma_or_dot_ever_appears():
    for n in (1234, 124_439_808, 2**40):
        assert "," not in fmt_int(n) and "." not in fmt_int(n)
        assert int(fmt_int(n).replace(T, "")) == n  # nada se perde


def test_numpy_and_torch_integers():
    assert fmt_int(np.int64(134_515_008)) == f"134{T}515{T}008"
    assert fmt_int(np.uint32(4096)) == f"4{T}096"
    assert fmt_int(torch.tensor(49_152)) == f"49{T}152"
    assert fmt_int(sum(p.numel() for p in torch.nn.Linear(576, 1536).parameters())) == f"886{T}272"


def test_a_custom_separator():
    assert fmt_int(1_115_394, sep=".") == "1.115.394"
    assert fmt_int(1_115_394, sep=" ") == "1 115 394"


@pytest.mark.parametrize("value", [12.0, 12.5, np.float32(3), torch.tensor(2.0), "1234", None,
                                   torch.tensor([1, 2])])
def test_refuses_what_is_not_an_integer_with_the_fix(value):
    with pytest.raises(TypeError, match="fmt_int formata inteiros"):
        fmt_int(value)


@pytest.mark.parametrize("flag", [True, np.bool_(True), torch.tensor(True)])
def test_refuses_booleans(flag):
    # bool é um int no Python (e o torch aceita um tensor bool como índice): True → "1" seria um
    # veredito impresso como número.
    with pytest.raises(TypeError, match="booleano"):
        fmt_int(flag)


def test_the_error_for_a_float_says_how_to_fix_it():
    with pytest.raises(TypeError, match=r"round\(x\)"):
        fmt_int(67_257_504.0)
