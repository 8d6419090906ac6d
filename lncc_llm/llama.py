"""Um decodificador no estilo Llama escrito do zero, que roda os pesos reais do SmolLM2.

É a cópia testada das classes que o Apêndice B escreve célula a célula: a RMSNorm, a RoPE no
arranjo de metades, a atenção com consultas agrupadas (GQA) e um *KV cache* escrito à mão, a FFN
SwiGLU, o bloco pré-norm e o modelo com a saída amarrada aos *embeddings*. Lido de cima a baixo,
é o ``model.py`` do nanoGPT para a família Llama. ``load_hf_weights`` copia para ele os pesos de
um ``LlamaForCausalLM`` do ``transformers``, nome a nome.

Vetores em linha (``x W``): um ``nn.Linear`` com peso ``W`` de forma (saída, entrada) calcula
``x @ W.T``.
Ver Apêndice B.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class LlamaConfig:
    """Os números que definem um decodificador Llama; ``from_hf`` os lê de uma ``LlamaConfig``.

    Ver Apêndice B, seção B.1.
    """

    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    rope_base: float = 10000.0
    norm_eps: float = 1e-5
    tie_weights: bool = True

    def __post_init__(self):
        if self.d_model % self.n_heads or self.n_heads % self.n_kv_heads:
            raise ValueError(f"d_model ({self.d_model}) deve ser múltiplo de n_heads "
                             f"({self.n_heads}), e n_heads múltiplo de n_kv_heads "
                             f"({self.n_kv_heads}).")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @classmethod
    def from_hf(cls, hf_config) -> LlamaConfig:
        """A configuração equivalente à de um ``LlamaForCausalLM`` do ``transformers``.

        Ver Apêndice B, seção B.1.
        """
        rope = getattr(hf_config, "rope_parameters", None) or {}
        if rope.get("rope_type", "default") != "default":
            raise ValueError("Só a RoPE sem reescala é suportada; o modelo usa "
                             f"{rope['rope_type']!r}.")
        base = rope.get("rope_theta", getattr(hf_config, "rope_theta", 10000.0))
        head_dim = getattr(hf_config, "head_dim", None)
        if head_dim not in (None, hf_config.hidden_size // hf_config.num_attention_heads):
            raise ValueError("Este decodificador supõe d_cabeça = d_model / cabeças.")
        return cls(vocab_size=hf_config.vocab_size, d_model=hf_config.hidden_size,
                   n_layers=hf_config.num_hidden_layers, n_heads=hf_config.num_attention_heads,
                   n_kv_heads=hf_config.num_key_value_heads, d_ff=hf_config.intermediate_size,
                   rope_base=float(base), norm_eps=hf_config.rms_norm_eps,
                   tie_weights=bool(hf_config.tie_word_embeddings))


class RMSNorm(nn.Module):
    """``x / √(média(x²) + ε) · ganho``, na última dimensão, com a conta em float32.

    Ver Apêndice B, seção B.2 (e Capítulo 3, seção 3.9.1).
    """

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def rope_tables(positions: torch.Tensor, head_dim: int,
                base: float) -> tuple[torch.Tensor, torch.Tensor]:
    """As tabelas ``cos`` e ``sin`` ``(n, head_dim)`` da RoPE no arranjo de metades.

    O ângulo da posição ``p`` no par ``j`` é ``p · base^(−2j/head_dim)``, repetido nas duas metades.
    Ver Apêndice B, seção B.3 (e Capítulo 3, seção 3.5.4).
    """
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = positions.float()[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``[x_a, x_b] ↦ [−x_b, x_a]``: o giro de 90° de cada par ``(j, j + d/2)``.

    Ver Apêndice B, seção B.3.
    """
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Gira cada vetor de ``x`` ``(..., n, head_dim)`` pelo ângulo da sua posição.

    Ver Apêndice B, seção B.3.
    """
    return x * cos + rotate_half(x) * sin


class KVCache:
    """As chaves e os valores já calculados, uma lista por camada, que crescem a cada token.

    ``append(camada, k, v)`` junta os novos ``(lote, H_kv, n, d_cabeça)`` ao fim dos guardados (na
    dimensão das posições) e devolve tudo; ``len(cache)`` é quantas posições estão guardadas.
    Ver Apêndice B, seção B.8.
    """

    def __init__(self, n_layers: int):
        self.keys: list[torch.Tensor | None] = [None] * n_layers
        self.values: list[torch.Tensor | None] = [None] * n_layers

    def __len__(self) -> int:
        return 0 if self.keys[0] is None else self.keys[0].shape[2]

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        if self.keys[layer] is not None:
            k = torch.cat([self.keys[layer], k], dim=2)
            v = torch.cat([self.values[layer], v], dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v

    def nbytes(self) -> int:
        """Bytes guardados em todas as camadas (chaves e valores)."""
        return sum(t.numel() * t.element_size() for t in self.keys + self.values if t is not None)


def future_mask(n_new: int, n_past: int, device=None) -> torch.Tensor:
    """A máscara causal de ``n_new`` *queries* novas com ``n_past`` posições já guardadas no cache.

    Tensor booleano ``(n_new, n_past + n_new)``, ``True`` onde a *query* nova ``i`` (na posição
    absoluta ``n_past + i``) **não** pode olhar a *key* ``j``, isto é, ``j > n_past + i``. Sem
    passado é o triângulo de sempre; com um token novo, não esconde nada.
    Ver Apêndice B, seções B.4 e B.8.
    """
    return torch.ones(n_new, n_past + n_new, dtype=torch.bool, device=device).triu(n_past + 1)


class Attention(nn.Module):
    """Atenção causal multi-cabeça com RoPE e GQA, sem vieses, com *KV cache* opcional.

    ``n_heads`` cabeças de consulta; cada uma das ``n_kv_heads`` cabeças de chave e valor serve a
    ``n_heads / n_kv_heads`` delas. Com ``cache``, as novas chaves e valores entram no fim dos
    guardados, e a consulta ``i`` (posição absoluta ``passado + i``) vê as posições até a sua.
    Ver Apêndice B, seção B.4.
    """

    def __init__(self, cfg: LlamaConfig, layer: int):
        super().__init__()
        self.layer, self.n_heads, self.n_kv_heads = layer, cfg.n_heads, cfg.n_kv_heads
        self.head_dim = cfg.head_dim
        self.q_proj = nn.Linear(cfg.d_model, cfg.n_heads * cfg.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.d_model, cfg.n_kv_heads * cfg.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.d_model, cfg.n_kv_heads * cfg.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.n_heads * cfg.head_dim, cfg.d_model, bias=False)

    def forward(self, x, cos, sin, cache: KVCache | None = None):
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, n, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        if cache is not None:
            k, v = cache.append(self.layer, k, v)
        group = self.n_heads // self.n_kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        future = future_mask(n, k.shape[2] - n, device=x.device)    # P = k.shape[2] − n guardadas
        weights = torch.softmax(scores.masked_fill(future, float("-inf")).float(), dim=-1)
        z = weights.to(q.dtype) @ v
        return self.o_proj(z.transpose(1, 2).reshape(b, n, self.n_heads * self.head_dim))


class SwiGLU(nn.Module):
    """A FFN com porta: ``down(silu(x W_gate) ⊙ x W_up)``.

    Ver Apêndice B, seção B.5 (e Capítulo 3, seção 3.9.2).
    """

    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.up_proj = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.down_proj = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    """O bloco pré-norm: ``x + Atenção(RMSNorm(x))``, depois ``x + SwiGLU(RMSNorm(x))``.

    Ver Apêndice B, seção B.6.
    """

    def __init__(self, cfg: LlamaConfig, layer: int):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.attn = Attention(cfg, layer)
        self.mlp_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.mlp = SwiGLU(cfg)

    def forward(self, x, cos, sin, cache=None):
        x = x + self.attn(self.attn_norm(x), cos, sin, cache)
        return x + self.mlp(self.mlp_norm(x))


class LlamaDecoder(nn.Module):
    """O modelo: *embedding*, ``n_layers`` blocos, RMSNorm final e a saída (amarrada aos
    *embeddings* quando ``tie_weights``).

    ``forward(ids, cache)`` recebe ``(lote, n)`` e devolve os *logits* ``(lote, n, |V|)``; com
    ``cache``, as posições continuam de onde o cache parou.
    Ver Apêndice B, seção B.6.
    """

    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg, i) for i in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        if cfg.tie_weights:
            self.lm_head.weight = self.embed.weight

    def forward(self, ids: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        if ids.dim() != 2:
            raise ValueError(f"ids deve ter forma (lote, n); recebi {tuple(ids.shape)}. "
                             "Para um texto só, use ids[None].")
        start = len(cache) if cache is not None else 0
        positions = torch.arange(start, start + ids.shape[1], device=ids.device)
        cos, sin = rope_tables(positions, self.cfg.head_dim, self.cfg.rope_base)
        h = self.embed(ids)
        for block in self.blocks:
            h = block(h, cos, sin, cache)
        return self.lm_head(self.norm(h))


def hf_name(ours: str) -> str:
    """O nome, num ``LlamaForCausalLM`` do ``transformers``, do parâmetro ``ours`` do nosso modelo.

    Ver Apêndice B, seção B.7.
    """
    renames = {"embed.": "model.embed_tokens.", "blocks.": "model.layers.", "norm.": "model.norm.",
               ".attn_norm.": ".input_layernorm.", ".attn.": ".self_attn.",
               ".mlp_norm.": ".post_attention_layernorm."}
    name = ours
    for old, new in renames.items():
        if old.startswith("."):
            name = name.replace(old, new)
        elif name.startswith(old):
            name = new + name[len(old):]
    return name


@torch.no_grad()
def load_hf_weights(model: LlamaDecoder, hf_model) -> list[tuple[str, str]]:
    """Copia os pesos de um ``LlamaForCausalLM`` para ``model``, parâmetro a parâmetro.

    Confere que cada parâmetro nosso tem um correspondente de mesma forma e que nenhum peso do
    modelo de origem ficou de fora; devolve os pares (nosso nome, nome no ``transformers``).
    Ver Apêndice B, seção B.7.
    """
    source = dict(hf_model.named_parameters())
    pairs = []
    for name, param in model.named_parameters():
        other = hf_name(name)
        if other not in source:
            raise KeyError(f"{name} → {other}: esse nome não existe no modelo de origem.")
        if source[other].shape != param.shape:
            raise ValueError(f"{name}: forma {tuple(param.shape)}, mas {other} tem "
                             f"{tuple(source[other].shape)}.")
        param.copy_(source[other])
        pairs.append((name, other))
    unused = set(source) - {other for _, other in pairs}
    if unused:
        raise ValueError(f"Pesos do modelo de origem sem lugar no nosso: {sorted(unused)[:5]}.")
    return pairs
