"""A camada LoRA escrita à mão: y = W x + b + (α/r) B A x, com W congelada.

É o *forward* que o ``peft`` põe em cada linear adaptada (``peft.tuners.lora.Linear``, com dropout
0); ``tests/test_lora_layer.py`` o confere contra o ``peft``.
"""
from __future__ import annotations

import torch

__all__ = ["lora_forward"]


def lora_forward(x: torch.Tensor, weight: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                 alpha: float, r: int, bias: torch.Tensor | None = None) -> torch.Tensor:
    """A saída de uma linear com adaptador LoRA: ``x Wᵀ + b + (alpha / r) · x Aᵀ Bᵀ``.

    ``x`` tem a última dimensão ``k`` (qualquer número de dimensões antes); ``weight`` é ``d × k``
    (como o ``nn.Linear``), ``A`` é ``r × k`` e ``B`` é ``d × r``. Capítulo 7, segunda parte, seção
    7.10.
    """
    d, k = weight.shape
    if A.shape != (r, k) or B.shape != (d, r):
        raise ValueError(f"Formatos incompatíveis: com W {d} × {k} e posto r = {r}, A precisa ser "
                         f"{r} × {k} e B {d} × {r}; vieram A {tuple(A.shape)} e B {tuple(B.shape)} "
                         "(no peft, `lora_A['default'].weight` e `lora_B['default'].weight`).")
    if x.shape[-1] != k:
        raise ValueError(f"A última dimensão de x ({x.shape[-1]}) precisa ser a entrada da camada, "
                         f"k = {k}.")
    base = torch.nn.functional.linear(x, weight, bias)     # a base congelada
    return base + (alpha / r) * (x @ A.T) @ B.T             # o desvio de posto r, escalado por α/r
