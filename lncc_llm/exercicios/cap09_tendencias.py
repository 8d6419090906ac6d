"""Exercícios conferíveis do Capítulo 9 (o desquantizador do Q4_0 e o limiar de abstenção)."""
from __future__ import annotations

import math

import numpy as np

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

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
    "cap09_tendencias.ex1", "o desquantizador do Q4_0 e os bits por peso", ("dequantize_q4_0", "bits_q4_0"),
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
    proibidas=("gguf.quants.dequantize", "gguf.quants.Q4_0.dequantize", "gguf.quants.Q4_0.dequantize_blocks",
               "gguf.quants.Q4_0.dequantize_rows"),
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


def _escolher(conf, right, target=META, maior=False, estrito=False):
    """O menor (ou maior) limiar da curva de abstenção do ``lncc_llm`` com acurácia ≥ ``target``; ``None``
    se nenhum chega lá. ``estrito`` responde só com confiança > limiar (um erro comum)."""
    pares = list(zip(conf, right))
    if estrito:
        validos = [t for t in sorted(set(conf)) if any(c > t for c, _ in pares)
                   and sum(ok for c, ok in pares if c > t) / sum(1 for c, _ in pares if c > t) >= target]
    else:
        validos = [t for t in sorted(set(conf))
                   if sum(ok for c, ok in pares if c >= t) / sum(1 for c, _ in pares if c >= t) >= target]
    if not validos:
        return None
    return max(validos) if maior else min(validos)


def _pela_curva(conf, right, target=META):
    """A referência: o menor limiar da ``abstention_curve`` do ``lncc_llm`` com acurácia ≥ ``target``."""
    from ..stats import abstention_curve

    return min((t for t, _, a in abstention_curve(conf, right) if a >= target), default=None)


def _fora_da_amostra(conf, right, pick, test, target=META, ignorar_pick=False, medir_em_pick=False):
    escolha = list(range(len(conf))) if ignorar_pick else list(pick)
    limiar = _escolher([conf[i] for i in escolha], [right[i] for i in escolha], target)
    medida = pick if medir_em_pick else test
    mantidas = [right[i] for i in medida if limiar is not None and conf[i] >= limiar]
    return sum(mantidas) / len(mantidas) if mantidas else math.nan


def _sorteio(semente, n=40):
    import random

    gen = random.Random(semente)
    conf = [round(gen.uniform(0.3, 1.0), 2) for _ in range(n)]          # duas casas: há empates
    right = [gen.random() < c for c in conf]
    ordem = gen.sample(range(n), n)
    return conf, right, sorted(ordem[: n // 2]), sorted(ordem[n // 2:])


def _entradas_ex2_escolha(ns):
    casos = []
    for semente, alvo in ((11, 0.75), (12, 0.8), (13, 0.7)):
        conf, right, _, _ = _sorteio(semente)
        casos.append(dict(conf=conf, right=right, target=alvo))
    casos.append(dict(conf=[0.9, 0.8, 0.8, 0.4], right=[False, True, False, True], target=0.75))   # nenhum chega
    casos.append(dict(conf=[0.6], right=[True], target=0.75))                                      # um item só
    return casos


def _entradas_ex2_fora(ns):
    casos = []
    for semente, alvo in ((21, 0.75), (22, 0.8), (23, 0.75)):
        conf, right, pick, test = _sorteio(semente)
        casos.append(dict(conf=conf, right=right, pick=pick, test=test, target=alvo))
    return casos


def _entradas_ex2(ns):
    return {"choose_threshold": _entradas_ex2_escolha(ns), "held_out_accuracy": _entradas_ex2_fora(ns)}


ex2 = Exercicio(
    "cap09_tendencias.ex2", "o menor limiar com a meta e a mesma promessa fora da amostra",
    ("choose_threshold", "held_out_accuracy"),
    dicas=(
        "`choose_threshold`: percorra os limiares possíveis (as próprias confianças, sem repetição); para cada "
        "um, responda só as questões com confiança ≥ limiar e calcule a fração certa entre elas. Fique com o "
        "menor limiar cuja acurácia é ≥ `target`, o que responde mais questões; se nenhum chega, devolva None.",
        "`held_out_accuracy`: escolha o limiar com `choose_threshold` usando só as questões de `pick`; depois, "
        "nas de `test`, responda as que têm confiança ≥ limiar e devolva a fração certa (NaN se nenhuma).",
        "Na sonda, `probe.confidences()` e `probe.correct()` dão as listas; as questões de índice par são "
        "`range(0, 48, 2)` e as ímpares, `range(1, 48, 2)`. O verificador chama as duas funções com outras "
        "listas, em que o limiar de metade das questões e o de todas são diferentes.",
    ),
    esperado=lambda ns: {"choose_threshold": _pela_curva, "held_out_accuracy": _fora_da_amostra},
    entradas=_entradas_ex2,
    erros_comuns=(
        ErroComum("`choose_threshold` devolve o maior limiar com acurácia ≥ target, que responde quase nada; "
                  "pede-se o menor, o de maior cobertura que ainda cumpre a meta.",
                  lambda ns: {"choose_threshold": lambda conf, right, target=META: _escolher(conf, right, target,
                                                                                              maior=True)},
                  dica="Entre os limiares que cumprem a meta, fique com o `min`: quanto menor o limiar, mais "
                       "questões ele responde."),
        ErroComum("`choose_threshold` responde só as questões com confiança > limiar; a regra é ≥ (a questão "
                  "com a própria confiança do limiar é respondida).",
                  lambda ns: {"choose_threshold": lambda conf, right, target=META: _escolher(conf, right, target,
                                                                                              estrito=True)},
                  dica="Troque `>` por `>=` ao separar as questões respondidas."),
        ErroComum("`held_out_accuracy` mede a acurácia nas questões de `pick`, as mesmas em que o limiar foi "
                  "escolhido; a promessa se mede nas de `test`.",
                  lambda ns: {"held_out_accuracy": lambda conf, right, pick, test, target=META: _fora_da_amostra(
                      conf, right, pick, test, target, medir_em_pick=True)},
                  dica="Depois de escolher o limiar em `pick`, percorra `test` para medir."),
    ),
    atalhos=(
        ErroComum("`held_out_accuracy` escolheu o limiar com todas as questões, não só as de `pick`: a escolha "
                  "também tem de ficar de fora das questões em que a promessa é medida.",
                  lambda ns: {"held_out_accuracy": lambda conf, right, pick, test, target=META: _fora_da_amostra(
                      conf, right, pick, test, target, ignorar_pick=True)},
                  dica="Monte as listas só com os índices de `pick` (`[conf[i] for i in pick]`) antes de chamar "
                       "`choose_threshold`."),
    ),
    proibidas=("lncc_llm.stats.abstention_curve", "lncc_llm.evaluation.abstention_curve"),
    inicio="""
def choose_threshold(conf, right, target=0.75):
    # o menor limiar (uma das confianças) com acurácia ≥ target entre as questões de confiança ≥ limiar;
    # None se nenhum limiar chega lá
    return ____


def held_out_accuracy(conf, right, pick, test, target=0.75):
    # o limiar escolhido só com as questões de índices `pick`; a acurácia nas de `test` com confiança ≥ limiar
    # (NaN se nenhuma é respondida)
    return ____
""",
    # a sonda do modelo base sai de uma célula que também treina um adaptador (seção 9.2.1); aqui ela é
    # refeita só com o modelo base, a mesma `multiple_choice_accuracy`
    contexto=celulas_do_notebook(NOTEBOOK, ("e6fac4f6", "27984944"), extra="""
from lncc_llm.evaluation import abstention_curve, mc_items
from lncc_llm.exercicios.contexto import sonda_de_multipla_escolha

items = mc_items()
probe = sonda_de_multipla_escolha(model, tokenizer, items)   # = multiple_choice_accuracy, uma vez
curve = abstention_curve(probe.confidences(), probe.correct())
"""),
)
