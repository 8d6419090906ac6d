"""Exercícios conferíveis do Capítulo 9 (o desquantizador do Q4_0 e o limiar de abstenção)."""
from __future__ import annotations

import math

import numpy as np

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio

NOTEBOOK = "cap09_tendencias"


# ---------------------------------------------------------------- exercício 1: o Q4_0
def _entradas_ex1(ns):
    """Dois tensores 4 × 64 quantizados em Q4_0 pelo gguf-py: pesos ~ N(0, 1) e os mesmos, positivos."""
    from gguf import GGMLQuantizationType, quants

    pesos = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32)
    return [(quants.quantize(w, GGMLQuantizationType.Q4_0), w.shape) for w in (pesos, np.abs(pesos))]


def _do_gguf(raw, shape):
    from gguf import GGMLQuantizationType, quants

    return quants.dequantize(raw, GGMLQuantizationType.Q4_0).reshape(shape)


def _q4_0_errado(*, menos_8=True, intercalado=False, uint8=False):
    def desquantizar(raw, shape):
        blocos = np.ascontiguousarray(raw).view(np.uint8).reshape(-1, 18)
        d = blocos[:, :2].copy().view(np.float16).astype(np.float32)
        b = blocos[:, 2:]
        if intercalado:       # byte j → pesos 2j e 2j + 1
            q = np.stack([b & 0x0F, b >> 4], axis=-1).reshape(len(blocos), 32)
        else:                 # byte j → pesos j e j + 16
            q = np.concatenate([b & 0x0F, b >> 4], axis=1)
        if uint8:             # q − 8 em uint8 dá a volta: 3 − 8 vira 251
            return (d * (q - np.uint8(8)).astype(np.float32)).reshape(shape)
        q = q.astype(np.float32)
        return (d * (q - 8 if menos_8 else q)).reshape(shape)

    return desquantizar


ex1 = Exercicio(
    "cap09.ex1", "o desquantizador do Q4_0 e os bits por peso", ("dequantize_q4_0", "bits_q4_0"),
    dicas=(
        "Cada bloco tem 18 bytes: 2 da escala d (float16) e 16 com os 32 inteiros de 4 bits. Comece com "
        "`np.ascontiguousarray(raw).view(np.uint8).reshape(-1, 18)`.",
        "Siga o `dequantize_q4_1` da seção 9.1.3: os 4 bits de baixo do byte j são o peso j e os de cima o "
        "peso j + 16 (`np.concatenate([packed & 0x0F, packed >> 4], axis=1).astype(np.float32)`); o peso é "
        "d·(q − 8).",
        "Bits por peso: some todos os bits do bloco, os da escala inclusive, e divida pelos 32 pesos.",
    ),
    esperado=lambda ns: {"dequantize_q4_0": _do_gguf, "bits_q4_0": 8 * (2 + 32 // 2) / 32},
    entradas=_entradas_ex1,
    erros_comuns=(
        ErroComum("faltou subtrair 8: no Q4_0 os 16 níveis vão de −8 a 7, centrados no zero (peso = d·(q − 8)).",
                  lambda ns: {"dequantize_q4_0": _q4_0_errado(menos_8=False)}),
        ErroComum("os pesos saíram na ordem errada: os 4 bits de baixo do byte j são o peso j e os de cima o "
                  "peso j + 16, não os pesos 2j e 2j + 1.",
                  lambda ns: {"dequantize_q4_0": _q4_0_errado(intercalado=True)}),
        ErroComum("os inteiros q ainda são `uint8`, e q − 8 dá a volta (3 − 8 vira 251): converta q com "
                  "`.astype(np.float32)` antes de subtrair.",
                  lambda ns: {"dequantize_q4_0": _q4_0_errado(uint8=True)}),
        ErroComum("4 bits por peso contam só os inteiros: a escala d, 16 bits por bloco de 32 pesos, também "
                  "ocupa espaço.", lambda ns: {"bits_q4_0": 4.0}),
    ),
    inicio="""
def dequantize_q4_0(raw, shape):
    return ____     # os pesos float32, na forma `shape`, lidos dos blocos de 18 bytes de `raw`


bits_q4_0 = ____    # bits por peso do Q4_0, contando a escala (um número)
""",
    contexto=celulas_do_notebook(NOTEBOOK, ("e6fac4f6", "27984944", "69ef382d", "b5c3c38c")),
)


# ---------------------------------------------------------------- exercício 2: um limiar para publicar
META = 0.75


def _confiancas(ns):
    """Confiança (a maior probabilidade do softmax sobre as log p das alternativas) e acerto de cada questão."""
    confianca, acerto = [], []
    for ll, certa in zip(ns["probe"].loglikelihoods, ns["probe"].answers):
        v = np.asarray(ll, dtype=np.float64)
        confianca.append(float(1.0 / np.exp(v - v.max()).sum()))
        acerto.append(int(np.argmax(v)) == certa)
    return confianca, acerto


def _limiares(confianca, acerto):
    """(limiar, respondidas, acurácia) para cada limiar possível, do menor ao maior."""
    pontos = []
    for t in sorted(set(confianca)):
        respondidas = [a for c, a in zip(confianca, acerto) if c >= t]
        pontos.append((t, len(respondidas), sum(respondidas) / len(respondidas)))
    return pontos


def _escolhas(ns):
    confianca, acerto = _confiancas(ns)
    validos = [(t, n) for t, n, a in _limiares(confianca, acerto) if a >= META]
    pares = [i for i in range(len(confianca)) if i % 2 == 0]
    impares = [i for i in range(len(confianca)) if i % 2 == 1]
    nos_pares = min((t for t, _, a in _limiares([confianca[i] for i in pares], [acerto[i] for i in pares])
                     if a >= META), default=None)

    def acuracia(indices):
        certas = [acerto[i] for i in indices if nos_pares is not None and confianca[i] >= nos_pares]
        return sum(certas) / len(certas) if certas else math.nan

    return {"menor": validos[0], "maior": validos[-1], "total": len(confianca),
            "acc_impares": acuracia(impares), "acc_pares": acuracia(pares)}


def _esperado_ex2(ns):
    e = _escolhas(ns)
    return {"threshold": e["menor"][0], "answered": e["menor"][1], "acc_odd": e["acc_impares"]}


ex2 = Exercicio(
    "cap09.ex2", "o menor limiar com acurácia 0,75 e a mesma promessa fora da amostra", (
        "threshold", "answered", "acc_odd"),
    dicas=(
        "Cada ponto de `curve` é (limiar, cobertura, acurácia). Fique com os pontos de acurácia ≥ 0,75 e, "
        "entre eles, com o de menor limiar: é o que responde mais questões.",
        "Respondidas = cobertura × 48, arredondada. Para a divisão, use `probe.confidences()` e "
        "`probe.correct()` e monte a curva só com as questões de índice par, com `abstention_curve`.",
        "Com o limiar escolhido nas pares, responda nas ímpares só as questões com confiança ≥ limiar e calcule "
        "a fração certa entre elas.",
    ),
    esperado=_esperado_ex2,
    erros_comuns=(
        ErroComum("esse é o maior limiar com acurácia ≥ 0,75, que responde quase nada; pede-se o menor, o de "
                  "maior cobertura que ainda cumpre a meta.", lambda ns: {"threshold": _escolhas(ns)["maior"][0]}),
        ErroComum("`answered` é o número de questões respondidas, não a fração (a cobertura): multiplique por "
                  "48.", lambda ns: {"answered": _escolhas(ns)["menor"][1] / _escolhas(ns)["total"]}),
        ErroComum("essa é a acurácia nas questões pares, as mesmas em que o limiar foi escolhido; a promessa "
                  "se mede nas ímpares.", lambda ns: {"acc_odd": _escolhas(ns)["acc_pares"]}),
    ),
    inicio="""
threshold = ____   # o menor limiar com acurácia ≥ 0,75 nas 48 questões (um float)
answered = ____    # quantas questões esse limiar responde (um int)
acc_odd = ____     # acurácia nas questões de índice ímpar (items[1], items[3], …), limiar das de índice par (um float)
""",
    # a sonda do modelo base sai de uma célula que também treina um adaptador (seção 9.2.1); aqui ela é
    # refeita só com o modelo base, a mesma `multiple_choice_accuracy`
    contexto=celulas_do_notebook(NOTEBOOK, ("e6fac4f6", "27984944"), extra="""
from lncc_llm.evaluation import abstention_curve, mc_items, multiple_choice_accuracy

items = mc_items()
probe = multiple_choice_accuracy(model, tokenizer, items)
curve = abstention_curve(probe.confidences(), probe.correct())
"""),
)
