"""Exercícios conferíveis do Capítulo 7, terceira parte (a agenda da taxa de aprendizado)."""
from __future__ import annotations

import math

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio

NOTEBOOK = "cap07_sft_na_pratica"

TAXA, AQUECIMENTO, PASSOS = 2e-3, 3, 12


def _agenda(aquecimento_desde_1: bool = False, sem_aquecimento_no_cosseno: bool = False,
            linear: bool = False) -> list[float]:
    """A taxa usada em cada passo, como o ``get_cosine_schedule_with_warmup`` do ``transformers`` a calcula
    (ou com um dos erros comuns)."""
    taxas = []
    for passo in range(PASSOS):
        if passo < AQUECIMENTO:
            fator = (passo + 1 if aquecimento_desde_1 else passo) / AQUECIMENTO
        else:
            inicio = 0 if sem_aquecimento_no_cosseno else AQUECIMENTO
            progresso = (passo - inicio) / (PASSOS - inicio)
            fator = 1 - progresso if linear else 0.5 * (1 + math.cos(math.pi * progresso))
        taxas.append(TAXA * fator)
    return taxas


def _esperado(ns) -> dict:
    """A agenda do próprio ``transformers``, por outro caminho que não a fórmula do leitor."""
    import torch
    from transformers import get_cosine_schedule_with_warmup

    otimizador = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=TAXA)
    agenda = get_cosine_schedule_with_warmup(otimizador, AQUECIMENTO, PASSOS)
    taxas = []
    for _ in range(PASSOS):
        taxas.append(otimizador.param_groups[0]["lr"])
        otimizador.step()
        agenda.step()
    return {"rates": taxas}


ex1 = Exercicio(
    "cap07_sft_na_pratica.ex1", "a taxa de cada passo, com aquecimento e cosseno", ("rates",),
    dicas=(
        "Nos passos de aquecimento (0, 1 e 2), a taxa sobe em linha reta de zero: passo/3 da taxa máxima. O "
        "primeiro passo, o 0, usa taxa zero.",
        "Depois do aquecimento, o cosseno vai de 1 a 0 ao longo dos passos que sobram: o progresso é "
        "(passo − 3)/(12 − 3), e o fator é ½(1 + cos(π · progresso)).",
        "Monte a lista com `[2e-3 * fator(p) for p in range(12)]` e compare com a célula da seção 7.12.4, que "
        "imprime a taxa que o treinador calcula para cada passo.",
    ),
    esperado=_esperado,
    erros_comuns=(
        ErroComum("o aquecimento começou em 1/3: no `transformers`, o passo 0 usa o fator 0/3, e o primeiro passo "
                  "do treino não mexe em nada.", lambda ns: {"rates": _agenda(aquecimento_desde_1=True)}),
        ErroComum("o cosseno começou no passo 0: ele só começa depois do aquecimento, com progresso "
                  "(passo − 3)/(12 − 3).", lambda ns: {"rates": _agenda(sem_aquecimento_no_cosseno=True)}),
        ErroComum("esse é o decaimento linear (`lr_scheduler_type=\"linear\"`); pede-se o cosseno, "
                  "½(1 + cos(π · progresso)).", lambda ns: {"rates": _agenda(linear=True)}),
    ),
    inicio="""
rates = ____        # a taxa usada em cada um dos 12 passos (uma lista de 12 números)
""",
    contexto=celulas_do_notebook(NOTEBOOK, ("7c0a0001",)),
)
