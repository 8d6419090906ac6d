"""Um GPT inteiro num só arquivo, para ler de cima a baixo (no espírito do ``model.py`` do nanoGPT).

O arquivo tem quatro partes, na ordem do Apêndice A:

1. ``GPTConfig``: os números que descrevem um GPT (seção A.1);
2. as peças: ``LayerNorm`` (A.3), ``GELU`` (A.4), ``FeedForward`` (A.5),
   ``CausalSelfAttention`` (A.7 e A.10), ``SeparateHeadsAttention`` (A.10) e
   ``TransformerBlock`` (A.7);
3. ``GPTModel``, que empilha as peças (A.8), e ``count_parameters``;
4. ``generate``, o laço autorregressivo (A.9 e A.12).

Com ``GPT_CONFIG_124M`` o modelo tem a forma do menor GPT-2: 163 009 536
parâmetros com camada de saída própria e 124 412 160 com ela amarrada aos
*embeddings* (``tie_weights=True``). Os módulos são criados sempre na mesma
ordem (*embeddings* de token e de posição, depois, bloco a bloco, Q/K/V, a
projeção de saída da atenção e as duas camadas da FFN, e por fim a camada de
saída): é essa ordem que faz ``torch.manual_seed(123)`` dar os mesmos pesos e os
mesmos *logits* impressos nas notas de aula que o Apêndice A segue (sobre o capítulo 4
de Raschka). O Apêndice A escreve estas mesmas classes
célula a célula e confere que dão os mesmos *logits* que este arquivo.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn as nn

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


# =============================================================================== 1. configuração


@dataclass(frozen=True)
class GPTConfig:
    """Os hiperparâmetros de um GPT.

    - ``vocab_size``: tamanho do vocabulário (V);
    - ``max_seq_len``: quantas posições têm *embedding*, ou seja, o contexto máximo;
    - ``d_model``: dimensão d de cada vetor de token;
    - ``n_heads``: cabeças de atenção (d precisa ser múltiplo delas);
    - ``n_layers``: quantos blocos Transformer se empilham;
    - ``dropout``: probabilidade de zerar cada unidade no modo de treino;
    - ``qkv_bias``: se as projeções Q, K e V têm viés (o GPT-2 original tem);
    - ``tie_weights``: se a camada de saída usa a própria matriz de *embeddings*;
    - ``use_attention``: ``False`` tira a atenção de todos os blocos.

    Ver Apêndice A, seção A.1.
    """

    vocab_size: int = 50257
    max_seq_len: int = 1024
    d_model: int = 768
    n_heads: int = 12
    n_layers: int = 12
    dropout: float = 0.1
    qkv_bias: bool = False
    tie_weights: bool = False
    use_attention: bool = True

    def __post_init__(self):
        for field in ("vocab_size", "max_seq_len", "d_model", "n_heads", "n_layers"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{field} deve ser um inteiro ≥ 1; recebi {value!r}.")
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model = {self.d_model} não se divide em {self.n_heads} cabeças iguais."
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout deve estar em [0, 1); recebi {self.dropout!r}.")

    @property
    def head_dim(self) -> int:
        """Dimensão de cada cabeça, d_h = d / H.

        Ver Apêndice A, seção A.10.
        """
        return self.d_model // self.n_heads

    def replace(self, **changes) -> "GPTConfig":
        """Uma cópia com alguns campos trocados, por exemplo ``cfg.replace(n_layers=2)``.

        Ver Apêndice A, seção A.1.
        """
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """Os campos como dicionário ``{nome: valor}``, na ordem em que foram declarados.

        Ver Apêndice A, seção A.1.
        """
        return asdict(self)


GPT_CONFIG_124M = GPTConfig()
"""O menor GPT-2: V = 50257, contexto 1024, d = 768, 12 cabeças, 12 blocos, *dropout* 0,1."""


# =============================================================================== 2. peças


def layer_norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
               eps: float = 1e-5) -> torch.Tensor:
    """A LayerNorm na última dimensão: ``γ ⊙ (x − μ)/√(σ² + ε) + β``, com a variância populacional.

    Ver Apêndice A, seção A.3.
    """
    mu = x.mean(-1, keepdim=True)
    sigma2 = x.var(-1, unbiased=False, keepdim=True)
    return gamma * (x - mu) / torch.sqrt(sigma2 + eps) + beta


def causal_attention_weights(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Os pesos da atenção causal, ``softmax(Q Kᵀ/√d_h)`` com −∞ onde a *key* vem depois da *query*.

    ``q`` e ``k``: ``(..., n, d_h)``; devolve ``(..., n, n)``, com cada linha somando 1.
    Ver Apêndice A, seção A.7.
    """
    n = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    future = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)


class LayerNorm(nn.Module):
    """LayerNorm: em cada vetor, tira a média, divide pelo desvio padrão e aplica γ e β treináveis.

    ``γ`` (``gamma``) começa em 1 e ``β`` (``beta``) em 0. A variância é a
    populacional (divide por d), a mesma de ``torch.nn.LayerNorm``, e ``eps``
    protege a raiz quando o vetor é quase constante.
    Ver Apêndice A, seção A.3.
    """

    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(dim))
        self.beta = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm(x, self.gamma, self.beta, self.eps)


class GELU(nn.Module):
    """GELU pela fórmula com tanh do GPT-2: 0,5·x·(1 + tanh(√(2/π)·(x + 0,044715·x³))).

    Ver Apêndice A, seção A.4.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Nesta ordem (0,5·x primeiro) o autograd soma os gradientes de x sempre na mesma
        # ordem, e o treino do Apêndice A dá os mesmos números, bit a bit.
        half = 0.5 * x
        cubic = x + 0.044715 * x**3
        return half * (1.0 + torch.tanh(SQRT_2_OVER_PI * cubic))


class FeedForward(nn.Module):
    """A rede aplicada a cada posição: ``down(GELU(up(x)))``, com ``up`` de d para 4d e ``down`` de
    volta.

    Ver Apêndice A, seção A.5.
    """

    def __init__(self, d_model: int, expansion: int = 4):
        super().__init__()
        self.up = nn.Linear(d_model, expansion * d_model)
        self.act = GELU()
        self.down = nn.Linear(expansion * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.act(self.up(x)))


class CausalSelfAttention(nn.Module):
    """Atenção multi-cabeça causal: cada posição faz médias ponderadas só de si mesma e do passado.

    Uma única camada ``qkv`` calcula Q, K e V de uma vez (como a ``c_attn`` do
    GPT-2): as linhas ``[0, d)`` do seu peso dão Q, ``[d, 2d)`` dão K e
    ``[2d, 3d)`` dão V. Cada cabeça calcula ``softmax(Q Kᵀ / √d_h + M) V``, com
    M = −∞ onde a *key* está no futuro; as cabeças são concatenadas e passam
    pela projeção ``proj`` (W_O, com viés).
    Ver Apêndice A, seções A.7 e A.10.
    """

    def __init__(self, d_model: int, n_heads: int, max_seq_len: int,
                 dropout: float = 0.0, qkv_bias: bool = False):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model = {d_model} não se divide em {n_heads} cabeças iguais.")
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=qkv_bias)
        self.proj = nn.Linear(d_model, d_model)
        self.weights_dropout = nn.Dropout(dropout)
        # visible[i, j] é True quando a posição i pode olhar a posição j, isto é, j ≤ i.
        visible = torch.ones(max_seq_len, max_seq_len, dtype=torch.bool).tril()
        self.register_buffer("visible", visible, persistent=False)

    def _project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Q, K e V já separados por cabeça, cada um ``(b, H, n, d_h)``."""
        b, n, _ = x.shape
        limit = self.visible.shape[0]
        if n > limit:
            raise ValueError(
                f"A sequência tem {n} tokens, mais que o contexto de {limit}. "
                "Corte a entrada (por exemplo, ids[:, -max_seq_len:])."
            )
        per_head = self.qkv(x).view(b, n, 3, self.n_heads, self.head_dim)
        q, k, v = per_head.permute(2, 0, 3, 1, 4)
        return q, k, v

    def _weights(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        n = q.shape[-2]
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~self.visible[:n, :n], float("-inf"))
        return torch.softmax(scores, dim=-1)

    def attention_weights(self, x: torch.Tensor) -> torch.Tensor:
        """Os pesos de cada cabeça, ``(b, H, n, n)``, sem *dropout*: a linha i soma 1 e é zero para
        j > i.

        Ver Apêndice A, seção A.10.
        """
        q, k, _ = self._project(x)
        return self._weights(q, k)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self._project(x)
        weights = self.weights_dropout(self._weights(q, k))
        heads = weights @ v                                      # (b, H, n, d_h)
        concat = heads.transpose(1, 2).reshape(b, n, d)          # [z⁽¹⁾, …, z⁽ᴴ⁾] por posição
        return self.proj(concat)


class SeparateHeadsAttention(nn.Module):
    """A mesma atenção causal da ``CausalSelfAttention``, com Q, K e V em três camadas
    ``q``, ``k`` e ``v`` de d × d (sem viés) no lugar da ``qkv`` única; a projeção de saída
    continua ``proj``.

    Copiando para ``q``, ``k`` e ``v`` os três blocos de d linhas do peso da ``qkv``, as
    saídas das duas coincidem: a camada única é só as três empilhadas, uma multiplicação
    maior em vez de três menores. Ver Apêndice A, seção A.10.
    """

    def __init__(self, d_model: int, n_heads: int, max_seq_len: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model = {d_model} não se divide em {n_heads} cabeças iguais.")
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, d_model, bias=False)
        self.v = nn.Linear(d_model, d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model)
        visible = torch.ones(max_seq_len, max_seq_len, dtype=torch.bool).tril()
        self.register_buffer("visible", visible, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        if n > self.visible.shape[0]:
            limit = self.visible.shape[0]
            raise ValueError(f"A sequência tem {n} tokens, mais que o contexto de {limit}. "
                             "Corte a entrada (por exemplo, x[:, -max_seq_len:]).")
        q, k, v = (layer(x).view(b, n, self.n_heads, self.head_dim).transpose(1, 2)
                   for layer in (self.q, self.k, self.v))          # cada um (b, H, n, d_h)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        weights = torch.softmax(scores.masked_fill(~self.visible[:n, :n], float("-inf")), dim=-1)
        return self.proj((weights @ v).transpose(1, 2).reshape(b, n, d))


class TransformerBlock(nn.Module):
    """Um bloco pré-norm com dois atalhos: ``x + Atenção(LN(x))``, depois ``x + FFN(LN(x))``.

    O *dropout* age na saída de cada subbloco, antes da soma. Com
    ``cfg.use_attention=False`` o bloco só tem a segunda metade, e então nada
    passa de uma posição para outra.
    Ver Apêndice A, seção A.7.
    """

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        if cfg.use_attention:
            self.attn_norm = LayerNorm(cfg.d_model)
            self.attn = CausalSelfAttention(
                cfg.d_model,
                cfg.n_heads,
                cfg.max_seq_len,
                dropout=cfg.dropout,
                qkv_bias=cfg.qkv_bias,
            )
        else:
            self.attn_norm = self.attn = None
        self.ffn_norm = LayerNorm(cfg.d_model)
        self.ffn = FeedForward(cfg.d_model)
        self.residual_dropout = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.attn is not None:
            x = x + self.residual_dropout(self.attn(self.attn_norm(x)))
        return x + self.residual_dropout(self.ffn(self.ffn_norm(x)))


# =============================================================================== 3. o modelo


class GPTModel(nn.Module):
    """O GPT: *embeddings* de token e de posição, ``n_layers`` blocos, uma LayerNorm e a camada de
    saída.

    ``model(ids)`` recebe ids ``(b, n)`` e devolve *logits* ``(b, n, V)``: na
    posição i, uma pontuação para cada candidato a token i + 1. ``model.embed(ids)``
    devolve só a entrada do primeiro bloco.
    Ver Apêndice A, seção A.8.
    """

    def __init__(self, cfg: GPTConfig = GPT_CONFIG_124M):
        super().__init__()
        self.cfg = cfg
        self.token_embedding = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.position_embedding = nn.Embedding(cfg.max_seq_len, cfg.d_model)
        self.embedding_dropout = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList()
        for _ in range(cfg.n_layers):
            self.blocks.append(TransformerBlock(cfg))
        self.out_norm = LayerNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        if cfg.tie_weights:
            # Amarração: a matriz (V, d) que lê os tokens é a mesma que pontua a saída.
            self.lm_head.weight = self.token_embedding.weight

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """*Embedding* de token + *embedding* de posição (com *dropout*):
        ``(b, n)`` → ``(b, n, d)``.

        Ver Apêndice A, seção A.8.
        """
        n = ids.shape[-1]
        if n > self.cfg.max_seq_len:
            raise ValueError(
                f"A entrada tem {n} tokens, mais que o contexto de {self.cfg.max_seq_len}. "
                "Corte a entrada (por exemplo, ids[:, -max_seq_len:])."
            )
        where = torch.arange(n, device=ids.device)
        return self.embedding_dropout(self.token_embedding(ids) + self.position_embedding(where))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids)
        for block in self.blocks:
            h = block(h)
        return self.lm_head(self.out_norm(h))


def count_parameters(model: nn.Module) -> int:
    """Quantos números treináveis um módulo guarda; um tensor amarrado em dois lugares conta uma
    vez.

    Ver Capítulo 3, seção 3.8.5, e Apêndice A, seção A.8.
    """
    return sum(map(torch.numel, model.parameters()))


# =============================================================================== 4. geração


@torch.no_grad()
def generate(
    model: GPTModel,
    ids: torch.Tensor,
    max_new_tokens: int,
    temperature: float = 0.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Acrescenta ``max_new_tokens`` tokens a ``ids`` ``(b, n)``, um de cada vez, e devolve a
    sequência toda.

    Em cada passo o modelo vê no máximo os últimos ``max_seq_len`` tokens e só
    os *logits* da última posição importam. ``temperature=0`` escolhe o token
    mais provável (decodificação gulosa, sem sorteio); ``temperature > 0``
    sorteia de ``softmax(logits / τ)`` com ``generator``, um ``torch.Generator``
    da CPU, e o sorteio é feito na CPU para dar o mesmo texto na CPU e na GPU.
    Ponha o modelo em ``eval()`` antes, para desligar o *dropout*.
    Ver Apêndice A, seções A.9 e A.12.
    """
    if temperature < 0:
        raise ValueError(f"A temperatura deve ser ≥ 0; recebi {temperature}.")
    sampling = temperature > 0
    if sampling and generator is None:
        raise ValueError(
            "Para amostrar (temperature > 0) passe um generator da CPU, por exemplo "
            "torch.Generator().manual_seed(0), para o texto ser reprodutível."
        )
    window = model.cfg.max_seq_len
    for _ in range(max_new_tokens):
        last = model(ids[:, -window:])[:, -1]                     # (b, V)
        if sampling:
            probs = (last.float().cpu() / temperature).softmax(-1)
            chosen = torch.multinomial(probs, 1, generator=generator).to(ids.device)
        else:
            chosen = last.argmax(-1, keepdim=True)
        ids = torch.cat((ids, chosen), dim=1)
    return ids
