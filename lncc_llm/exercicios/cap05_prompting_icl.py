"""Exercícios conferíveis do Capítulo 5, primeira parte: a medida de um ponto da curva (núcleo), a ordem dos
exemplos e o limiar pela mediana."""
from __future__ import annotations

import numpy as np

from .contexto import celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap05_prompting_icl"
# O modelo e as tarefas de ICL (seção 5.3.2).
# A célula da curva de k exemplos é cara (todos os k, todos os sorteios): o `extra` refaz só o ponto k = 0 do
# português, o único que a solução 2 usa (é o mesmo ponto: sem exemplos, um sorteio só, semente 0).
_contexto = celulas_do_notebook(NOTEBOOK, (
    "4b54bdd2", "66e4fef9", "7ba0a475", "4aa7f4ac"),
    extra='curves = {"português": kshot_curve(model, tokenizer, tasks["português"], ks=(0,))}\n')


# ---------------------------------------------------------------- exercício 1 (núcleo): um ponto da curva
def _menor(task, n_por_rotulo):
    """A mesma tarefa com só as primeiras ``n_por_rotulo`` frases de avaliação de cada rótulo (a conta do leitor
    passa pelo modelo duas vezes por frase; 10 frases bastam para conferir)."""
    from dataclasses import replace

    itens = [i for y in task.labels for i in [it for it in task.eval_items if it["label"] == y][:n_por_rotulo]]
    return replace(task, eval_items=tuple(itens))


def _sorteios_ex1(ns):
    """Dois sorteios que a lição não mostra: `foo`/`bar` com 2 exemplos (semente 77) e português com 1
    (semente 78), em 5 + 5 frases de avaliação."""
    from ..icl import draw_demos

    tasks = ns["tasks"]
    return [(_menor(tasks["inglês, foo/bar"], 5), draw_demos(tasks["inglês, foo/bar"], 2, seed=77)),
            (_menor(tasks["português"], 5), draw_demos(tasks["português"], 1, seed=78))]


def _entradas_ex1(ns):
    return _sorteios_ex1(ns)


def _margens_ex1(ns, data, demos, espaco=" "):
    """As margens da referência, por um caminho independente de `label_margins` (que o leitor não pode usar): os
    ids de `prompt_ids` e as log-probabilidades dos dois rótulos em lote, por `sequence_logprobs`."""
    from ..icl import prompt_ids
    from ..likelihood import sequence_logprobs

    def calcular():
        prompts = [prompt_ids(ns["tokenizer"], data, demos, item["text"]) for item in data.eval_items]
        lp = [sequence_logprobs(ns["model"], ns["tokenizer"], prompts, [espaco + y] * len(prompts))
              for y in data.labels]
        return np.array(lp[1]) - np.array(lp[0])
    chave = ("margens ex1", espaco, id(ns["model"]), data.labels, tuple(i["text"] for i in data.eval_items),
             tuple((d["text"], d["label"]) for d in demos))
    return memorizar(chave, calcular)


def _ponto(ns, espelhada=False, fracao_positiva=False, sem_espaco=False):
    """A referência (as margens por `sequence_logprobs` em lote, um caminho independente do `label_logprob` que o
    leitor usa; a acurácia no limiar 0; a AUC com empates valendo meio) ou um erro comum das mesmas margens."""
    def medir(task, demos):
        m = _margens_ex1(ns, task, demos, espaco="" if sem_espaco else " ")
        verdade = np.array([item["label"] == task.labels[1] for item in task.eval_items])
        if espelhada:
            m = -m
        acuracia = float((m > 0).mean()) if fracao_positiva else float(((m > 0) == verdade).mean())
        return [float(x) for x in m], acuracia, _auc(m, verdade)
    return medir


ex1 = Exercicio(
    "cap05_prompting_icl.ex1", "a medida de um ponto da curva", ("my_point",),
    dicas=(
        "Para cada frase de `task.eval_items`, o prompt são os ids `prompt_ids(tokenizer, task, demos, "
        "item[\"text\"])` (seção 5.3.2); a margem é "
        "`label_logprob(model, tokenizer, prompt, \" \" + task.labels[1]) - label_logprob(..., \" \" + "
        "task.labels[0])` (o rótulo vem depois de um espaço, como nos exemplos do prompt).",
        "A frase é positiva quando `item[\"label\"] == task.labels[1]`; a acurácia no limiar 0 é a fração de frases "
        "em que `(margem > 0)` coincide com isso.",
        "A AUC é a média, sobre todos os pares (positiva, negativa), de 1 se a positiva tem margem maior, 0,5 se "
        "empatam e 0 se não. Devolva `(margens, acurácia, AUC)`, as margens na ordem de `task.eval_items`.",
    ),
    esperado=lambda ns: {"my_point": _ponto(ns)},
    entradas=_entradas_ex1,
    rtol=1e-3, atol=1e-3,
    erros_comuns=(
        ErroComum("a margem saiu com o sinal trocado (log p(labels[0]) − log p(labels[1])): as margens, a acurácia "
                  "e a AUC ficaram espelhadas. A margem favorece `task.labels[1]`, o rótulo positivo.",
                  lambda ns: {"my_point": _ponto(ns, espelhada=True)}),
        ErroComum("a \"acurácia\" é a fração de frases previstas positivas: compare a previsão (margem > 0) com o "
                  "rótulo verdadeiro de cada frase.",
                  lambda ns: {"my_point": _ponto(ns, fracao_positiva=True)}),
        ErroComum("os rótulos entraram sem o espaço da frente: no prompt, cada rótulo vem depois de um espaço "
                  "(\"Sentiment: foo\"), então o token a pontuar é o de \" foo\", não o de \"foo\". Use "
                  "`\" \" + task.labels[1]` e `\" \" + task.labels[0]`.",
                  lambda ns: {"my_point": _ponto(ns, sem_espaco=True)}),
    ),
    proibidas=("lncc_llm.icl.label_margins", "lncc_llm.icl.kshot_curve", "lncc_llm.evaluation.auroc",
               "lncc_llm.stats.auroc", "sklearn.metrics.roc_auc_score", "scipy.stats.mannwhitneyu"),
    tipo="nucleo",
    inicio="""
def my_point(task, demos):
    \"\"\"Um ponto da curva (seção 5.3.2): as margens log p(labels[1]) − log p(labels[0]) das frases de
    task.eval_items depois do prompt com os exemplos `demos`; devolve (margens, acurácia no limiar 0, AUC).\"\"\"
    return ____
""",
    seguir="measure_point = my_point",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: a ordem dos exemplos
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


ex2 = Exercicio(
    "cap05_prompting_icl.ex2", "os mesmos 4 exemplos em duas ordens", ("aucs", "accs"),
    dicas=(
        "São os mesmos 4 exemplos nas duas medidas; só a ordem em que entram no prompt muda. A lista invertida "
        "é `demos[::-1]`, uma cópia.",
        "Com `data = tasks[\"inglês, foo/bar\"]` e `texts = [i[\"text\"] for i in data.eval_items]`, "
        "`label_margins(model, tokenizer, data, order, texts)` dá as 48 margens, "
        "log p(`labels[1]`) − log p(`labels[0]`); a verdade de cada frase é "
        "`data.labels.index(item[\"label\"])`.",
        "A AUC é `auroc(margens, verdade)`, de `lncc_llm.evaluation`, com a verdade de cada frase (True quando ela é "
        "de `labels[1]`) como booleano; a acurácia usa o limiar 0: a fração de frases em que "
        "`(margem > 0) == verdade`.",
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


# ---------------------------------------------------------------- exercício 3: o limiar pela mediana
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


ex3 = Exercicio(
    "cap05_prompting_icl.ex3", "um limiar sem rótulos: a mediana das margens", ("threshold", "acc_median"),
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
