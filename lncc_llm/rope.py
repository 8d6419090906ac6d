"""*Rotary Position Embeddings* (RoPE) escritas do zero, nos dois arranjos usados na prática.

* **intercalado** (``"interleaved"``): gira os pares de coordenadas vizinhas
  ``(x0, x1), (x2, x3), …``, como no texto do curso e no artigo do RoFormer;
* **metades** (``"rotate_half"``): gira os pares ``(x_j, x_{j + d/2})``, como no
  código do Llama no ``transformers`` (e, portanto, no SmolLM2 do curso).

Os dois arranjos aplicam a mesma rotação; só a ordem das coordenadas muda
(ver :func:`interleaved_to_half_permutation`). As posições podem ser quaisquer
números, o que permite testar a invariância a deslocamentos.
"""
from __future__ import annotations

import math

import torch

LAYOUTS = ("interleaved", "rotate_half")


def _check_dim(dim: int) -> None:
    if dim < 2 or dim % 2:
        raise ValueError("RoPE gira pares de coordenadas: a dimensão deve ser par e ≥ 2; "
                         f"recebi {dim}.")


def _check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"Arranjo desconhecido: {layout!r}. "
                         "Use 'interleaved' (texto) ou 'rotate_half' (Llama).")


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


def rotation_matrix(theta) -> torch.Tensor:
    """A rotação 2-D ``R(θ) = [[cos θ, −sin θ], [sin θ, cos θ]]`` (``float64``).

    Ver Capítulo 3, seção 3.4.3.
    """
    t = torch.as_tensor(theta, dtype=torch.float64)
    c, s = torch.cos(t), torch.sin(t)
    return torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)


def rope_frequencies(
    dim: int,
    base: float = 10000.0,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """As ``dim/2`` frequências ``ω_j = base^(−2j/dim)``, da mais rápida (``ω_0 = 1``) à mais lenta.

    Ver Capítulo 3, seção 3.4.4.
    """
    _check_dim(dim)
    if base <= 0:
        raise ValueError(f"A base da RoPE deve ser positiva; recebi {base}.")
    exponents = torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim
    return (1.0 / (float(base) ** exponents)).to(dtype)


def rope_angles(positions, dim: int, base: float = 10000.0,
                dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Os ângulos ``θ_j(p) = p · ω_j``: forma ``(*positions.shape, dim/2)``.

    Ver Capítulo 3, seção 3.4.4.
    """
    positions = torch.as_tensor(positions)
    inv_freq = rope_frequencies(dim, base, dtype=dtype, device=positions.device)
    return positions.to(dtype).unsqueeze(-1) * inv_freq


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """Troca as metades do vetor com sinal: ``[x_a, x_b] ↦ [−x_b, x_a]`` (o "girar 90°" do Llama).

    Ver Capítulo 3, seção 3.5.4.
    """
    _check_dim(x.shape[-1])
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def rope_cos_sin(
    positions,
    dim: int,
    base: float = 10000.0,
    layout: str = "rotate_half",
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Tabelas ``cos`` e ``sin`` de forma ``(*positions.shape, dim)``, repetidas no arranjo pedido.

    No arranjo ``"rotate_half"`` cada ângulo aparece nas duas metades (como o
    ``rotary_emb`` do ``transformers`` devolve); no ``"interleaved"``, duas vezes
    seguidas.
    Ver Capítulo 3, seção 3.5.4.
    """
    _check_layout(layout)
    angles = rope_angles(positions, dim, base, dtype=dtype)
    if layout == "rotate_half":
        angles = torch.cat((angles, angles), dim=-1)
    else:
        angles = angles.repeat_interleave(2, dim=-1)
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, positions, base: float = 10000.0,
               layout: str = "interleaved") -> torch.Tensor:
    """Gira cada vetor de ``x`` (forma ``(..., n, d)``) pelo ângulo da sua posição.

    ``positions`` tem forma ``(n,)`` ou qualquer forma que se expanda até
    ``x.shape[:-1]``; os valores podem ser quaisquer números (inteiros ou não).
    ``layout`` escolhe quais coordenadas formam cada par: ``"interleaved"``
    (vizinhas, como no texto) ou ``"rotate_half"`` (metades, como no Llama).
    Ver Capítulo 3, seção 3.4.5.
    """
    _check_layout(layout)
    dim = x.shape[-1]
    _check_dim(dim)
    work = _compute_dtype(x.dtype)
    positions = torch.as_tensor(positions, device=x.device)
    angles = rope_angles(positions, dim, base, dtype=work)
    try:
        torch.broadcast_shapes(tuple(angles.shape[:-1]), tuple(x.shape[:-1]))
    except RuntimeError:
        raise ValueError(
            f"As posições têm forma {tuple(positions.shape)}, incompatível com x de forma "
            f"{tuple(x.shape)}: use uma posição por linha, forma (n,)."
        ) from None
    cos, sin = angles.cos(), angles.sin()
    xw = x.to(work)
    if layout == "interleaved":
        even, odd = xw[..., 0::2], xw[..., 1::2]
        # cada par (par, ímpar) gira pelo seu ângulo: a matriz R(θ) aplicada coordenada a coordenada
        turned_even = cos * even - sin * odd
        turned_odd = sin * even + cos * odd
        out = torch.stack((turned_even, turned_odd), dim=-1).flatten(-2)  # volta a intercalar
    else:
        cos2, sin2 = torch.cat((cos, cos), -1), torch.cat((sin, sin), -1)
        out = xw * cos2 + rotate_half(xw) * sin2
    return out.to(x.dtype)


def interleaved_to_half_permutation(dim: int) -> torch.Tensor:
    """Índices que reordenam um vetor do arranjo intercalado para o de metades:
    ``[0, 2, 4, …, 1, 3, 5, …]``.

    Com ``perm`` assim, ``apply_rope(x[..., perm], p, layout="rotate_half")`` é
    igual a ``apply_rope(x, p, layout="interleaved")[..., perm]``.
    Ver Capítulo 3, seção 3.5.4.
    """
    _check_dim(dim)
    return torch.cat((torch.arange(0, dim, 2), torch.arange(1, dim, 2)))


def attention_logits(q: torch.Tensor, k: torch.Tensor, scale: float | None = None) -> torch.Tensor:
    """Os logits da atenção antes do softmax, ``Q Kᵀ / √d_k`` (ou ``Q Kᵀ · scale``).

    Ver Capítulo 3, seção 3.5.
    """
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"Q e K precisam da mesma dimensão d_k: Q tem {q.shape[-1]}, "
                         f"K tem {k.shape[-1]}.")
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    return (q @ k.transpose(-2, -1)) * factor
