"""Exercícios conferíveis do Capítulo 5 (ordem dos exemplos, limiar pela mediana, o voto em 10 + 5 e a janela)."""
from __future__ import annotations

import re

import numpy as np

from .contexto import celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio

NOTEBOOK = "cap05_prompting_icl"
# O modelo, as tarefas de ICL (seção 5.4.2), o extrator `read_sum` (seção 5.6) e o prompt do cofre (seção 5.7).
# A célula da curva de k exemplos é cara (todos os k, todos os sorteios): o `extra` refaz só o ponto k = 0 do
# português, o único que a solução 2 usa (é o mesmo ponto: sem exemplos, um sorteio só, semente 0).
_contexto = celulas_do_notebook(NOTEBOOK, (
    "4b54bdd2", "66e4fef9", "7ba0a475", "4aa7f4ac", "2e4673f7", "b85fcd2c"),
    extra='curves = {"português": kshot_curve(model, tokenizer, tasks["português"], ks=(0,))}\n',
    definicoes=("2e4673f7",))   # da seção 5.6, só o extrator `read_sum` (sem as 40 amostras da célula)


# ---------------------------------------------------------------- exercício 1: a ordem dos exemplos
def _auc(margens, verdade):
    """A fração dos pares (positivo, negativo) em que o positivo tem a margem maior; empates valem meio."""
    pos, neg = margens[verdade], margens[~verdade]
    maiores = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(maiores / (len(pos) * len(neg)))


def _ordens(ns):
    from ..icl import draw_demos, label_margins

    data = ns["tasks"]["inglês, foo/bar"]
    demos = draw_demos(data, 4, seed=11)
    textos = [item["text"] for item in data.eval_items]
    verdade = np.array([item["label"] == data.labels[1] for item in data.eval_items])   # a margem favorece labels[1]
    aucs, accs = [], []
    for ordem in (demos, demos[::-1]):
        chave = ("margens", id(ns["model"]), tuple((d["text"], d["label"]) for d in ordem))
        m = memorizar(chave, lambda: label_margins(ns["model"], ns["tokenizer"], data, ordem, textos).numpy())
        aucs.append(_auc(m, verdade))
        accs.append(float(((m > 0) == verdade).mean()))
    return aucs, accs


ex1 = Exercicio(
    "cap05.ex1", "os mesmos 4 exemplos em duas ordens", ("aucs", "accs"),
    dicas=(
        "São os mesmos 4 exemplos nas duas medidas; só a ordem em que entram no prompt muda. A lista invertida "
        "é `demos[::-1]`, uma cópia.",
        "Com `data = tasks[\"inglês, foo/bar\"]` e `texts = [i[\"text\"] for i in data.eval_items]`, "
        "`label_margins(model, tokenizer, data, order, texts)` dá as 48 margens, "
        "log p(`labels[1]`) − log p(`labels[0]`); a verdade de cada frase é "
        "`data.labels.index(item[\"label\"])`.",
        "A AUC é `auroc(margens, acertos)`, de `lncc_llm.evaluation`, com os acertos como booleanos; a acurácia "
        "usa o limiar 0: a fração de frases em que `(margem > 0) == verdade`.",
    ),
    esperado=lambda ns: dict(zip(("aucs", "accs"), _ordens(ns))),
    erros_comuns=(
        ErroComum("as duas AUCs são a da ordem inversa: a lista foi invertida no lugar (`demos.reverse()`) antes de "
                  "medir a ordem sorteada. Use `demos[::-1]`, que devolve uma cópia.",
                  lambda ns: {"aucs": [_ordens(ns)[0][1]] * 2}),
        ErroComum("a AUC saiu espelhada (1 − AUC): a margem favorece `labels[1]`, então a verdade de uma frase é "
                  "`labels.index(rótulo)`, 1 para `labels[1]`.",
                  lambda ns: {"aucs": [1 - a for a in _ordens(ns)[0]]}),
    ),
    inicio="""
aucs = ____     # [AUC na ordem sorteada, AUC na ordem inversa]: dois floats
accs = ____     # [acurácia na ordem sorteada, na inversa], com o limiar 0
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: o limiar pela mediana
def _margens_pt(ns):
    data = ns["tasks"]["português"]
    ponto = next(p for p in ns["curves"]["português"] if p.k == 0)
    verdade = np.array([item["label"] == data.labels[1] for item in data.eval_items])
    return np.asarray(ponto.margins, dtype=float), verdade


def _acuracia(ns, limiar):
    m, verdade = _margens_pt(ns)
    return float(((m > limiar) == verdade).mean())


def _esperado_ex2(ns):
    m, _ = _margens_pt(ns)
    limiar = float(np.median(m))
    return {"threshold": limiar, "acc_median": _acuracia(ns, limiar)}


ex2 = Exercicio(
    "cap05.ex2", "um limiar sem rótulos: a mediana das margens", ("threshold", "acc_median"),
    dicas=(
        "A mediana não olha os rótulos: ela põe o limiar no meio das 48 margens, com metade delas de cada lado.",
        "As margens do português sem exemplos estão no ponto k = 0 da curva: "
        "`point = next(p for p in curves[\"português\"] if p.k == 0)`, e o limiar é "
        "`statistics.median(point.margins)`.",
        "Uma frase é prevista como `labels[1]` quando a margem passa do limiar; a acurácia é a fração de frases "
        "em que essa previsão bate com `tasks[\"português\"].labels.index(item[\"label\"])`.",
    ),
    esperado=_esperado_ex2,
    erros_comuns=(
        ErroComum("esse limiar é a média das margens; a mediana é o valor do meio, com metade das margens de cada "
                  "lado, e não se deixa puxar pelas margens extremas.",
                  lambda ns: {"threshold": float(np.mean(_margens_pt(ns)[0]))}),
        ErroComum("a comparação ficou invertida: a margem é log p(`labels[1]`) − log p(`labels[0]`), então uma margem "
                  "acima do limiar prevê `labels[1]`.",
                  lambda ns: {"acc_median": 1 - _esperado_ex2(ns)["acc_median"]}),
        ErroComum("essa é a acurácia com o limiar 0: compare cada margem com a mediana, não com zero.",
                  lambda ns: {"acc_median": _acuracia(ns, 0.0)}),
    ),
    inicio="""
threshold = ____    # a mediana das 48 margens do português com k = 0 (float)
acc_median = ____   # a acurácia com esse limiar (uma fração entre 0 e 1)
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 3: o voto em 10 + 5
def _cadeias(ns):
    from ..sampling import sample_many

    pergunta = "What is 10 + 5? Think step by step, then give the final answer."
    return memorizar(("cadeias", id(ns["model"])), lambda: sample_many(
        ns["model"], ns["tokenizer"], pergunta, n=10, max_new_tokens=32, temperature=0.7, top_p=0.9, seed=0,
        chat=True))


def _ler_soma(texto, a, b):
    """A cópia do verificador para o extrator da seção 5.6 (não usa o `read_sum` do leitor, que ele pode ter
    mudado): a resposta declarada ("answer is", "final answer"), senão a conta a + b = N escrita no texto."""
    texto = texto.replace(",", "")
    conta = rf"{a}\s*\+\s*{b}\s*=\s*"
    declarada = re.search(rf"(?:final answer|answer is)\W*(?:{conta})?(-?\d+)", texto, flags=re.IGNORECASE)
    if declarada:
        return int(declarada.group(1))
    feita = re.search(rf"\b{conta}(-?\d+)", texto)
    return int(feita.group(1)) if feita else None


def _esperado_ex3(ns):
    from ..prompting import majority_vote

    respostas = [_ler_soma(s, 10, 5) for s in _cadeias(ns)]
    return {"answers": respostas, "vote_label": majority_vote(respostas).label}


def _primeiro_numero(texto):
    achado = re.search(r"-?\d+", texto.replace(",", ""))
    return int(achado.group()) if achado else None


ex3 = Exercicio(
    "cap05.ex3", "a autoconsistência em 10 + 5", ("answers", "vote_label"),
    dicas=(
        "É a receita da seção 5.6 com outra pergunta: troque 27 + 58 por 10 + 5 na pergunta e nos argumentos de "
        "`read_sum` (a função fica como está), com cadeias de até 32 tokens.",
        "`sample_many(model, tokenizer, question, n=10, max_new_tokens=32, temperature=0.7, top_p=0.9, seed=0, "
        "chat=True)` sorteia as 10 cadeias num lote só; `read_sum(s, 10, 5)` lê cada uma.",
        "`majority_vote(answers)` faz o voto: o vencedor está em `.label`, e quantas respostas valeram, em "
        "`.valid`.",
    ),
    esperado=_esperado_ex3,
    erros_comuns=(
        ErroComum("o extrator ainda procura a conta 27 + 58: passe os números desta pergunta, "
                  "`read_sum(texto, 10, 5)`.",
                  lambda ns: {"answers": [_ler_soma(s, 27, 58) for s in _cadeias(ns)]}),
        ErroComum("esse extrator lê o primeiro número do texto, que é o eco do enunciado: use `read_sum`, que só "
                  "aceita a resposta declarada ou o resultado escrito logo depois da conta.",
                  lambda ns: {"answers": [_primeiro_numero(s) for s in _cadeias(ns)]}),
    ),
    inicio="""
answers = ____      # as 10 respostas lidas por read_sum (int, ou None quando não há resposta)
vote_label = ____   # o vencedor do voto da maioria (o .label de majority_vote)
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 4: a janela no limite
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


ex4 = Exercicio(
    "cap05.ex4", "até onde a janela não vê o fato", ("common",),
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
