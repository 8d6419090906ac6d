"""As peças do bloco do decodificador do curso (Llama/SmolLM2) que não estão no Transformer de 2017.

* ``rms_norm``: a RMSNorm (sem subtrair a média, sem viés), como a ``LlamaRMSNorm``;
* ``swiglu``: a FFN com porta, ``down(silu(x·W_gate) ⊙ (x·W_up))``, três matrizes;
* ``repeat_kv``: a atenção com consultas agrupadas (GQA), cada cabeça de chave/valor servindo a
  várias cabeças de consulta;
* ``kv_cache_bytes``: quanto o *KV cache* ocupa, com GQA e sem ela.

Vetores em linha (``x W``): um ``nn.Linear`` com peso ``W`` de forma (saída, entrada) calcula
``x @ W.T``.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """RMSNorm: ``x / √(média(x²) + eps) · weight``, na última dimensão.

    Ao contrário da LayerNorm, não subtrai a média nem soma viés: só divide pela raiz da média dos
    quadrados e aplica um ganho por coordenada. A conta vai em float32 e volta ao tipo de ``x``,
    como na ``LlamaRMSNorm`` do ``transformers``.
    Ver Capítulo 3, seção 3.9.1.
    """
    if not isinstance(weight, torch.Tensor) or weight.dim() != 1:
        shape = tuple(weight.shape) if isinstance(weight, torch.Tensor) else type(weight).__name__
        raise ValueError("O ganho da RMSNorm é um vetor de d coordenadas (forma (d,)); recebi "
                         f"{shape}. Use o peso da própria norma, por exemplo "
                         "layer.input_layernorm.weight.")
    if weight.shape[-1] != x.shape[-1]:
        raise ValueError(f"O ganho tem {weight.shape[-1]} coordenadas e x tem {x.shape[-1]}: use o "
                         "peso da própria norma (por exemplo, layer.input_layernorm.weight).")
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def swiglu(x: torch.Tensor, gate_weight: torch.Tensor, up_weight: torch.Tensor,
           down_weight: torch.Tensor) -> torch.Tensor:
    """A FFN SwiGLU do Llama: ``(silu(x W_gateᵀ) ⊙ x W_upᵀ) W_downᵀ``.

    Três matrizes no lugar das duas da FFN de 2017: ``up`` leva a ``d_ff`` dimensões, ``gate``
    decide, coordenada a coordenada, quanto de cada uma passa (pela SiLU), e ``down`` volta a ``d``.
    Os pesos têm a forma dos ``nn.Linear`` (saída, entrada).
    Ver Capítulo 3, seção 3.9.2.
    """
    d = x.shape[-1]
    if gate_weight.shape != up_weight.shape or gate_weight.shape[1] != d \
            or down_weight.shape != (d, gate_weight.shape[0]):
        raise ValueError("Formas incompatíveis: gate e up devem ser (d_ff, d) e down (d, d_ff), "
                         f"com d = {d}; recebi {tuple(gate_weight.shape)}, "
                         f"{tuple(up_weight.shape)} e {tuple(down_weight.shape)}.")
    return (F.silu(x @ gate_weight.T) * (x @ up_weight.T)) @ down_weight.T


def repeat_kv(kv: torch.Tensor, n_rep: int) -> torch.Tensor:
    """Repete cada cabeça de chave/valor ``n_rep`` vezes: (B, H_kv, T, d) → (B, H_kv·n_rep, T, d).

    Na GQA, as cabeças de consulta ``h·n_rep`` a ``h·n_rep + n_rep − 1`` usam a cabeça de chave e
    valor ``h``. No SmolLM2, 9 de consulta e 3 de chave/valor: ``n_rep = 3``.
    Ver Capítulo 3, seção 3.9.3.
    """
    if kv.dim() != 4 or not isinstance(n_rep, int) or n_rep < 1:
        raise ValueError("repeat_kv espera um tensor (lote, cabeças, posições, d_cabeça) e n_rep "
                         f"inteiro ≥ 1; recebi forma {tuple(kv.shape)} e n_rep={n_rep!r}.")
    return kv.repeat_interleave(n_rep, dim=1)


def kv_cache_bytes(n_layers: int, n_kv_heads: int, head_dim: int, seq_len: int,
                   bytes_per_value: int = 2, batch: int = 1) -> int:
    """Bytes do *KV cache*: 2 (K e V) × camadas × cabeças de chave/valor × d_cabeça × posições ×
    bytes por número × lote.

    Com GQA, só as cabeças de chave/valor entram na conta: no SmolLM2 (3 em vez de 9), o cache é
    um terço do de uma atenção multi-cabeça com as mesmas 9 cabeças.
    Ver Capítulo 3, seção 3.9.3.
    """
    values = (n_layers, n_kv_heads, head_dim, seq_len, bytes_per_value, batch)
    if not all(isinstance(v, int) and v >= 1 for v in values):
        raise ValueError(f"Todos os argumentos devem ser inteiros ≥ 1; recebi {values}.")
    return 2 * n_layers * n_kv_heads * head_dim * seq_len * bytes_per_value * batch
