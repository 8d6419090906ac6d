"""Exercícios conferíveis do Capítulo 3, primeira parte (RoPE e temperatura); os do MoE e do KV cache do
Mixtral estão em ``cap03_moe_bloco``."""
from __future__ import annotations

import math

import numpy as np

from .comparar import Incorreto, como_array
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio

NOTEBOOK = "cap03_variacoes_modernas"
_contexto = celulas_do_notebook(NOTEBOOK, (
    "a854e5f7", "f968420a", "c613b2c1", "6dc1ff2a", "e45a4aa6", "ac0e68bb"))
READS = [1.0, -1.0, 0.0, 0.0]


# ---------------------------------------------------------------- exercício 1: reads trocado
def _x_novo(ns):
    x = ns["X"].clone()
    x[2] = x.new_tensor(READS)
    return x


def _logits_ex1(ns, girar_k=True, escala=True, trocar=True):
    from ..rope import apply_rope, attention_logits

    x = _x_novo(ns) if trocar else ns["X"]
    pos = ns["positions"]
    q = apply_rope(x, pos, layout="interleaved")
    k = q if girar_k else x
    sem = attention_logits(x, x)
    com = attention_logits(q, k)
    if not escala:
        sem, com = sem * 2, com * 2
    return {"L_ex_plain": sem, "L_ex_rope": com}


ex1 = Exercicio(
    "cap03.ex1", "reads = [1, −1, 0, 0], logits sem e com RoPE", ("L_ex_plain", "L_ex_rope"),
    dicas=(
        "Copie `X` com `X.clone()` e troque só a linha 2 (a de `reads`); as outras continuam as mesmas.",
        "Os logits sem RoPE são `logits(X_ex, X_ex)`; com RoPE, gire as duas cópias com "
        "`rope_rotate(X_ex, positions)` antes: queries e keys giram, cada uma pela sua posição.",
        "A diagonal não muda com a RoPE: se a sua mudou, você girou só um dos lados.",
    ),
    esperado=_logits_ex1,
    erros_comuns=(
        ErroComum("com RoPE, só as queries giraram: a key também gira, pela sua posição (a diagonal teria "
                  "de ficar igual à de sem RoPE).", lambda ns: {"L_ex_rope": _logits_ex1(ns, girar_k=False)["L_ex_rope"]}),
        ErroComum("faltou dividir por √d = 2: os logits da seção 3.5 são Q Kᵀ/√d.",
                  lambda ns: _logits_ex1(ns, escala=False)),
        ErroComum("estes são os logits do exemplo mínimo: troque antes a linha de `reads` por [1, −1, 0, 0].",
                  lambda ns: _logits_ex1(ns, trocar=False)),
    ),
    inicio="""
X_ex = ____         # X com a linha de reads trocada por [1, -1, 0, 0]
L_ex_plain = ____   # os logits 3 × 3 sem RoPE
L_ex_rope = ____    # os logits 3 × 3 com RoPE
""",
    contexto=_contexto, rtol=1e-5, atol=1e-6,
)


# ---------------------------------------------------------------- exercício 2: a curva em d = 4
def _curva(escala=2.0):
    p = np.arange(61, dtype=np.float64)
    return (np.cos(p) + np.cos(0.01 * p)) / escala


ex2 = Exercicio(
    "cap03.ex2", "o logit de teddy contra ele mesmo, p = 0…60", ("curve_d4",),
    dicas=(
        "Para cada p de 0 a 60, gire a key `X[0]` pela posição p (a query fica na posição 0, sem giro) e "
        "calcule `logits(query, key)`.",
        "`rope_rotate` recebe uma matriz e um vetor de posições: `rope_rotate(x[None], torch.tensor([p]))`.",
        "Junte os 61 logits num tensor só, com `torch.stack` ou `torch.tensor([...])`.",
    ),
    esperado=lambda ns: {"curve_d4": _curva()},
    erros_comuns=(
        ErroComum("faltou dividir por √d = 2: o pico em p = 0 deve ser ‖x‖²/2 = 1.",
                  lambda ns: {"curve_d4": _curva(escala=1.0)}),
    ),
    inicio="""
curve_d4 = ____    # os 61 logits, p = 0, 1, ..., 60 (um tensor ou uma lista)
""",
    contexto=_contexto, rtol=1e-5, atol=1e-6,
)


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
    "cap03.ex3", "a temperatura com entropia 0,5 nat", ("tau_half",),
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
