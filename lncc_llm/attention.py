"""Atenção escrita do zero: produto escalar escalonado, máscaras e divisão em cabeças.

Serve para conferir as contas feitas à mão no Capítulo 2 e para recalcular a
atenção de um modelo real a partir dos seus próprios pesos.
"""
from __future__ import annotations

import math
from typing import Callable

import torch


def _check_mask(mask: torch.Tensor, scores_shape: torch.Size) -> torch.Tensor:
    """Confere que a máscara pode ser expandida até a forma dos escores e a devolve booleana."""
    if not isinstance(mask, torch.Tensor):
        mask = torch.as_tensor(mask)
    try:
        torch.broadcast_shapes(tuple(mask.shape), tuple(scores_shape))
    except RuntimeError:
        raise ValueError(
            f"A máscara tem forma {tuple(mask.shape)}, incompatível com os escores de forma "
            f"{tuple(scores_shape)} (..., n_query, n_key). Use uma máscara (n_query, n_key), "
            "ou a de padding (batch, n_key) convertida por padding_mask()."
        ) from None
    if torch.broadcast_shapes(tuple(mask.shape), tuple(scores_shape)) != tuple(scores_shape):
        raise ValueError(
            f"A máscara de forma {tuple(mask.shape)} aumentaria os escores de forma "
            f"{tuple(scores_shape)}."
        )
    if mask.dtype != torch.bool:
        if mask.is_floating_point() and not torch.all((mask == 0) | (mask == 1)):
            raise ValueError(
                "A máscara deve ser booleana ou de 0/1 (1 = pode olhar). Para uma máscara aditiva "
                "(0 / -inf), some-a aos escores antes do softmax."
            )
        mask = mask != 0
    return mask


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Calcula ``softmax(Q Kᵀ / √d_k + m) V`` e devolve ``(saída, pesos)``.

    ``q`` tem forma ``(..., n_q, d_k)``, ``k`` ``(..., n_k, d_k)`` e ``v``
    ``(..., n_k, d_v)``. ``mask`` (booleana ou 0/1, 1 = pode olhar) é expandida até
    ``(..., n_q, n_k)``; posições proibidas recebem −∞ antes do softmax. ``scale``
    substitui ``1/√d_k`` quando dado. Uma linha sem nenhuma posição permitida
    recebe pesos zero.
    Ver Capítulo 2, seções 2.6 e 2.8.
    """
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"Q e K precisam da mesma dimensão d_k: Q tem {q.shape[-1]}, K tem {k.shape[-1]}."
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"K e V precisam do mesmo número de posições: K tem {k.shape[-2]}, V tem {v.shape[-2]}."
        )
    d_k = q.shape[-1]
    factor = 1.0 / math.sqrt(d_k) if scale is None else float(scale)
    scores = (q @ k.transpose(-2, -1)) * factor
    if mask is not None:
        allowed = _check_mask(
            mask.to(scores.device) if isinstance(mask, torch.Tensor) else mask, scores.shape
        )
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)  # linha toda mascarada: nenhum peso
    return weights @ v, weights


def padding_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Converte a ``attention_mask`` do tokenizador ``(batch, n)`` em máscara booleana
    ``(batch, 1, 1, n)``.

    O formato se expande sobre cabeças e queries: cada query pode olhar só para as
    chaves reais (1), nunca para ``[PAD]`` (0).
    Ver Capítulo 2, seção 2.2.
    """
    if attention_mask.dim() != 2:
        raise ValueError(
            f"A attention_mask deve ter forma (batch, n); recebi {tuple(attention_mask.shape)}."
        )
    return (attention_mask != 0)[:, None, None, :]


def additive_mask(attention_mask: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A máscara na forma do texto: 0 onde ``attention_mask`` é 1 e −∞ onde é 0, pronta para somar
    aos escores.

    Ver Capítulo 2, seção 2.2.
    """
    zeros = torch.zeros(attention_mask.shape, dtype=dtype, device=attention_mask.device)
    return zeros.masked_fill(attention_mask == 0, float("-inf"))


def causal_mask(n: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Máscara causal ``(n, n)`` booleana: ``True`` onde a posição i pode olhar para j (j ≤ i).

    Ver Capítulo 2, seção 2.6, e Capítulo 4, seção 4.2.
    """
    if n < 1:
        raise ValueError(f"O comprimento da sequência deve ser ≥ 1; recebi {n}.")
    return torch.tril(torch.ones(n, n, dtype=torch.bool, device=device))


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Reparte ``(batch, n, d)`` em ``(batch, cabeças, n, d/cabeças)``.

    Ver Capítulo 2, seção 2.7.
    """
    if x.dim() != 3:
        raise ValueError(f"Esperava um tensor (batch, n, d); recebi forma {tuple(x.shape)}.")
    batch, n, d = x.shape
    if n_heads < 1 or d % n_heads:
        raise ValueError(f"d = {d} não se divide em {n_heads} cabeças iguais.")
    return x.view(batch, n, n_heads, d // n_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Concatena as cabeças: ``(batch, cabeças, n, d_h)`` volta a ``(batch, n, cabeças·d_h)``.

    Ver Capítulo 2, seção 2.7.
    """
    if x.dim() != 4:
        raise ValueError("Esperava um tensor (batch, cabeças, n, d_h); "
                         f"recebi forma {tuple(x.shape)}.")
    batch, heads, n, d_h = x.shape
    return x.transpose(1, 2).reshape(batch, n, heads * d_h)


def multi_head_attention(
    x: torch.Tensor,
    project_q: Callable[[torch.Tensor], torch.Tensor],
    project_k: Callable[[torch.Tensor], torch.Tensor],
    project_v: Callable[[torch.Tensor], torch.Tensor],
    n_heads: int,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Auto-atenção multi-cabeça: projeta Q, K, V, divide em cabeças, aplica a atenção e concatena.

    As projeções são funções (por exemplo, as ``nn.Linear`` ``query``/``key``/``value``
    de uma camada do BERT). Devolve ``(concatenação (batch, n, d), pesos (batch, cabeças, n, n))``,
    ainda sem a projeção de saída W_O.
    Ver Capítulo 2, seção 2.7.
    """
    q = split_heads(project_q(x), n_heads)
    k = split_heads(project_k(x), n_heads)
    v = split_heads(project_v(x), n_heads)
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    return merge_heads(out), weights
