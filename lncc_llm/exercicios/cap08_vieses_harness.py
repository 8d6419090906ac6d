"""Exercício conferível do Capítulo 8, avaliação II (o erro-padrão de um placar).

O exercício 1 (o gabarito no contexto do juiz) fica sem verificador: a resposta é uma leitura do juiz em 104
passagens do modelo, e o que se pede é interpretar a tabela, não um número que se confira.
"""
from __future__ import annotations

import math

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio

NOTEBOOK = "cap08_vieses_harness"

# A sonda do modelo original (`probe_before`) sai de uma célula que também roda o harness; aqui ela é
# refeita só com `multiple_choice_accuracy` (a mesma conta).
_contexto = celulas_do_notebook(NOTEBOOK, ("f914fedb",), extra="""
import math

from lncc_llm import check, load_decoder
from lncc_llm.benchmarks import mc_items, multiple_choice_accuracy

model, tokenizer = load_decoder()
items = mc_items()
probe_before = multiple_choice_accuracy(model, tokenizer, items)
""")


# ---------------------------------------------------------------- exercício 2: quantas questões bastam
META = 0.03


def _n_real(p):
    """O n da conta contínua, p(1 − p)/0,03² + 1, sem arredondar (um número de questões fracionário)."""
    return p * (1 - p) / 0.03 ** 2 + 1


def _n_minimo(p):
    """O menor n com √(p(1 − p)/(n − 1)) ≤ META, em forma fechada: n − 1 ≥ p(1 − p)/META²."""
    return max(2, math.ceil(1 + p * (1 - p) / META**2))


def _p(ns):
    return float(ns["probe_before"].acc)


ex2 = Exercicio(
    "cap08_vieses_harness.ex2", "o erro-padrão da sonda e o n para chegar a 0,03", ("se_48", "n_needed"),
    dicas=(
        "A acurácia é `probe_before.acc` e n = `len(items)` = 48; o erro-padrão do harness tem n − 1 no "
        "denominador, como na conferência da seção 8.4.5.",
        "O erro-padrão cai com n. Aumente n num laço até √(p(1 − p)/(n − 1)) ficar ≤ 0,03, ou resolva "
        "p(1 − p)/(n − 1) ≤ 0,03² para n.",
        "n é inteiro: arredonde para cima e confira que, com uma questão a menos, o erro-padrão ainda passa "
        "de 0,03.",
    ),
    esperado=lambda ns: {"se_48": math.sqrt(_p(ns) * (1 - _p(ns)) / 47), "n_needed": _n_minimo(_p(ns))},
    erros_comuns=(
        ErroComum("o harness divide por n − 1 (o desvio amostral), não por n: com 48 questões, o denominador "
                  "é 47.", lambda ns: {"se_48": math.sqrt(_p(ns) * (1 - _p(ns)) / 48)}),
        ErroComum("essa é a variância, p(1 − p)/(n − 1); o erro-padrão é a raiz dela.",
                  lambda ns: {"se_48": _p(ns) * (1 - _p(ns)) / 47}),
        ErroComum("com esse n o erro-padrão ainda passa um pouco de 0,03: a conta dá n − 1, e faltou somar 1 "
                  "(ou o arredondamento foi para baixo).",
                  lambda ns: {"n_needed": _n_minimo(_p(ns)) - 1}),
        ErroComum("n é um número de questões: arredonde para cima, para um inteiro.",
                  lambda ns: {"n_needed": _n_real(_p(ns))}),
    ),
    inicio="""
se_48 = ____      # o erro-padrão do harness com as 48 questões (um float)
n_needed = ____   # o menor número de questões com erro-padrão ≤ 0,03 (um int)
""",
    contexto=_contexto,
)
