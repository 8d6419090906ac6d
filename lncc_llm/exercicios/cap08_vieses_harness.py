"""Exercício conferível do Capítulo 8, avaliação II (o erro-padrão de um placar).

O exercício 1 (o gabarito no contexto do juiz) fica sem verificador: a resposta é uma leitura do juiz em 104
passagens do modelo, e o que se pede é interpretar a tabela, não um número que se confira.
"""
from __future__ import annotations

import math

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap08_vieses_harness"

# A sonda do modelo original (`probe_before`) sai de uma célula que também roda o harness; aqui ela é
# refeita só com `multiple_choice_accuracy` (a mesma conta).
_contexto = celulas_do_notebook(NOTEBOOK, ("f914fedb",), extra="""
import math

from lncc_llm import check, load_decoder
from lncc_llm.benchmarks import mc_items
from lncc_llm.exercicios.contexto import sonda_de_multipla_escolha

model, tokenizer = load_decoder()
items = mc_items()
probe_before = sonda_de_multipla_escolha(model, tokenizer, items)   # = multiple_choice_accuracy, uma vez
""")


# ---------------------------------------------------------------- exercício 2: quantas questões bastam
def _n_por_laco(p, target, *, denominador=1, arredondar=None):
    """O menor n com √(p(1 − p)/(n − denominador)) ≤ target, por laço (ou, com ``arredondar``, pela conta
    fechada arredondada de um jeito errado: os erros comuns)."""
    if arredondar is not None:   # round(x + 1) = round(x) + 1
        return int(arredondar(p * (1 - p) / target ** 2 + denominador))
    n = denominador + 1
    while math.sqrt(p * (1 - p) / (n - denominador)) > target:
        n += 1
    return n


def _entradas_ex2(ns):
    """Acurácias e metas que o notebook nunca mostra (nenhuma com p = 0,5, onde arredondar e arredondar
    para cima coincidem por acaso, e nenhuma em que p(1 − p)/meta² seja um inteiro, onde o arredondamento
    do float decidiria): a conta fechada cai em frações abaixo e acima de 0,5."""
    return [dict(p=p, target=t) for p, t in ((0.3, 0.06), (0.62, 0.03), (0.85, 0.02), (0.45, 0.1), (0.81, 0.04), (0.66, 0.04))]


def _p(ns):
    return float(ns["probe_before"].acc)


def _como_erro(**kw):
    return lambda ns: {"min_questions": lambda p, target: _n_por_laco(p, target, **kw)}


ex2 = Exercicio(
    "cap08_vieses_harness.ex2", "o erro-padrão da sonda e o n para chegar a uma meta", ("se_48", "min_questions"),
    dicas=(
        "A acurácia é `probe_before.acc` e n = `len(items)` = 48; o erro-padrão do harness tem n − 1 no "
        "denominador, como na conferência da seção 8.4.5.",
        "O erro-padrão cai com n. Na função, aumente n num laço até √(p(1 − p)/(n − 1)) ficar ≤ `target`, ou "
        "resolva p(1 − p)/(n − 1) ≤ target² para n.",
        "n é inteiro: arredonde para cima (`math.ceil`), nunca para o mais próximo, e confira que, com uma "
        "questão a menos, o erro-padrão ainda passa da meta. Com p = 0,5 e 0,03 os dois arredondamentos "
        "coincidem por acaso; o verificador usa outras acurácias.",
    ),
    esperado=lambda ns: {"se_48": math.sqrt(_p(ns) * (1 - _p(ns)) / 47), "min_questions": _n_por_laco},
    entradas=_entradas_ex2,
    erros_comuns=(
        ErroComum("o harness divide por n − 1 (o desvio amostral), não por n: com 48 questões, o denominador "
                  "é 47.", lambda ns: {"se_48": math.sqrt(_p(ns) * (1 - _p(ns)) / 48)}, dica=1),
        ErroComum("essa é a variância, p(1 − p)/(n − 1); o erro-padrão é a raiz dela.",
                  lambda ns: {"se_48": _p(ns) * (1 - _p(ns)) / 47},
                  dica="O erro-padrão é `math.sqrt(p * (1 - p) / (n - 1))`: a raiz da variância da média."),
        ErroComum("`min_questions` arredonda para o inteiro mais próximo: com a conta fechada caindo em "
                  "x,3, o n fica uma questão abaixo do necessário. Arredonde para cima.",
                  _como_erro(arredondar=round), dica=3),
        ErroComum("`min_questions` esqueceu o + 1 (ou usou n no denominador, e não n − 1, como o harness): a "
                  "conta fechada dá n − 1, e com esse n o erro-padrão ainda passa da meta.",
                  _como_erro(denominador=0), dica=3),
    ),
    inicio="""
se_48 = ____      # o erro-padrão do harness com as 48 questões (um float)


def min_questions(p, target):
    # o menor número de questões n com erro-padrão √(p(1 − p)/(n − 1)) ≤ target (um int)
    return ____
""",
    contexto=_contexto,
)
