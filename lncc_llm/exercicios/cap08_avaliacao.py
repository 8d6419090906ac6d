"""Exercício conferível do Capítulo 8, avaliação I (o limiar de quase-duplicatas)."""
from __future__ import annotations

from .comparar import Incorreto
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap08_avaliacao"

_contexto = celulas_do_notebook(NOTEBOOK, ("f914feda", "83e730d2", "e0112e2d", "3e892988"))

PARAFRASES = ("Why does warm ocean water feed hurricanes?", "Where do cyclones get their strength?")


# ---------------------------------------------------------------- exercício 1: as duas paráfrases
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


def _uma_a_uma(ns):
    """A maior similaridade de cada paráfrase, com o IDF ajustado no treino e nela só (uma chamada por paráfrase)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    treino = list(ns["train_texts"])
    maximos = []
    for frase in PARAFRASES:
        vetores = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5)).fit_transform(treino + [frase]).toarray()
        maximos.append(float((vetores[-1] @ vetores[:-1].T).max()))
    return maximos


def _conferir_ex1(valores, ns):
    """Aceita as três convenções que o notebook permite: o IDF ajustado com os 8 textos de avaliação junto
    (como a calibração, seção 8.4.3), só com o treino e as duas paráfrases (como o conjunto de teste da mesma
    seção) ou com o treino e uma paráfrase de cada vez."""
    from .comparar import comparar

    comparar(valores["paraphrases"], list(PARAFRASES), nome="`paraphrases`")
    obtido = valores["best_paraphrases"]
    for convencao in (lambda: _das_parafrases(ns, com_avaliacao=False).max(axis=1), lambda: _uma_a_uma(ns)):
        try:
            comparar(obtido, convencao(), nome="`best_paraphrases`")
            return
        except Incorreto:
            pass
    comparar(obtido, _das_parafrases(ns).max(axis=1), nome="`best_paraphrases`")


ex1 = Exercicio(
    "cap08_avaliacao.ex1", "a similaridade máxima de duas paráfrases com o treino",
    ("paraphrases", "best_paraphrases"),
    dicas=(
        "Junte as duas paráfrases ao fim de `eval_texts`, numa lista nova, e recalcule a matriz com "
        "`cross_similarities(train_texts, ...)`.",
        "As paráfrases são as duas últimas linhas da matriz. A similaridade que conta é a do texto de treino "
        "mais parecido: o máximo de cada linha.",
        "O IDF é ajustado nos textos comparados: com os 8 de avaliação junto (como na calibração), só com as "
        "paráfrases (como no conjunto de teste) ou com uma paráfrase de cada vez, os números mudam um pouco, e "
        "o verificador aceita os três. "
        "Depois, compare com o limiar `threshold` e com `others.max()`.",
    ),
    conferir=_conferir_ex1,
    erros_comuns=(
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
