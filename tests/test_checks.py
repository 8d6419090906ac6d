"""Testes de lncc_llm.checks: uma linha de veredito por conferência, e falhas que não passam."""
import math

import numpy as np
import pytest
import torch

from lncc_llm import check
from lncc_llm.checks import FAIL_MARK, PASS_MARK
from lncc_llm.formatting import THIN_SPACE as T


def verdict(capsys, *args, **kwargs):
    check(*args, **kwargs)
    out = capsys.readouterr().out
    assert out.endswith("\n") and out.count("\n") == 1, "uma linha só"
    return out.rstrip("\n")


def failure(*args, **kwargs):
    with pytest.raises(AssertionError) as err:
        check(*args, **kwargs)
    return str(err.value)


def test_close_values_print_one_line_with_the_largest_deviation(capsys):
    ref = torch.tensor([[0.5, 0.5], [1 / 3, 2 / 3]])
    line = verdict(capsys, "A à mão = softmax do torch", ref + 2e-7, ref)
    assert line == "✓ A à mão = softmax do torch (máx |Δ| 2e-07)"


def test_identical_floats_report_zero(capsys):
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    assert verdict(capsys, "igual", x, x.clone()) == "✓ igual (máx |Δ| 0)"


def test_a_deviation_above_the_tolerance_fails_with_the_same_kind_of_line(capsys):
    message = failure("Z à mão = Z do modelo", [1.0, 2.0], [1.0, 2.03])
    assert message == "✗ Z à mão = Z do modelo (máx |Δ| 3.0e-02 > atol 1e-05)"
    assert capsys.readouterr().out == "", "uma conferência que falha não imprime ✓"


def test_tolerance_is_absolute_plus_relative_like_allclose(capsys):
    big = torch.tensor([1000.0, -2000.0])
    near = big + torch.tensor([0.5, -0.5])
    assert failure("logits", near, big) == f"{FAIL_MARK} logits (máx |Δ| 5.0e-01 > atol 1e-05)"
    verdict(capsys, "logits", near, big, rtol=1e-3)
    assert torch.allclose(near, big, rtol=1e-3, atol=1e-5)  # a mesma regra do torch
    assert not torch.allclose(near, big, rtol=1e-4, atol=1e-5)
    assert failure("logits", near, big, rtol=1e-4) == "✗ logits (máx |Δ| 5.0e-01 > atol 1e-05 + rtol 0.0001·|ref|)"


def test_the_tolerance_boundary_is_inclusive(capsys):
    verdict(capsys, "na fronteira", [0.0], [0.25], atol=0.25)  # |Δ| = atol, em binário exato
    failure("além da fronteira", [0.0], [0.25], atol=0.125)


def test_shapes_must_match_no_broadcasting():
    # Um escalar "confere" com qualquer vetor em allclose, por broadcasting; aqui não.
    assert torch.allclose(torch.tensor(1.0), torch.ones(3))
    assert failure("vetor", torch.ones(3), torch.tensor(1.0)) == "✗ vetor (formas diferentes: (3,) e ())"
    assert "formas diferentes: (2, 3) e (3, 2)" in failure("transposta", np.zeros((2, 3)), np.zeros((3, 2)))


def test_nan_never_passes_and_matching_infinities_do(capsys):
    assert failure("nan", [float("nan")], [float("nan")]) == "✗ nan (NaN nos valores)"
    assert failure("nan de um lado", [1.0, math.nan], [1.0, 2.0]).endswith("(NaN nos valores)")
    mask = torch.tensor([0.0, -math.inf])
    assert verdict(capsys, "máscara aditiva", mask, mask.clone()) == "✓ máscara aditiva (máx |Δ| 0)"
    assert failure("sinal do infinito", [math.inf], [-math.inf]) == "✗ sinal do infinito (máx |Δ| inf > atol 1e-05)"
    assert "máx |Δ| inf" in failure("infinito contra finito", [math.inf], [1e30])
    failure("finito contra infinito, com rtol", [1.0], [math.inf], rtol=0.5)  # como torch.allclose
    assert not torch.allclose(torch.tensor([1.0]), torch.tensor([math.inf]), rtol=0.5)
    verdict(capsys, "mesmo infinito, com rtol", [math.inf, 1.0], [math.inf, 1.0], rtol=0.5)


def test_integers_and_token_ids_are_compared_exactly(capsys):
    ids = [101, 1037, 10140, 11389, 4562, 2003, 3752, 1037, 2338, 1012, 102]
    assert verdict(capsys, "ids do texto-base", torch.tensor(ids), ids) == "✓ ids do texto-base (idênticos)"
    wrong = ids.copy()
    wrong[4] = 4563
    assert failure("ids", wrong, ids) == f"✗ ids (diferem em 1 de 11 valores; na posição (4,): 4{T}563 ≠ 4{T}562)"
    # Inteiros não têm tolerância: 1 de diferença falha mesmo com atol grande.
    assert failure("contagem", 124_439_808, 124_439_809, atol=10) == f"✗ contagem (124{T}439{T}808 ≠ 124{T}439{T}809)"
    assert verdict(capsys, "contagem", np.int64(124_439_808), 124_439_808) == "✓ contagem (idênticos)"
    assert failure("verdade", True, False) == "✗ verdade (True ≠ False)"
    failure("matriz", np.eye(2, dtype=int), np.zeros((2, 2), dtype=int))


def test_floats_against_integers_use_the_tolerance(capsys):
    assert verdict(capsys, "soma das linhas = 1", torch.tensor([1.0, 1.0 + 1e-7]), [1, 1]).endswith(
        "(máx |Δ| 1e-07)")


def test_low_precision_tensors_which_numpy_cannot_hold(capsys):
    # O NumPy não tem bf16: sem a conversão, o tensor nem chegaria à comparação.
    x = torch.tensor([0.1, 0.2, 0.3], dtype=torch.bfloat16)
    verdict(capsys, "bf16", x, x.float(), atol=0)
    failure("bf16 contra o fp32 original", x, torch.tensor([0.1, 0.2, 0.3]), atol=1e-6)


def test_texts_are_compared_exactly(capsys):
    assert verdict(capsys, "resposta", " 125", " 125") == "✓ resposta (idênticos)"
    assert failure("resposta", " 125", " 85") == "✗ resposta (' 125' ≠ ' 85')"
    assert verdict(capsys, "tokens", ["▁a", "▁b"], ["▁a", "▁b"]) == "✓ tokens (idênticos)"
    failure("tokens", ["▁a", "▁b"], ["▁a", "▁c"])
    assert verdict(capsys, "config", {"r": 8, "alvos": ["q", "v"]}, {"r": 8, "alvos": ["q", "v"]}).endswith(
        "(idênticos)")
    failure("config", {"r": 8}, {"r": 16})
    assert failure("número contra texto", [1, 2], ["1", "2"]) == "✗ número contra texto (tipos diferentes: textos e números)"
    failure("lista mista", ["a", 1], ["a", "1"])  # o NumPy viraria as duas listas em textos iguais
    long_text = "x" * 200
    assert len(failure("longo", long_text, long_text + "y")) < 200, "o motivo mostra os valores cortados"


def test_a_boolean_claim_prints_the_claim(capsys):
    assert verdict(capsys, "cache mais rápido", True) == f"{PASS_MARK} cache mais rápido"
    assert verdict(capsys, "linhas somam 1", np.allclose([1.0], [1.0])) == "✓ linhas somam 1"
    assert verdict(capsys, "tensor", torch.tensor(True)) == "✓ tensor"
    assert failure("matriz simétrica", False) == "✗ matriz simétrica"
    assert failure("tensor falso", torch.tensor([False])) == "✗ tensor falso"


@pytest.mark.parametrize("not_a_boolean", [1, 0.0, "sim", [True, True], torch.tensor([True, False]),
                                           torch.tensor(1.0), None])
def test_a_claim_without_reference_refuses_what_is_not_a_boolean(not_a_boolean):
    # Um tensor com vários elementos, ou o número 1, não é um veredito: é um valor sem referência.
    with pytest.raises(TypeError, match="espera um booleano"):
        check("algo", not_a_boolean)


def test_none_can_be_a_reference(capsys):
    assert verdict(capsys, "sem valor", None, None) == "✓ sem valor (idênticos)"
    failure("valor contra None", 1.0, None)


def test_bad_inputs_get_a_pt_br_error():
    with pytest.raises(TypeError, match="descrição em texto"):
        check("", True)
    with pytest.raises(TypeError, match="descrição em texto"):
        check(torch.ones(2), torch.ones(2))
    for bad in (-1, math.nan, math.inf, "1e-5"):
        with pytest.raises(ValueError, match="finito e não negativo"):
            check("tol", [1.0], [1.0], atol=bad)
    with pytest.raises(TypeError, match="geradores"):
        check("gerador", (x for x in [1.0]), [1.0])


def test_booleans_never_agree_with_numbers():
    # True == 1 no Python, e o NumPy promoveria [True] a [1.0]: aqui são tipos diferentes.
    assert failure("verdade", True, 1) == "✗ verdade (tipos diferentes: booleanos e números)"
    failure("máscara", [True, False], [1, 0])
    failure("máscara", torch.tensor([True]), [1.0])


def test_empty_values_of_the_same_shape_agree_and_say_so(capsys):
    assert verdict(capsys, "nenhuma duplicata", [], []) == "✓ nenhuma duplicata (os dois vazios)"
    assert verdict(capsys, "vazio", torch.empty(0, 3), np.empty((0, 3))) == "✓ vazio (os dois vazios)"
    assert failure("vazio contra algo", [], [1.0]) == "✗ vazio contra algo (formas diferentes: (0,) e (1,))"


def test_the_failure_line_never_looks_like_a_pass():
    # Com um algarismo só, 1.04e-5 > 1e-5 sairia "1e-05 > atol 1e-05".
    assert failure("x", [0.0], [1.04e-5]) == "✗ x (máx |Δ| 1.0e-05 > atol 1e-05)"


def test_tuples_lists_and_dicts_are_checked_part_by_part(capsys):
    gen = torch.Generator().manual_seed(0)
    out, weights = torch.randn(2, 3, generator=gen), torch.softmax(torch.randn(2, 2, generator=gen), -1)
    # O que multi_head_attention devolve: uma tupla de dois tensores de formas diferentes.
    line = verdict(capsys, "saída e pesos", (out + 1e-7, weights), (out, weights.clone()))
    assert line == "✓ saída e pesos (máx |Δ| 1e-07)"
    assert failure("saída e pesos", (out, weights + 0.1), (out, weights)) == (
        "✗ saída e pesos ([1]: máx |Δ| 1.0e-01 > atol 1e-05)")
    assert failure("partes", (out,), (out, weights)) == "✗ partes (comprimentos diferentes: 1 e 2)"
    # Listas de tensores com gradiente, em bf16, contra um tensor empilhado.
    layers = [torch.ones(2, requires_grad=True), torch.zeros(2, dtype=torch.bfloat16)]
    assert verdict(capsys, "camadas", layers, torch.tensor([[1.0, 1.0], [0.0, 0.0]])).endswith("(máx |Δ| 0)")
    nested = [[torch.ones(2)], [torch.zeros(3)]]  # irregular: parte a parte
    assert verdict(capsys, "aninhado", nested, [[np.ones(2)], [np.zeros(3)]]).endswith("(máx |Δ| 0)")
    assert "[1][0]: formas diferentes" in failure("aninhado", nested, [[np.ones(2)], [np.zeros(4)]])
    stats = {"perda": torch.tensor(0.6931), "passos": 8}
    assert verdict(capsys, "registro", stats, {"perda": math.log(2), "passos": 8}, atol=1e-4).endswith(
        "(máx |Δ| 5e-05)")
    assert failure("registro", stats, {"perda": math.log(2), "passos": 9}, atol=1e-4) == (
        "✗ registro (['passos']: 8 ≠ 9)")
    assert "chaves diferentes" in failure("registro", stats, {"perda": 0.69})
    assert "tipos diferentes: dict e list" in failure("registro", stats, [0.69, 8])


def test_complex_numbers_use_the_tolerance(capsys):
    z = torch.polar(torch.ones(3), torch.tensor([0.0, 1.0, 2.0]))
    ref = np.exp(1j * np.array([0.0, 1.0, 2.0]))
    assert verdict(capsys, "rotação", z, ref).startswith("✓ rotação (máx |Δ|")
    failure("rotação conjugada", z.conj(), ref)


def test_what_it_cannot_compare_gets_a_pt_br_error():
    with pytest.raises(TypeError, match="não sabe comparar"):
        check("objeto", [torch.ones(2)], 3.0)


def test_returns_nothing_so_a_cell_prints_only_the_verdict(capsys):
    assert check("nada a mais", True) is None
    assert check("nada a mais", [1.0], [1.0]) is None
