"""Exercícios conferíveis do Capítulo 1.

O 1 é o núcleo: o leitor escreve a perplexidade de uma sequência de ids no decodificador do curso; o
verificador a chama em frases que o notebook não mostra e compara com a perda do próprio modelo no
``transformers`` (``labels=``). O 3 é a suavização de Laplace no modelo de bigramas. Os exercícios 2, 4
e 5 são de reflexão (classificar, comparar, projetar) e ficam sem verificador: a solução deles é um
comentário recolhido.
"""
from __future__ import annotations

import math
from fractions import Fraction

from .comparar import Incorreto, como_array, comparar
from .contexto import celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap01_introducao"
_contexto = celulas_do_notebook(NOTEBOOK, ("4c11b8bb", "df808a9b"))
_contexto_decodificador = celulas_do_notebook(NOTEBOOK, ("4c11b8bb", "df808a9b", "72d10197"))


# ---------------------------------------------------------------- exercício 1 (núcleo): a perplexidade
_FRASES_EX1 = ("the river flows quietly to the sea", "o gato dorme no sofá", "colorless green ideas sleep",
               "2 + 2 = 4", "sea the to quietly flows river the")


def _ids_ex1(ns):
    tok = ns["dec_tokenizer"]
    inicio = tok.convert_tokens_to_ids("<|endoftext|>")
    return [[inicio] + tok(f, add_special_tokens=False)["input_ids"] for f in _FRASES_EX1]


class _Modelo:
    """O decodificador, passado às chamadas de teste sem ser copiado: o verificador copia as entradas de
    cada chamada, e copiar 135 M de parâmetros custaria um terço de segundo por frase."""

    def __init__(self, modelo):
        self._modelo = modelo

    def __call__(self, *args, **kwargs):
        return self._modelo(*args, **kwargs)

    def __getattr__(self, nome):
        return getattr(self._modelo, nome)

    def __deepcopy__(self, memo):
        return self


_MODELOS: dict = {}


def _casos_ex1(ns):
    modelo = _MODELOS.setdefault(id(ns["decoder"]), _Modelo(ns["decoder"]))
    return [(modelo, ids) for ids in _ids_ex1(ns)]


def _ppl_do_transformers(model, ids):
    """A perplexidade pela perda do próprio modelo: ``labels=ids`` faz o ``transformers`` deslocar os
    rótulos e tirar a média da entropia cruzada dos tokens 1 a n (uma conta por frase e processo)."""
    import torch

    def calcular():
        x = torch.as_tensor([list(ids)], device=model.device)
        with torch.no_grad():
            return math.exp(model(input_ids=x, labels=x).loss.item())

    return memorizar(("ppl cap01", id(model), tuple(ids)), calcular)


def _ppl_errada(model, ids, alinhamento=1, log=True, media=True, sinal=-1):
    import torch

    def calcular():
        with torch.no_grad():
            return model(input_ids=torch.as_tensor([list(ids)], device=model.device)).logits[0].double().cpu()

    x = torch.as_tensor([list(ids)])
    logits = memorizar(("logits cap01", id(model), tuple(ids)), calcular)
    pontos = torch.log_softmax(logits, -1) if log else logits
    if alinhamento == 1:
        lp = pontos[:-1].gather(-1, x[0, 1:, None])[:, 0]
    else:                                             # a posição t "prevê" o próprio token t
        lp = pontos[1:].gather(-1, x[0, 1:, None])[:, 0]
    total = lp.mean() if media else lp.sum()
    return math.exp(sinal * total.item())


def _sem_labels(funcao):
    """Se o código da função passa ``labels=`` ao modelo (a perda pronta do transformers)."""
    codigo = getattr(funcao, "__code__", None)
    if codigo is None:
        return False
    pilha = [codigo]
    while pilha:
        c = pilha.pop()
        if any(isinstance(k, tuple) and "labels" in k for k in c.co_consts):
            return True
        pilha += [k for k in c.co_consts if hasattr(k, "co_code")]
    return False


def _conferir_ex1(respostas, ns):
    casos = _casos_ex1(ns)
    for i, ((model, ids), obtido) in enumerate(zip(casos, respostas["perplexity"]), start=1):
        comparar(obtido, _ppl_do_transformers(model, ids), rtol=1e-3, atol=1e-6,
                 nome=f"a perplexidade na chamada de teste {i} de {len(casos)}")
    if _sem_labels(ns.get("perplexity")):
        raise Incorreto("os números batem, mas a função passa `labels=` ao modelo: é a perda pronta do "
                        "`transformers`. O exercício pede a conta: log_softmax, o log p de cada token seguinte, "
                        "a média e a exponencial.")


ex1 = Exercicio(
    "cap01_introducao.ex1", "a perplexidade de uma frase no SmolLM2", ("perplexity",),
    dicas=(
        "Uma passada: `logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0]`, (n + 1, V). A linha t dá a "
        "distribuição do token t + 1 (a primeira linha prevê o primeiro token da frase).",
        "`torch.log_softmax(logits, dim=-1)` dá log p de cada token do vocabulário; pegue, na linha t, a coluna "
        "`ids[t + 1]` (as linhas 0 a n − 1 com os ids 1 a n; `gather` ou indexação).",
        "Perplexidade = exp(−média dos n log p). Com `torch.no_grad()` e `.item()`, devolva um float.",
    ),
    esperado=lambda ns: {"perplexity": _ppl_do_transformers},
    conferir=_conferir_ex1,
    entradas=_casos_ex1,
    erros_comuns=(
        ErroComum("as posições estão desalinhadas: a linha t dos logits prevê o token t + 1, então os log p vêm "
                  "das linhas 0 a n − 1 com os ids 1 a n.",
                  lambda ns: {"perplexity": lambda m, ids: _ppl_errada(m, ids, alinhamento=0)},
                  dica="Compare `logp[:-1]` com `ids[1:]`: a última linha prevê um token que ainda não existe."),
        ErroComum("os logits entraram sem o log_softmax: um logit não é um log p (falta subtrair o log da soma "
                  "das exponenciais de todo o vocabulário).",
                  lambda ns: {"perplexity": lambda m, ids: _ppl_errada(m, ids, log=False)}),
        ErroComum("a exponencial usou a soma dos log p, não a média: isso é 1/p(frase), que cresce com o número "
                  "de tokens; a perplexidade é por token.",
                  lambda ns: {"perplexity": lambda m, ids: _ppl_errada(m, ids, media=False)}),
        ErroComum("o sinal está trocado: a perplexidade é exp(−média dos log p), um número ≥ 1.",
                  lambda ns: {"perplexity": lambda m, ids: _ppl_errada(m, ids, sinal=1)}),
    ),
    proibidas=("torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss",
               "lncc_llm.likelihood.sequence_logprob", "lncc_llm.likelihood.sequence_logprobs",
               "lncc_llm.likelihood.token_logprobs", "lncc_llm.likelihood.masked_logprob_sums"),
    tipo="nucleo",
    inicio="""
def perplexity(model, ids):
    \"\"\"A perplexidade do decodificador nos tokens 1 a n de `ids` (seção 1.2.1).

    ids: lista de n + 1 inteiros, o primeiro sendo <|endoftext|>; model: o decodificador (chame-o com
    `model(input_ids=torch.tensor([ids], device=model.device)).logits`). Devolve exp(−média dos log p de cada token dados os
    anteriores), um float. Os tensores vão no dispositivo do modelo: torch.tensor(…, device=model.device).
    \"\"\"
    return ____
""",
    seguir='print("a sua perplexidade:", perplexity(decoder, sentence_ids("o urso lê um livro")))',
    contexto=_contexto_decodificador,
)


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


# ---------------------------------------------------------------- exercício 3: Laplace
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


ex3 = Exercicio(
    "cap01_introducao.ex3", "a suavização de Laplace nos bigramas", ("laplace_probability", "vocab_size"),
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
