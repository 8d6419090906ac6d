"""Exercícios conferíveis do Capítulo 8, segunda parte (o limiar de quase-duplicatas e o erro-padrão de um
placar).

O exercício 1 (o gabarito no contexto do juiz) fica sem verificador: a resposta é uma leitura do juiz em 104
passagens do modelo, e o que se pede é interpretar a tabela, não um número que se confira.
"""
from __future__ import annotations

import math

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio

NOTEBOOK = "cap08_avaliacao"

# A sonda antes do vazamento (`probe_before`) sai de uma célula que treina o modelo contaminado; aqui ela é
# refeita com o modelo original, sem o treino (é a mesma conta de `multiple_choice_accuracy`).
_contexto = celulas_do_notebook(NOTEBOOK, ("f914feda", "83e730d2", "e0112e2d", "3e892988"), extra="""
import math

from lncc_llm.evaluation import multiple_choice_accuracy

probe_before = multiple_choice_accuracy(model, tokenizer, items)
""")

PARAFRASES = ("Why does warm ocean water feed hurricanes?", "Where do cyclones get their strength?")


# ---------------------------------------------------------------- exercício 2: as duas paráfrases
def _matriz(ns, *, com_avaliacao=True):
    """Cosseno entre os vetores TF-IDF (n-gramas de 3 a 5 caracteres) de cada texto de avaliação, com as
    paráfrases no fim, e os textos de treino; o IDF é ajustado em todos os textos juntos."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    treino = list(ns["train_texts"])
    avaliacao = [t for t in ns["eval_texts"] if t not in PARAFRASES] if com_avaliacao else []
    vetores = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5)).fit_transform(
        treino + avaliacao + list(PARAFRASES)).toarray()
    # as linhas do TF-IDF já têm norma 1: o produto escalar é o cosseno
    return vetores[len(treino):] @ vetores[:len(treino)].T


def _das_parafrases(ns, **kw):
    return _matriz(ns, **kw)[-len(PARAFRASES):]


ex2 = Exercicio(
    "cap08_avaliacao.ex2", "a similaridade máxima de duas paráfrases com o treino",
    ("best_paraphrases", "paraphrases"),
    dicas=(
        "Junte as duas paráfrases ao fim de `eval_texts`, numa lista nova, e recalcule a matriz com "
        "`cross_similarities(train_texts, ...)`.",
        "As paráfrases são as duas últimas linhas da matriz. A similaridade que conta é a do texto de treino "
        "mais parecido: o máximo de cada linha.",
        "O IDF é ajustado em todos os textos juntos: os 8 de avaliação precisam entrar também, senão os "
        "números mudam um pouco. Depois, compare com o limiar 0,3 e com `others.max()`.",
    ),
    esperado=lambda ns: {"best_paraphrases": _das_parafrases(ns).max(axis=1), "paraphrases": list(PARAFRASES)},
    erros_comuns=(
        ErroComum("o IDF foi ajustado sem os 8 textos de avaliação: acrescente as paráfrases a `eval_texts`, "
                  "porque o IDF (e a similaridade) depende de todos os textos comparados.",
                  lambda ns: {"best_paraphrases": _das_parafrases(ns, com_avaliacao=False).max(axis=1)}),
        ErroComum("essa é a similaridade média com o treino; a que acusa uma quase-duplicata é a do texto de "
                  "treino mais parecido, o máximo da linha.",
                  lambda ns: {"best_paraphrases": _das_parafrases(ns).mean(axis=1)}),
        ErroComum("essas são as linhas dos dois primeiros textos de avaliação; as paráfrases entram no fim da "
                  "lista, e as linhas delas são as duas últimas.",
                  lambda ns: {"best_paraphrases": _matriz(ns)[:2].max(axis=1)}),
    ),
    inicio="""
paraphrases = ____        # as duas paráfrases do enunciado (lista de str)
best_paraphrases = ____   # a maior similaridade de cada paráfrase com um texto de treino (2 números, na ordem do enunciado)
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 3: quantas questões bastam
META = 0.03


def _n_real(p):
    """O n da conta contínua, p(1 − p)/0,03² + 1, sem arredondar (um número de questões fracionário)."""
    return p * (1 - p) / 0.03 ** 2 + 1


def _n_minimo(p):
    """O menor n com √(p(1 − p)/(n − 1)) ≤ META, em forma fechada: n − 1 ≥ p(1 − p)/META²."""
    return max(2, math.ceil(1 + p * (1 - p) / META**2))


def _p(ns):
    return float(ns["probe_before"].acc)


ex3 = Exercicio(
    "cap08_avaliacao.ex3", "o erro-padrão da sonda e o n para chegar a 0,03", ("se_48", "n_needed"),
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
