"""Exercícios conferíveis do Capítulo 7, terceira parte (a agenda da taxa de aprendizado)."""
from __future__ import annotations

import math

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap07_sft_na_pratica"

TAXA, AQUECIMENTO, PASSOS = 2e-3, 3, 12


def _fator(passo, aquecimento, total, aquecimento_desde_1=False, sem_aquecimento_no_cosseno=False, linear=False):
    """O fator da agenda num passo (ou o de um dos erros comuns)."""
    if passo < aquecimento:
        return (passo + 1 if aquecimento_desde_1 else passo) / aquecimento
    inicio = 0 if sem_aquecimento_no_cosseno else aquecimento
    progresso = (passo - inicio) / max(1, total - inicio)
    return max(0.0, 1 - progresso) if linear else max(0.0, 0.5 * (1 + math.cos(math.pi * progresso)))


def _entradas(ns):
    """Agendas que o notebook nunca mostra (semente própria): outros picos, aquecimentos e totais, inclusive
    sem aquecimento e com o aquecimento de um passo só; cada caso pede a taxa de um passo."""
    import random

    gen = random.Random(1207)
    configs = [(5e-4, 0, 10), (1e-3, 1, 5), (3e-4, 10, 40), (2e-3, 3, 12)]
    casos = []
    for pico, aquecimento, total in configs:
        passos = sorted({0, max(0, aquecimento - 1), aquecimento, total - 1, *gen.sample(range(total), 3)})
        casos += [dict(step=p, peak=pico, warmup=aquecimento, total=total) for p in passos]
    return casos


def _do_transformers(step, peak, warmup, total):
    """A taxa no passo ``step``, pela agenda do próprio ``transformers`` (outro caminho que não a fórmula)."""
    import torch
    from transformers import get_cosine_schedule_with_warmup

    otimizador = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=peak)
    agenda = get_cosine_schedule_with_warmup(otimizador, warmup, total)
    for _ in range(step):
        otimizador.step()
        agenda.step()
    return otimizador.param_groups[0]["lr"]


def _como_erro(**kw):
    return lambda ns: {"lr_at": lambda step, peak, warmup, total: peak * _fator(step, warmup, total, **kw)}


ex1 = Exercicio(
    "cap07_sft_na_pratica.ex1", "a taxa de cada passo, com aquecimento e cosseno", ("lr_at",),
    dicas=(
        "Nos passos de aquecimento (0, 1, …, warmup − 1), a taxa sobe em linha reta de zero: step/warmup da "
        "taxa máxima. O primeiro passo, o 0, usa taxa zero.",
        "Depois do aquecimento, o cosseno vai de 1 a 0 ao longo dos passos que sobram: o progresso é "
        "(step − warmup)/(total − warmup), e o fator é ½(1 + cos(π · progresso)).",
        "Use os argumentos da função, não as constantes da lição (`T`, `WARMUP`, `PEAK`): o verificador chama "
        "`lr_at` com outras agendas, inclusive sem aquecimento (warmup = 0).",
    ),
    esperado=lambda ns: {"lr_at": _do_transformers},
    entradas=_entradas,
    rtol=1e-6, atol=1e-12,           # a cauda da agenda vale ~1e-7: uma tolerância absoluta de 1e-6 aceitaria zero
    erros_comuns=(
        ErroComum("o aquecimento começou em 1/warmup: no `transformers`, o passo 0 usa o fator 0, e o primeiro "
                  "passo do treino não mexe em nada.", _como_erro(aquecimento_desde_1=True),
                  dica="No aquecimento o fator é `step / warmup`, não `(step + 1) / warmup`: o passo 0 tem taxa "
                       "zero."),
        ErroComum("o cosseno começou no passo 0: ele só começa depois do aquecimento, com progresso "
                  "(step − warmup)/(total − warmup).", _como_erro(sem_aquecimento_no_cosseno=True),
                  dica="Conte o progresso do cosseno a partir do fim do aquecimento: `(step - warmup) / "
                       "(total - warmup)`."),
        ErroComum("esse é o decaimento linear (`lr_scheduler_type=\"linear\"`); pede-se o cosseno, "
                  "½(1 + cos(π · progresso)).", _como_erro(linear=True),
                  dica="Troque `1 - progress` por `0.5 * (1 + math.cos(math.pi * progress))`."),
    ),
    atalhos=(
        ErroComum("`lr_at` devolve as taxas da agenda da lição (12 passos, aquecimento 3, pico 2e-3), seja qual "
                  "for a agenda pedida: use os argumentos `peak`, `warmup` e `total`.",
                  lambda ns: {"lr_at": lambda step, peak, warmup, total: (
                      TAXA * _fator(step, AQUECIMENTO, PASSOS) if step < PASSOS else -1.0)}),
    ),
    proibidas=("transformers.get_cosine_schedule_with_warmup",
               "transformers.optimization.get_cosine_schedule_with_warmup",
               "transformers.optimization._get_cosine_schedule_with_warmup_lr_lambda",
               "torch.optim.lr_scheduler.LambdaLR", "torch.optim.lr_scheduler.CosineAnnealingLR"),
    inicio="""
def lr_at(step, peak, warmup, total):
    # a taxa de aprendizado no passo `step` (0, 1, …, total − 1) da agenda com aquecimento linear de `warmup`
    # passos até `peak` e cosseno até zero no passo `total`; devolve um float
    return ____
""",
    contexto=celulas_do_notebook(NOTEBOOK, ("7c0a0001",)),
)
