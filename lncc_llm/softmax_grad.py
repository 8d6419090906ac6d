"""O gradiente da entropia cruzada numa camada linear, escrito à mão: ∇W = (p − e_y) xᵀ.

É a conta de um passo de SFT no modelo de três classes do Capítulo 7 (seção 7.4.5), generalizada
para um lote: com a perda média do ``F.cross_entropy``, o gradiente é a média dos produtos externos.
"""
from __future__ import annotations

import torch

__all__ = ["linear_cross_entropy_grad"]


def linear_cross_entropy_grad(W: torch.Tensor, x: torch.Tensor, y) -> torch.Tensor:
    """O gradiente de ``F.cross_entropy(x @ W.T, y)`` em relação a ``W`` (d × k), sem autograd.

    ``x`` é um vetor (k,) com ``y`` um inteiro, ou um lote (n, k) com ``y`` de n classes; no lote, a
    perda é a média, e o gradiente também: (1/n) Σ (pᵢ − e_{yᵢ}) xᵢᵀ. Capítulo 7, seção 7.4.5.
    """
    if not torch.is_tensor(W) or W.ndim != 2:
        raise ValueError("`W` precisa ser uma matriz d × k (uma linha por classe), como o peso de "
                         "um nn.Linear.")
    x = torch.as_tensor(x, dtype=W.dtype)
    sozinho = x.ndim == 1
    X = x[None] if sozinho else x
    Y = torch.as_tensor([y] if sozinho else y).long().reshape(-1)
    if X.ndim != 2 or X.shape[1] != W.shape[1] or len(Y) != len(X):
        raise ValueError(f"Formatos incompatíveis: W é {tuple(W.shape)}, x é {tuple(x.shape)} e "
                         f"y tem {len(Y)} classe(s). Use x (k,) com um y inteiro, ou x (n, k) com "
                         f"y de n classes, e k = {W.shape[1]} (as colunas de W).")
    if (Y < 0).any() or (Y >= W.shape[0]).any():
        raise ValueError(f"As classes em y vão de 0 a {W.shape[0] - 1} (as linhas de W); veio "
                         f"{Y.tolist()}.")
    P = torch.softmax(X @ W.T, dim=-1)          # (n, d): uma distribuição por exemplo
    P[torch.arange(len(Y)), Y] -= 1             # p − e_y
    return P.T @ X / len(Y)                     # a média dos produtos externos (p − e_y) xᵀ
