"""Exercícios conferíveis do Capítulo 1 (a suavização de Laplace no modelo de bigramas).

Os exercícios 1, 3 e 4 do capítulo são de reflexão (classificar, comparar, projetar) e ficam sem
verificador: a solução deles é um comentário recolhido.
"""
from __future__ import annotations

import math
from fractions import Fraction

from .comparar import Incorreto, como_array, comparar
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap01_introducao"
_contexto = celulas_do_notebook(NOTEBOOK, ("4c11b8bb", "df808a9b"))

# As três frases do enunciado e uma quarta, fora do corpus, que usa só pares vistos e não vistos.
_FRASES = ("o urso lê um livro", "a menina lê uma carta", "o urso desenha um livro",
           "a menina desenha uma carta")


class _Perto(Fraction):
    """Uma fração que se diz igual a qualquer número que valha o mesmo (float, Fraction, tensor de um
    elemento): assim um erro comum é reconhecido quer o leitor devolva frações, quer floats."""

    def __eq__(self, outro):
        try:
            return math.isclose(float(self), float(outro), rel_tol=1e-9, abs_tol=0.0)
        except (TypeError, ValueError, OverflowError):
            return NotImplemented

    def __ne__(self, outro):
        igual = self.__eq__(outro)
        return igual if igual is NotImplemented else not igual

    __hash__ = Fraction.__hash__


# ---------------------------------------------------------------- exercício 2: Laplace
def _frases_do_corpus(ns):
    return [["<s>", *frase.split(), "</s>"] for frase in ns["corpus"]]


def _tamanho_v(ns, com_fim=True, com_inicio=False):
    """|V| contado direto do corpus: as palavras que vêm depois de outra (e o `</s>`)."""
    palavras = {w for frase in ns["corpus"] for w in frase.split()}
    return len(palavras) + int(com_fim) + int(com_inicio)


def _laplace(ns, v=None, soma_v=True):
    """P(frase) com soma 1 em cada par, recontada das frases do corpus (sem `pair_counts`)."""
    pares = [par for palavras in _frases_do_corpus(ns) for par in zip(palavras, palavras[1:])]
    v = _tamanho_v(ns) if v is None else v

    def prob(sentence):
        palavras = ["<s>", *sentence.split(), "</s>"]
        p = Fraction(1)
        for anterior, proxima in zip(palavras, palavras[1:]):
            vezes_anterior = sum(1 for a, _ in pares if a == anterior)
            p *= Fraction(pares.count((anterior, proxima)) + 1, vezes_anterior + (v if soma_v else 0))
        return _Perto(p)

    return prob


def _como_numero(valor):
    if isinstance(valor, Fraction):
        return float(valor)
    arr = como_array(valor)
    if arr is None or arr.size != 1 or arr.dtype.kind not in "biuf":
        return None
    return float(arr.item())


def _conferir_ex2(valores, ns):
    comparar(valores["vocab_size"], _tamanho_v(ns), nome="`vocab_size`")
    certa = _laplace(ns)
    for frase, obtida in zip(_FRASES, valores["laplace_probability"]):
        chamada = f"`laplace_probability({frase!r})`"
        if obtida is None:
            raise Incorreto(f"{chamada} devolveu None: faltou o `return`?")
        x = _como_numero(obtida)
        if x is None:
            raise Incorreto(f"{chamada} devolveu {type(obtida).__name__}: devolva a probabilidade da frase, "
                            "uma `Fraction` como em `bigram_probability` (um float também serve).")
        if not math.isclose(x, float(certa(frase)), rel_tol=1e-9, abs_tol=0.0):
            raise Incorreto(f"{chamada} deu {x:.4g}, e não é esse o valor com a suavização de Laplace.")


ex2 = Exercicio(
    "cap01_introducao.ex2", "a suavização de Laplace nos bigramas", ("laplace_probability", "vocab_size"),
    dicas=(
        "O numerador ganha 1 em todo par, visto ou não; o denominador ganha |V| para que P(· | anterior) "
        "continue somando 1.",
        "Copie `bigram_probability` e mude só a fração dentro do laço: o numerador ganha 1 e o "
        "denominador ganha `vocab_size`.",
        "A fração fica `Fraction(pair_counts[prev, nxt] + 1, prev_counts[prev] + vocab_size)`. Confira: a "
        "frase que era impossível passa a ter probabilidade da ordem de 10⁻⁵.",
    ),
    conferir=_conferir_ex2,
    entradas=lambda ns: [(frase,) for frase in _FRASES],
    erros_comuns=(
        ErroComum("você somou 1 a cada contagem de par, mas não somou |V| ao denominador: as probabilidades "
                  "depois de uma palavra deixam de somar 1.",
                  lambda ns: {"laplace_probability": _laplace(ns, soma_v=False)}),
        ErroComum("|V| = 11 deixa de fora o `</s>`: o fim da frase também pode vir depois de uma palavra e "
                  "precisa da sua fatia de probabilidade.",
                  lambda ns: {"vocab_size": _tamanho_v(ns, com_fim=False),
                              "laplace_probability": _laplace(ns, v=_tamanho_v(ns, com_fim=False))}),
        ErroComum("|V| = 13 conta também o `<s>`, que só abre a frase e nunca vem depois de outra palavra.",
                  lambda ns: {"vocab_size": _tamanho_v(ns, com_inicio=True),
                              "laplace_probability": _laplace(ns, v=_tamanho_v(ns, com_inicio=True))}),
    ),
    inicio="""
def laplace_probability(sentence):
    return ____      # P(frase) com +1 em cada par e +|V| em cada denominador (uma Fraction)


vocab_size = ____    # |V| (um int): quantas palavras diferentes podem vir depois de outra
""",
    contexto=_contexto, rtol=1e-9, atol=0.0,
)
