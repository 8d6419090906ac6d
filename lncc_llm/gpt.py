"""Um GPT escrito do zero, num só arquivo legível (no espírito do ``model.py`` do nanoGPT).

A ordem do arquivo é a ordem do Apêndice A: configuração, LayerNorm, GELU, rede
*feed-forward*, atenção multi-cabeça causal, bloco Transformer (pré-norm, com
atalhos), o modelo completo e a geração de texto. Com ``GPT_CONFIG_124M`` o
modelo tem a arquitetura do menor GPT-2: 163.009.536 parâmetros com cabeça de
saída própria e 124.412.160 com os pesos amarrados (``tie_weights=True``).

A flag ``use_attention=False`` tira a atenção de todos os blocos: cada posição
passa a ser processada sozinha, sem ver as anteriores (o experimento do fim do
apêndice).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn as nn


# ----------------------------------------------------------------------------- configuração


@dataclass(frozen=True)
class GPTConfig:
    """Hiperparâmetros de um GPT: vocabulário, contexto, dimensão, cabeças, camadas e *dropout*.

    ``qkv_bias`` põe viés nas projeções Q, K e V (o GPT-2 original tem; aqui, como
    em muitos LLMs atuais, o padrão é não ter). ``tie_weights`` faz a camada de
    saída reutilizar a matriz de *embeddings* de tokens. ``use_attention=False``
    remove a atenção dos blocos.
    Ver Apêndice A, seção A.1.
    """

    vocab_size: int = 50257
    context_length: int = 1024
    emb_dim: int = 768
    n_heads: int = 12
    n_layers: int = 12
    drop_rate: float = 0.1
    qkv_bias: bool = False
    tie_weights: bool = False
    use_attention: bool = True

    def __post_init__(self):
        for name in ("vocab_size", "context_length", "emb_dim", "n_heads", "n_layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} deve ser um inteiro ≥ 1; recebi {value!r}.")
        if self.emb_dim % self.n_heads:
            raise ValueError(
                f"emb_dim = {self.emb_dim} não se divide em {self.n_heads} cabeças iguais."
            )
        if not 0.0 <= self.drop_rate < 1.0:
            raise ValueError(f"drop_rate deve estar em [0, 1); recebi {self.drop_rate!r}.")

    def replace(self, **changes) -> "GPTConfig":
        """Cópia da configuração com alguns campos trocados.

        Ver Apêndice A, seção A.1.
        """
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """A configuração como dicionário (as chaves do texto: ``vocab_size``, ``emb_dim``…).

        Ver Apêndice A, seção A.1.
        """
        return asdict(self)


GPT_CONFIG_124M = GPTConfig()
"""O menor GPT-2: vocabulário 50257, contexto 1024, d = 768, 12 cabeças, 12 camadas, *dropout* 0,1."""


# ----------------------------------------------------------------------------- peças


class LayerNorm(nn.Module):
    """Normaliza cada vetor para média 0 e variância 1 e aplica escala e deslocamento treináveis.

    A variância é a populacional (divide por d, não por d − 1), como em
    ``torch.nn.LayerNorm``; ``eps`` evita a divisão por zero.
    Ver Apêndice A, seção A.3.
    """

    def __init__(self, emb_dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.scale = nn.Parameter(torch.ones(emb_dim))
        self.shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


class GELU(nn.Module):
    """GELU na aproximação por tanh usada no GPT-2: 0,5·x·(1 + tanh(√(2/π)·(x + 0,044715·x³))).

    Ver Apêndice A, seção A.4.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


class FeedForward(nn.Module):
    """Rede da posição: expande d → 4d, aplica GELU e volta a d, em cada token separadamente.

    Ver Apêndice A, seção A.5.
    """

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(cfg.emb_dim, 4 * cfg.emb_dim),
            GELU(),
            nn.Linear(4 * cfg.emb_dim, cfg.emb_dim),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class MultiHeadAttention(nn.Module):
    """Atenção multi-cabeça causal: cada posição faz uma média ponderada só do passado e do presente.

    Projeta Q, K e V, divide em ``n_heads`` cabeças, calcula
    ``softmax(Q Kᵀ / √d_h + M) V`` com M = −∞ acima da diagonal, concatena as
    cabeças e aplica a projeção de saída ``out_proj`` (W_O).
    Ver Apêndice A, seções A.7 e A.10.
    """

    def __init__(self, d_in: int, d_out: int, context_length: int, num_heads: int,
                 dropout: float = 0.0, qkv_bias: bool = False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out = {d_out} não se divide em {num_heads} cabeças iguais.")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        # True onde a query i NÃO pode olhar a key j (j > i): o futuro.
        future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", future, persistent=False)

    def _split(self, t: torch.Tensor) -> torch.Tensor:
        batch, n, _ = t.shape
        return t.view(batch, n, self.num_heads, self.head_dim).transpose(1, 2)  # (b, h, n, d_h)

    def attention_weights(self, x: torch.Tensor) -> torch.Tensor:
        """Os pesos ``(batch, cabeças, n, n)`` de cada cabeça, sem *dropout*: cada linha soma 1 sobre j ≤ i.

        Ver Apêndice A, seção A.10.
        """
        n = x.shape[1]
        if n > self.mask.shape[0]:
            raise ValueError(
                f"A sequência tem {n} tokens, mais que o contexto de {self.mask.shape[0]}. "
                "Corte a entrada (por exemplo, idx[:, -context_length:])."
            )
        queries, keys = self._split(self.W_query(x)), self._split(self.W_key(x))
        scores = queries @ keys.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:n, :n], float("-inf"))
        return torch.softmax(scores, dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights = self.dropout(self.attention_weights(x))
        context = weights @ self._split(self.W_value(x))             # (b, h, n, d_h)
        batch, _, n, _ = context.shape
        context = context.transpose(1, 2).reshape(batch, n, self.num_heads * self.head_dim)
        return self.out_proj(context)


class TransformerBlock(nn.Module):
    """Bloco pré-norm: ``x + Atenção(LN(x))`` e depois ``x + FFN(LN(x))``, com *dropout* nos atalhos.

    Com ``cfg.use_attention=False`` o primeiro subbloco some e o bloco vira só
    ``x + FFN(LN(x))``: nenhuma informação passa de uma posição para outra.
    Ver Apêndice A, seção A.7.
    """

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.use_attention = cfg.use_attention
        if cfg.use_attention:
            self.norm1 = LayerNorm(cfg.emb_dim)
            self.att = MultiHeadAttention(
                d_in=cfg.emb_dim, d_out=cfg.emb_dim, context_length=cfg.context_length,
                num_heads=cfg.n_heads, dropout=cfg.drop_rate, qkv_bias=cfg.qkv_bias,
            )
        self.norm2 = LayerNorm(cfg.emb_dim)
        self.ff = FeedForward(cfg)
        self.drop_shortcut = nn.Dropout(cfg.drop_rate)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_attention:
            x = x + self.drop_shortcut(self.att(self.norm1(x)))     # atalho em volta da atenção
        x = x + self.drop_shortcut(self.ff(self.norm2(x)))          # atalho em volta da FFN
        return x


class GPTModel(nn.Module):
    """O GPT completo: *embeddings* de token e posição, ``n_layers`` blocos, LayerNorm final e a camada de saída.

    Recebe ``idx`` ``(batch, n)`` de ids e devolve *logits* ``(batch, n, vocab_size)``:
    na posição i, a pontuação de cada token do vocabulário para a posição i + 1.
    Ver Apêndice A, seção A.8.
    """

    def __init__(self, cfg: GPTConfig = GPT_CONFIG_124M):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.emb_dim)
        self.pos_emb = nn.Embedding(cfg.context_length, cfg.emb_dim)
        self.drop_emb = nn.Dropout(cfg.drop_rate)
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg.n_layers)])
        self.final_norm = LayerNorm(cfg.emb_dim)
        self.out_head = nn.Linear(cfg.emb_dim, cfg.vocab_size, bias=False)
        if cfg.tie_weights:
            self.out_head.weight = self.tok_emb.weight      # a mesma matriz (V, d) nos dois lugares

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        _, n = idx.shape
        if n > self.cfg.context_length:
            raise ValueError(
                f"A entrada tem {n} tokens, mais que o contexto de {self.cfg.context_length}. "
                "Corte a entrada (por exemplo, idx[:, -context_length:])."
            )
        positions = torch.arange(n, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(positions)     # (b, n, d)
        x = self.drop_emb(x)
        x = self.trf_blocks(x)
        x = self.final_norm(x)
        return self.out_head(x)


def count_parameters(model: nn.Module) -> int:
    """Número de parâmetros distintos de um modelo ou módulo (um peso amarrado conta uma vez só).

    Ver Capítulo 3, seção 3.8.5, e Apêndice A, seção A.8.
    """
    return sum(p.numel() for p in model.parameters())


# ----------------------------------------------------------------------------- geração


@torch.no_grad()
def generate(
    model: GPTModel,
    idx: torch.Tensor,
    max_new_tokens: int,
    temperature: float = 0.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Gera ``max_new_tokens`` tokens, um por vez, e devolve ``idx`` com eles acrescentados.

    A cada passo, usa só os últimos ``context_length`` tokens e lê os *logits* da
    última posição. Com ``temperature=0`` escolhe o mais provável (gulosa,
    determinística); com ``temperature > 0`` sorteia de ``softmax(logits/τ)``
    usando ``generator``, um ``torch.Generator`` da CPU (o sorteio é feito na CPU,
    então dá o mesmo texto na CPU e na GPU). Coloque o modelo em ``eval()`` antes.
    Ver Apêndice A, seções A.9 e A.12.
    """
    if temperature < 0:
        raise ValueError(f"A temperatura deve ser ≥ 0; recebi {temperature}.")
    if temperature > 0 and generator is None:
        raise ValueError(
            "Para amostrar (temperature > 0) passe um generator da CPU, por exemplo "
            "torch.Generator().manual_seed(0), para o texto ser reprodutível."
        )
    context = model.cfg.context_length
    for _ in range(max_new_tokens):
        logits = model(idx[:, -context:])[:, -1, :]           # (batch, vocab)
        if temperature == 0:
            next_id = logits.argmax(dim=-1, keepdim=True)
        else:
            probs = torch.softmax(logits.float().cpu() / temperature, dim=-1)
            next_id = torch.multinomial(probs, num_samples=1, generator=generator).to(idx.device)
        idx = torch.cat([idx, next_id], dim=1)
    return idx
