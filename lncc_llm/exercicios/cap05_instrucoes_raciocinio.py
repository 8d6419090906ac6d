"""Exercícios conferíveis do Capítulo 5, segunda parte: um validador de formato, o voto em 10 + 5 e a janela."""
from __future__ import annotations

import re

from .contexto import celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap05_instrucoes_raciocinio"
# O modelo, as 48 críticas e as respostas com o prompt de sistema padrão (seção 5.5.1), o extrator `read_sum`
# (seção 5.6; da célula, só as definições, sem as gerações) e o prompt do cofre (seção 5.7.1).
# Da seção 5.5.1, só a medida com o sistema padrão (a da tarefa não entra nos exercícios).
_contexto = celulas_do_notebook(NOTEBOOK, (
    "cap05b-setup", "cap05b-imports", "cap05b-medida", "2e4673f7", "b85fcd2c"),
    extra='system_runs = {"sistema padrão": measure("sistema padrão", TASK)}\n',
    definicoes=("2e4673f7",))


# ---------------------------------------------------------------- exercício 1: um validador para uma frase
def _frase(texto):
    achado = re.fullmatch(r"\s*The review is (positive|negative)\.\s*", texto)
    return achado.group(1) if achado else None


def _comeca_com_a_frase(texto):
    achado = re.match(r"\s*The review is (positive|negative)\.", texto)
    return achado.group(1) if achado else None


def _termina_com_a_frase(texto):
    achado = re.search(r"The review is (positive|negative)\.\s*$", texto)
    return achado.group(1) if achado else None


def _sem_espacos(texto):
    achado = re.fullmatch(r"The review is (positive|negative)\.", texto)
    return achado.group(1) if achado else None


def _em_qualquer_lugar(texto):
    achado = re.findall(r"\b(positive|negative)\b", texto)
    return achado[0] if len(set(achado)) == 1 else None


def _respostas_padrao(ns):
    return ns["system_runs"]["sistema padrão"]["answers"]


def _entradas_ex1(ns):
    difíceis = ["The review is positive.", "  The review is negative. ", "The review is positive",
                "The review is positive. The reviewer loved it.", "the review is positive.",
                "The review is Positive.", "I think the review is negative.", "negative",
                "The review is positive or negative.", "Sure. The review is positive.",
                "Answer: The review is negative.", "Sure! The review is negative. Thanks."]
    return [(t,) for t in difíceis + list(_respostas_padrao(ns))]


def _validas(ns, validador):
    return sum(validador(a) is not None for a in _respostas_padrao(ns))


ex1 = Exercicio(
    "cap05_instrucoes_raciocinio.ex1", "um validador para uma frase", ("sentence_label", "n_valid"),
    dicas=(
        "O formato pedido é uma frase exata: \"The review is positive.\" ou \"The review is negative.\", com espaços "
        "em volta tolerados e nada mais, nem antes nem depois.",
        "`re.fullmatch(r\"\\s*The review is (positive|negative)\\.\\s*\", text)` só casa se o texto inteiro for a "
        "frase; o rótulo fica em `.group(1)`, e sem casamento a função devolve `None`.",
        "`n_valid` conta as respostas de `system_runs[\"sistema padrão\"][\"answers\"]` (seção 5.5.1) em que "
        "`sentence_label` não devolve `None`.",
    ),
    esperado=lambda ns: {"sentence_label": _frase, "n_valid": _validas(ns, _frase)},
    entradas=_entradas_ex1,
    erros_comuns=(
        ErroComum("o validador aceitou uma resposta que continua depois da frase (\"The review is positive. The "
                  "reviewer…\"): o formato pedido é a frase e nada mais; use `re.fullmatch`, não `re.match`.",
                  lambda ns: {"sentence_label": _comeca_com_a_frase},
                  dica="`re.match` só ancora no começo; `re.fullmatch` exige que o texto inteiro seja a frase."),
        ErroComum("o validador aceitou uma resposta com algo antes da frase (\"Sure. The review is positive.\"): "
                  "a âncora do fim (`$`) não basta; o formato pedido é a frase e nada mais, dos dois lados.",
                  lambda ns: {"sentence_label": _termina_com_a_frase},
                  dica="Ancore nos dois lados: `re.fullmatch` (ou `^` no começo e `$` no fim) com espaços "
                       "opcionais `\\s*` em volta da frase."),
        ErroComum("isso lê o rótulo onde ele estiver, como o `parse_label`: mede o acerto, não o formato. O "
                  "validador só aceita a frase exata.",
                  lambda ns: {"sentence_label": _em_qualquer_lugar}),
        ErroComum("o validador recusou a frase certa com espaços em volta (\"  The review is negative. \"): o "
                  "formato tolera espaços e quebras de linha antes e depois da frase, e nada mais.",
                  lambda ns: {"sentence_label": _sem_espacos},
                  dica="Ponha `\\s*` no começo e no fim do padrão do `re.fullmatch`."),
    ),
    inicio="""
def sentence_label(text):
    return ____     # "positive" ou "negative" se o texto for exatamente a frase pedida; senão None


n_valid = ____      # quantas das 48 respostas com o sistema padrão (seção 5.5.1) passam no validador (int)
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: o voto em 10 + 5
def _cadeias(ns):
    from ..sampling import sample_many

    pergunta = "What is 10 + 5? Think step by step, then give the final answer."
    return memorizar(("cadeias", id(ns["model"])), lambda: sample_many(
        ns["model"], ns["tokenizer"], pergunta, n=10, max_new_tokens=32, temperature=0.7, top_p=0.9, seed=0,
        chat=True))


def _ler_soma(texto, a, b):
    """O extrator da seção 5.6 pela cópia testada (não pelo `read_sum` do leitor, que ele pode ter mudado)."""
    from ..prompting import read_sum

    return read_sum(texto, a, b)


def _esperado_ex2(ns):
    from ..prompting import majority_vote

    respostas = [_ler_soma(s, 10, 5) for s in _cadeias(ns)]
    return {"samples": list(_cadeias(ns)), "answers": respostas, "vote_label": majority_vote(respostas).label}


def _primeiro_numero(texto):
    achado = re.search(r"-?\d+", texto.replace(",", ""))
    return int(achado.group()) if achado else None


ex2 = Exercicio(
    "cap05_instrucoes_raciocinio.ex2", "a autoconsistência em 10 + 5", ("samples", "answers", "vote_label"),
    dicas=(
        "É a receita da seção 5.6 com outra conta: troque 27 + 58 por 10 + 5 na pergunta passo a passo e nos argumentos de "
        "`read_sum` (a função fica como está), com cadeias de até 32 tokens.",
        "`sample_many(model, tokenizer, question, n=10, max_new_tokens=32, temperature=0.7, top_p=0.9, seed=0, "
        "chat=True)` sorteia as 10 cadeias num lote só; `read_sum(s, 10, 5)` lê cada uma.",
        "`majority_vote(answers)` faz o voto: o vencedor está em `.label`, e quantas respostas valeram, em "
        "`.valid`.",
    ),
    esperado=_esperado_ex2,
    erros_comuns=(
        ErroComum("o extrator ainda procura a conta 27 + 58: passe os números desta pergunta, "
                  "`read_sum(texto, 10, 5)`.",
                  lambda ns: {"answers": [_ler_soma(s, 27, 58) for s in _cadeias(ns)]}),
        ErroComum("esse extrator lê o primeiro número do texto, que é o eco do enunciado: use `read_sum`, que só "
                  "aceita a resposta declarada ou o resultado escrito logo depois da conta.",
                  lambda ns: {"answers": [_primeiro_numero(s) for s in _cadeias(ns)]}),
    ),
    atalhos=(
        ErroComum("`samples` não são as 10 cadeias que o modelo sorteia com essa receita (semente 0): gere-as "
                  "com `sample_many`, e as respostas e o voto saem delas; digitar `[15] * 10` não mede nada.",
                  lambda ns: {"samples": ["15"] * 10, "answers": [15] * 10, "vote_label": 15}),
    ),
    inicio="""
samples = ____      # as 10 cadeias sorteadas (uma lista de 10 textos, de sample_many)
answers = ____      # as 10 respostas lidas por read_sum (int, ou None quando não há resposta)
vote_label = ____   # o vencedor do voto da maioria (o .label de majority_vote)
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 3: a janela no limite
def _sufixo_comum(ns):
    from ..prompting import truncate_ids

    a, b = ns["ids_with"], ns["ids_without"]
    return max(w for w in range(1, min(len(a), len(b)) + 1) if truncate_ids(a, w) == truncate_ids(b, w))


def _prefixo_comum(ns):
    a, b = ns["ids_with"], ns["ids_without"]
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _sufixo_em_caracteres(ns):
    a, b = ns["with_fact"], ns["without_fact"]
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


ex3 = Exercicio(
    "cap05_instrucoes_raciocinio.ex3", "até onde a janela não vê o fato", ("common",),
    dicas=(
        "Enquanto a janela só guarda o trecho final que os dois prompts têm em comum, os dois cortes são a mesma "
        "lista de ids, e os logits também, qualquer que seja o tamanho.",
        "Compare os finais das listas: `ids_with[-w:] == ids_without[-w:]` para w = 1, 2, …, e fique com o maior w "
        "em que a igualdade ainda vale.",
        "Com esse número, pontue `label_logprob(model, tokenizer, truncate_ids(ids_with, w), \" 4821\")` para "
        "alguns w acima dele e veja a partir de quando o número fica provável.",
    ),
    esperado=lambda ns: {"common": _sufixo_comum(ns)},
    erros_comuns=(
        ErroComum("esse é o primeiro tamanho em que os dois prompts já diferem; pede-se o maior em que eles ainda "
                  "são os mesmos ids.",
                  lambda ns: {"common": _sufixo_comum(ns) + 1}),
        ErroComum("isso mede o começo comum dos dois prompts; a janela guarda o fim (`truncate_ids` corta o "
                  "início), então compare os finais.",
                  lambda ns: {"common": _prefixo_comum(ns)}),
        ErroComum("isso conta caracteres; a janela se mede em tokens: compare as listas de ids, `ids_with` e "
                  "`ids_without`.",
                  lambda ns: {"common": _sufixo_em_caracteres(ns)}),
    ),
    inicio="""
common = ____       # o maior tamanho de janela (em tokens) em que os dois prompts ficam com os mesmos ids (int)
""",
    contexto=_contexto,
)
