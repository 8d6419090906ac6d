"""Exercícios conferíveis do Capítulo 3, primeira parte (RoPE e temperatura); os do MoE e do KV cache do
Mixtral estão em ``cap03_moe_bloco``."""
from __future__ import annotations

import math

import numpy as np

from .comparar import Incorreto, como_array
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap03_variacoes_modernas"
_contexto = celulas_do_notebook(NOTEBOOK, (
    "a854e5f7", "f968420a", "c613b2c1", "6dc1ff2a", "e45a4aa6", "ac0e68bb"))
READS = [1.0, -1.0, 0.0, 0.0]


# ---------------------------------------------------------------- exercício 1: reads trocado
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


ex1 = Exercicio(
    "cap03_variacoes_modernas.ex1", "reads = [1, −1, 0, 0], logits sem e com RoPE",
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


# ---------------------------------------------------------------- exercício 2: a curva do logit
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


ex2 = Exercicio(
    "cap03_variacoes_modernas.ex2", "o logit de um vetor contra ele mesmo, girado à distância p",
    ("logit_curve",),
    dicas=(
        "A query é `x` na posição 0 (o giro de ângulo zero não muda nada); a key é `x` girado pela posição p. "
        "Para todas as posições de uma vez: `rope_rotate(x[None].expand(len(positions), -1), positions, base)`.",
        "O logit de cada p é o produto interno da query com a key girada, dividido por √d: "
        "`(x * keys).sum(-1) / math.sqrt(len(x))`.",
        "Com `x = [1, 0, 1, 0]` e `base = 10000`, a sua curva tem de coincidir com ½(cos p + cos 0,01p); com um "
        "vetor qualquer, a fórmula fechada da seção 3.6 (a média sobre vetores) já não vale, e o verificador "
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
        ErroComum("essa é a fórmula fechada da seção 3.6, a média sobre muitos vetores; ela só coincide com "
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


# ---------------------------------------------------------------- exercício 3: τ com entropia 0,5 nat
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


ex3 = Exercicio(
    "cap03_variacoes_modernas.ex3", "a temperatura com entropia 0,5 nat", ("tau_half",),
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
