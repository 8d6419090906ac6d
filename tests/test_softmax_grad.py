"""Testes de lncc_llm.softmax_grad: ∇W da entropia cruzada contra o autograd."""
import pytest
import torch
import torch.nn.functional as F

from lncc_llm.softmax_grad import linear_cross_entropy_grad


def _autograd(W, x, y):
    W = W.clone().requires_grad_(True)
    X, Y = (x[None], torch.tensor([y])) if x.ndim == 1 else (x, torch.as_tensor(y))
    F.cross_entropy(X @ W.T, Y).backward()
    return W.grad


def test_exemplo_do_texto_base():
    W = torch.tensor([[0.10, 0.20], [0.00, -0.10], [-0.10, 0.10]], dtype=torch.float64)
    x = torch.tensor([1.0, 0.0], dtype=torch.float64)
    g = linear_cross_entropy_grad(W, x, 0)
    torch.testing.assert_close(g, _autograd(W, x, 0), rtol=0, atol=1e-12)
    assert torch.equal(g[:, 1], torch.zeros(3, dtype=torch.float64))      # x₂ = 0: a 2ª coluna é zero
    assert g[0, 0] < 0 < g[1, 0]                                          # a classe certa sobe no passo


@pytest.mark.parametrize("n", [1, 7])
def test_lote_igual_ao_autograd_e_media(n):
    g = torch.Generator().manual_seed(n)
    W = torch.randn(5, 4, generator=g, dtype=torch.float64)
    X = torch.randn(n, 4, generator=g, dtype=torch.float64)
    Y = torch.randint(0, 5, (n,), generator=g)
    obtido = linear_cross_entropy_grad(W, X, Y)
    torch.testing.assert_close(obtido, _autograd(W, X, Y), rtol=0, atol=1e-12)
    # a média, não a soma: n exemplos iguais dão o gradiente de um só
    repetido = linear_cross_entropy_grad(W, X[:1].repeat(3, 1), Y[:1].repeat(3))
    torch.testing.assert_close(repetido, linear_cross_entropy_grad(W, X[0], int(Y[0])), rtol=0, atol=1e-12)
    # cada linha de ∇W soma (p − e_y): as linhas, somadas, dão zero vezes x
    torch.testing.assert_close(obtido.sum(0), torch.zeros(4, dtype=torch.float64), rtol=0, atol=1e-12)


def test_erros_em_portugues():
    W = torch.zeros(3, 2)
    with pytest.raises(ValueError, match="Formatos incompatíveis"):
        linear_cross_entropy_grad(W, torch.zeros(3), 0)
    with pytest.raises(ValueError, match="classes em y vão de 0 a 2"):
        linear_cross_entropy_grad(W, torch.zeros(2), 3)
    with pytest.raises(ValueError, match="matriz d × k"):
        linear_cross_entropy_grad(torch.zeros(3), torch.zeros(2), 0)
