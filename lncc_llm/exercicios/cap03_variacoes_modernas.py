"""Exercícios conferíveis do Capítulo 3, primeira parte. O 1 é o núcleo: o leitor escreve as tabelas cos/sin
e o ``rotate_half`` da RoPE de metades, conferidos contra o ``LlamaRotaryEmbedding`` e o ``rotate_half`` do
``transformers`` em posições, dimensões e bases que o notebook não mostra. Os outros: a consolidação do
texto-base, a curva do logit e a temperatura (opcionais). Os do MoE estão em ``cap03_moe_bloco``."""
from __future__ import annotations

import math

import numpy as np

from .comparar import Incorreto, como_array
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap03_variacoes_modernas"
_contexto = celulas_do_notebook(NOTEBOOK, (
    "a854e5f7", "f968420a", "c613b2c1", "6dc1ff2a", "e45a4aa6", "ac0e68bb", "3ce050b1", "7295552f",
    "50014c0b"))
READS = [1.0, -1.0, 0.0, 0.0]


# ---------------------------------------------------------------- exercício 1 (núcleo): a RoPE de metades
_TABELAS_EX1 = ((64, 100000.0, (0, 1, 5, 17, 63, 200)), (16, 10000.0, (0, 2, 3, 9, 150)),
                (8, 500.0, (4, 0, 11)))                    # (d_cabeça, base, posições)


def _tabelas_do_transformers(positions, head_dim, base):
    """cos e sin do ``LlamaRotaryEmbedding`` do ``transformers`` (o passo rotativo do SmolLM2)."""
    import torch
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    cfg = LlamaConfig(hidden_size=2 * head_dim, num_attention_heads=2, head_dim=head_dim,
                      rope_parameters={"rope_type": "default", "rope_theta": base})
    x = torch.zeros(1, len(positions), 2 * head_dim)
    cos, sin = LlamaRotaryEmbedding(cfg)(x, torch.as_tensor(positions)[None])
    return cos[0], sin[0]


def _rotate_half_do_transformers(x):
    from transformers.models.llama.modeling_llama import rotate_half

    return rotate_half(x)


def _casos_ex1(ns):
    import torch

    g = torch.Generator().manual_seed(330)
    tabelas = [(torch.tensor(pos), d, base) for d, base, pos in _TABELAS_EX1]
    vetores = [(torch.randn(*forma, generator=g),) for forma in ((6, 64), (1, 3, 5, 16), (2, 8))]
    return {"rope_tables": tabelas, "rotate_half": vetores}


def _tabelas(positions, head_dim, base, arranjo="metades", expoente=2):
    import torch

    omega = 1.0 / base ** (torch.arange(0, head_dim // 2, dtype=torch.float32) * expoente / head_dim)
    angulos = positions.float()[:, None] * omega[None, :]
    if arranjo == "metades":
        angulos = torch.cat([angulos, angulos], dim=-1)
    elif arranjo == "intercalado":
        angulos = angulos.repeat_interleave(2, dim=-1)
    return angulos.cos(), angulos.sin()


def _rotacao_errada(x, tipo):
    import torch

    a, b = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    if tipo == "sinal":
        return torch.cat([b, -a], dim=-1)
    if tipo == "ordem":
        return torch.cat([-a, b], dim=-1)
    pares = x.unflatten(-1, (-1, 2))                          # intercalado: (x0, x1) → (−x1, x0)
    return torch.stack([-pares[..., 1], pares[..., 0]], dim=-1).flatten(-2)


ex1 = Exercicio(
    "cap03_variacoes_modernas.ex1", "as tabelas cos/sin e o rotate_half do SmolLM2",
    ("rope_tables", "rotate_half"),
    dicas=(
        "As frequências são ω_j = base^(−2j/d) para j = 0, …, d/2 − 1 (`torch.arange(0, d, 2) / d` dá os 2j/d); "
        "os ângulos, p·ω_j, formam uma tabela (n, d/2) com uma linha por posição.",
        "No arranjo de metades o mesmo ângulo vale para a coordenada j e para a j + d/2: repita a tabela "
        "**lado a lado** (`torch.cat([angulos, angulos], dim=-1)`), não intercalada. Devolva `cos` e `sin` dela.",
        "`rotate_half([x_a, x_b]) = [−x_b, x_a]`, com x_a a primeira metade da última dimensão e x_b a segunda "
        "(`x.chunk(2, dim=-1)`).",
    ),
    esperado=lambda ns: {"rope_tables": _tabelas_do_transformers, "rotate_half": _rotate_half_do_transformers},
    entradas=_casos_ex1,
    atol=1e-5,
    erros_comuns=(
        ErroComum("as tabelas estão no arranjo intercalado (cada ângulo repetido em coordenadas vizinhas): o "
                  "SmolLM2 gira a coordenada j junto com a j + d/2, então a tabela de ângulos vem repetida lado a "
                  "lado, `torch.cat([a, a], dim=-1)`.",
                  lambda ns: {"rope_tables": lambda p, d, b: _tabelas(p, d, b, arranjo="intercalado")}),
        ErroComum("as tabelas têm d/2 colunas: cada ângulo serve a duas coordenadas (j e j + d/2), e as tabelas "
                  "têm a largura d da cabeça.",
                  lambda ns: {"rope_tables": lambda p, d, b: _tabelas(p, d, b, arranjo="so_metade")}),
        ErroComum("o expoente das frequências está sem o 2: ω_j = base^(−2j/d), de modo que as d/2 frequências vão "
                  "de 1 até quase 1/base.",
                  lambda ns: {"rope_tables": lambda p, d, b: _tabelas(p, d, b, expoente=1)}),
        ErroComum("o sinal está trocado: `rotate_half([x_a, x_b])` é `[−x_b, x_a]` (um giro de +90° em cada par), "
                  "não `[x_b, −x_a]`.",
                  lambda ns: {"rotate_half": lambda x: _rotacao_errada(x, "sinal")}),
        ErroComum("esse é o giro do arranjo intercalado, com pares vizinhos (x₀, x₁): o SmolLM2 forma pares com as "
                  "duas metades do vetor.",
                  lambda ns: {"rotate_half": lambda x: _rotacao_errada(x, "intercalado")}),
    ),
    proibidas=("transformers.models.llama.modeling_llama.rotate_half", "lncc_llm.rope.rotate_half",
               "lncc_llm.rope.rope_angles",
               "transformers.models.llama.modeling_llama.apply_rotary_pos_emb",
               "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding",
               "lncc_llm.rope.apply_rope", "lncc_llm.rope.rope_cos_sin", "lncc_llm.rope.rope_frequencies",
               "lncc_llm.llama.rotate_half", "lncc_llm.llama.rope_tables"),
    tipo="nucleo",
    inicio="""
def rope_tables(positions, head_dim, base):
    \"\"\"As tabelas cos e sin da RoPE de metades: duas (n, head_dim), uma linha por posição.

    positions: (n,) inteiros; as frequências são ω_j = base^(−2j/head_dim), j = 0, …, head_dim/2 − 1, e
    o ângulo p·ω_j vale para as coordenadas j e j + head_dim/2.
    \"\"\"
    return ____     # (cos, sin)


def rotate_half(x):
    \"\"\"[x_a, x_b] → [−x_b, x_a], com x_a e x_b as duas metades da última dimensão.\"\"\"
    return ____
""",
    seguir='cos_r, sin_r = rope_tables(pos, cfg.head_dim, rope_base); q_ours, k_ours = q * cos_r + '
           'rotate_half(q) * sin_r, k * cos_r + rotate_half(k) * sin_r; check("a sua RoPE = apply_rotary_pos_emb '
           'na camada 5", [q_ours, k_ours], [q_hf, k_hf])',
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: reads trocado
def _x_novo(ns):
    x = ns["X"].clone()
    x[2] = x.new_tensor(READS)
    return x


def _logits_ex1(ns, girar_q=True, girar_k=True, escala=True, trocar=True):
    from ..rope import apply_rope, attention_logits

    x = _x_novo(ns) if trocar else ns["X"]
    pos = ns["positions"]
    girado = apply_rope(x, pos, layout="interleaved")
    q = girado if girar_q else x
    k = girado if girar_k else x
    sem = attention_logits(x, x)
    com = attention_logits(q, k)
    if not escala:
        sem, com = sem * 2, com * 2
    return {"X_ex": x, "L_ex_plain": sem, "L_ex_rope": com}


ex2 = Exercicio(
    "cap03_variacoes_modernas.ex2", "reads = [1, −1, 0, 0], logits sem e com RoPE",
    ("X_ex", "L_ex_plain", "L_ex_rope"),
    dicas=(
        "Copie `X` com `X.clone()` e troque só a linha 2 (a de `reads`); as outras continuam as mesmas.",
        "Os logits sem RoPE são `logits(X_ex, X_ex)`; com RoPE, gire as duas cópias com "
        "`rope_rotate(X_ex, positions)` antes: queries e keys giram, cada uma pela sua posição.",
        "A diagonal não muda com a RoPE: se a sua mudou, você girou só um dos lados.",
    ),
    esperado=_logits_ex1,
    erros_comuns=(
        ErroComum("com RoPE, só as queries giraram: a key também gira, pela sua posição (a diagonal teria "
                  "de ficar igual à de sem RoPE).",
                  lambda ns: {"L_ex_rope": _logits_ex1(ns, girar_k=False)["L_ex_rope"]},
                  dica="Gire as duas cópias: `rope_rotate(X_ex, positions)` vale para a query e para a key, "
                       "e os logits com RoPE são `logits(X_rot, X_rot)`. Na diagonal, query e key estão na "
                       "mesma posição, e o giro se desfaz."),
        ErroComum("com RoPE, só as keys giraram: a query também gira, pela sua posição (a diagonal teria "
                  "de ficar igual à de sem RoPE).",
                  lambda ns: {"L_ex_rope": _logits_ex1(ns, girar_q=False)["L_ex_rope"]},
                  dica="O giro vale para os dois lados: `logits(X_rot, X_rot)`, com `X_rot = rope_rotate(X_ex, "
                       "positions)`. Só assim o logit depende da distância entre as posições."),
        ErroComum("faltou dividir por √d = 2: os logits da seção 3.5 são Q Kᵀ/√d.",
                  lambda ns: {k: v for k, v in _logits_ex1(ns, escala=False).items() if k != "X_ex"},
                  dica="Use a função `logits` da seção 3.5, que já divide por `math.sqrt(Q.shape[-1])`."),
        ErroComum("estes são os logits do exemplo mínimo: troque antes a linha de `reads` por [1, −1, 0, 0].",
                  lambda ns: _logits_ex1(ns, trocar=False),
                  dica="`X_ex = X.clone()` e depois `X_ex[2] = torch.tensor([1.0, -1.0, 0.0, 0.0], "
                       "dtype=torch.float64)`; calcule os dois mapas com `X_ex`, não com `X`."),
    ),
    inicio="""
X_ex = ____         # X com a linha de reads trocada por [1, -1, 0, 0]
L_ex_plain = ____   # os logits 3 × 3 sem RoPE
L_ex_rope = ____    # os logits 3 × 3 com RoPE
""",
    contexto=_contexto, rtol=1e-5, atol=1e-6,
)


# ---------------------------------------------------------------- exercício 3: a curva do logit
def _curva_ref(x, positions, base, layout="interleaved", escala=True, girar_q=False):
    """O logit entre x na posição 0 (query) e x girado em cada posição p (key), pela RoPE do ``lncc_llm``."""
    import torch

    from ..rope import apply_rope

    x = torch.as_tensor(x, dtype=torch.float64)
    positions = torch.as_tensor(positions)
    keys = apply_rope(x.expand(len(positions), -1).clone(), positions, base=base, layout=layout)
    queries = keys if girar_q else x.expand(len(positions), -1)
    out = (queries * keys).sum(-1)
    return out / math.sqrt(x.shape[-1]) if escala else out


def _entradas_ex2(ns):
    """Vetores e posições sorteados com semente própria, que o notebook nunca mostra: d = 4, 8 e 64, as
    duas bases da lição e posições fora de ordem (um vetor de uma posição só também)."""
    import torch

    gen = torch.Generator().manual_seed(20261128)
    casos = []
    for d, base, posicoes in ((4, 10000.0, torch.arange(61)), (8, 500.0, torch.tensor([0, 7, 3, 120])),
                              (64, 100000.0, torch.tensor([0, 1, 10, 100, 1000])), (2, 10000.0, torch.tensor([5]))):
        casos.append((torch.randn(d, generator=gen, dtype=torch.float64), posicoes, base))
    return casos


def _como_erro_ex2(**kw):
    return lambda ns: {"logit_curve": lambda x, positions, base: _curva_ref(x, positions, base, **kw)}


ex3 = Exercicio(
    "cap03_variacoes_modernas.ex3", "o logit de um vetor contra ele mesmo, girado à distância p",
    ("logit_curve",),
    dicas=(
        "A query é `x` na posição 0 (o giro de ângulo zero não muda nada); a key é `x` girado pela posição p. "
        "Para todas as posições de uma vez: `rope_rotate(x[None].expand(len(positions), -1), positions, base)`.",
        "O logit de cada p é o produto interno da query com a key girada, dividido por √d: "
        "`(x * keys).sum(-1) / math.sqrt(len(x))`.",
        "Com `x = [1, 0, 1, 0]` e `base = 10000`, a sua curva tem de coincidir com ½(cos p + cos 0,01p); com um "
        "vetor qualquer, a fórmula fechada da leitura sobre o decaimento médio (a média sobre vetores) já não vale, e o verificador "
        "usa vetores quaisquer.",
    ),
    esperado=lambda ns: {"logit_curve": _curva_ref},
    entradas=_entradas_ex2,
    erros_comuns=(
        ErroComum("faltou dividir por √d: o logit em p = 0 deve ser ‖x‖²/√d.", _como_erro_ex2(escala=False),
                  dica="Divida o produto interno por `math.sqrt(x.shape[-1])`, como a função `logits` da "
                       "seção 3.5."),
        ErroComum("a query também girou, pela mesma posição p da key: aí o giro se desfaz e o logit fica "
                  "constante. A query fica na posição 0.", _como_erro_ex2(girar_q=True),
                  dica="Gire só a key. A query está na posição 0, e girar por 0 não muda nada."),
        ErroComum("os pares foram formados pelas metades (x_j com x_{j+d/2}, o arranjo do Llama no Hugging "
                  "Face); a `rope_rotate` da lição gira pares vizinhos (x0, x1), (x2, x3)…",
                  _como_erro_ex2(layout="rotate_half"),
                  dica="Use a `rope_rotate` da seção 3.5 (pares intercalados), não o arranjo por metades."),
    ),
    atalhos=(
        ErroComum("essa é a fórmula fechada do decaimento médio (a leitura antes deste exercício), a média sobre muitos vetores; ela só coincide com "
                  "a curva de um vetor como [1, 0, 1, 0]. Gire o próprio `x` e calcule os logits.",
                  lambda ns: {"logit_curve": lambda x, positions, base: _media_fechada(len(x), positions, base)
                              * float((x * x).sum()) / math.sqrt(len(x))}),
    ),
    inicio='''
def logit_curve(x, positions, base=10000.0):
    """O logit entre `x` (d,) na posição 0, como query, e `x` girado pela RoPE em cada posição de
    `positions` (P,), como key. Devolve um tensor (P,) float64."""
    return ____
''',
    contexto=_contexto, rtol=1e-6, atol=1e-9,
)


def _media_fechada(d, positions, base):
    import torch

    omega = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    return torch.cos(torch.as_tensor(positions, dtype=torch.float64)[:, None] * omega[None, :]).mean(-1)


# ---------------------------------------------------------------- exercício 4: τ com entropia 0,5 nat
def _linha(ns):
    return como_array(ns["row"]).astype(np.float64)


def _entropia(z, tau, base=math.e):
    w = np.exp((z - z.max()) / tau)
    p = w / w.sum()
    return float(-(p * np.log(p)).sum() / math.log(base))


def _bissecao(f, alvo, lo=0.02, hi=5.0):
    for _ in range(100):
        meio = (lo + hi) / 2
        lo, hi = (meio, hi) if f(meio) < alvo else (lo, meio)
    return (lo + hi) / 2


def _conferir_ex3(valores, ns):
    tau = valores["tau_half"]
    tau = como_array(tau)
    if tau is None or tau.size != 1:
        raise Incorreto("`tau_half` deveria ser um número (um float ou um tensor de um elemento).")
    tau = float(tau.item())
    if not tau > 0:
        raise Incorreto("`tau_half` deveria ser positiva: a temperatura divide os logits.")
    h = _entropia(_linha(ns), tau)
    if abs(h - 0.5) > 1e-4:
        direcao = "alta demais (a distribuição ficou espalhada)" if h > 0.5 else "baixa demais (concentrada)"
        raise Incorreto(f"com τ = {tau:.4f} a entropia é {h:.4f} nat, {direcao}.")


ex4 = Exercicio(
    "cap03_variacoes_modernas.ex4", "a temperatura com entropia 0,5 nat", ("tau_half",),
    dicas=(
        "A entropia de softmax(linha/τ) cresce com τ: perto de 0 para τ pequena, até ln 3 para τ grande.",
        "Bisseção: comece com um intervalo [lo, hi] em que H(lo) < 0,5 < H(hi), olhe o meio e fique com a "
        "metade em que a troca de sinal acontece; 60 passos bastam.",
        "Use `entropy(torch.softmax(row / tau, dim=-1))`, em nats (log natural).",
    ),
    conferir=_conferir_ex3,
    erros_comuns=(
        ErroComum("essa temperatura dá entropia 0,5 em bits (log na base 2); o enunciado pede nats (log natural).",
                  lambda ns: {"tau_half": _bissecao(lambda t: _entropia(_linha(ns), t, base=2), 0.5)}),
        ErroComum("essa é a temperatura com entropia 0,5 se a linha for multiplicada por τ: a temperatura divide "
                  "os logits, softmax(linha/τ).",
                  lambda ns: {"tau_half": 1 / _bissecao(lambda t: _entropia(_linha(ns), t), 0.5)}),
    ),
    inicio="""
tau_half = ____     # a temperatura τ com entropia 0,5 nat
""",
    contexto=_contexto,
)
