"""Exercícios conferíveis do Capítulo 7, segunda parte (continuação): a mudança pareada da perplexidade, a
medida do esquecimento (núcleo).

O exercício 2 (quanto o modelo se move) fica sem verificador: ele mede o LoRA treinado no notebook, e um treino
não cabe na conferência.
"""
from __future__ import annotations

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap07_metodos_comparados"


# ---------------------------------------------------------------- exercício 1 (núcleo): a mudança pareada
def _entradas_ex1(ns):
    """Perplexidades que o notebook não imprime, trecho a trecho: as das sementes 1 e 2 do arquivo contra a base
    (fp32 ou NF4), e duas listas sorteadas (uma em que um trecho só muda muito, uma com 5 trechos)."""
    import json
    import random
    from importlib.resources import files

    dados = json.loads(files("lncc_llm").joinpath("dados/comparacao_metodos.json").read_text(encoding="utf-8"))
    bases = dados["bases"]
    casos = []
    for run in dados["metodos"]:
        if run["semente"] in (1, 2):
            base = bases["base NF4" if run["metodo"] == "qlora" else "base"]["ppl_geral"]
            casos.append((list(run["ppl_geral"]), list(base)))
    g = random.Random(7_11)
    ref = [g.uniform(5, 80) for _ in range(12)]
    casos.append(([r * (3.0 if i == 4 else g.uniform(0.9, 1.05)) for i, r in enumerate(ref)], ref))
    ref5 = [g.uniform(10, 30) for _ in range(5)]
    casos.append(([r * g.uniform(1.0, 1.3) for r in ref5], ref5))
    return casos


def _independente(values, reference):
    """A referência, por outro caminho: ``numpy`` para a média dos logs e ``scipy.stats.sem`` para o EP."""
    import numpy as np
    from scipy import stats

    logs = np.log(np.asarray(values, dtype=float) / np.asarray(reference, dtype=float))
    return float(np.expm1(logs.mean())), float(stats.sem(logs))


def _errada(tipo):
    def medir(values, reference):
        import numpy as np

        v, r = np.asarray(values, dtype=float), np.asarray(reference, dtype=float)
        logs = np.log(v / r)
        n = len(logs)
        if tipo == "razão das médias":
            return float(v.mean() / r.mean() - 1), float(logs.std(ddof=1) / np.sqrt(n))
        if tipo == "média das razões":
            return float((v / r).mean() - 1), float((v / r).std(ddof=1) / np.sqrt(n))
        if tipo == "ddof 0":
            return float(np.expm1(logs.mean())), float(logs.std(ddof=0) / np.sqrt(n))
        if tipo == "desvio, não EP":
            return float(np.expm1(logs.mean())), float(logs.std(ddof=1))
        if tipo == "log, sem voltar":
            return float(logs.mean()), float(logs.std(ddof=1) / np.sqrt(n))
        if tipo == "trocado":
            return float(logs.std(ddof=1) / np.sqrt(n)), float(np.expm1(logs.mean()))
        return float(np.expm1(logs.mean())), float(logs.std(ddof=1) / np.sqrt(n))
    return medir


ex1 = Exercicio(
    "cap07_metodos_comparados.ex1", "a mudança pareada da perplexidade, com o seu erro-padrão", ("my_paired_change",),
    dicas=(
        "A unidade é o trecho: para cada i, `math.log(values[i] / reference[i])`. A mudança é a média desses "
        "logaritmos, de volta à escala da razão com `math.expm1` (ou `math.exp(média) - 1`).",
        "O erro-padrão é o da média dos logaritmos: o desvio-padrão amostral (divida por n − 1, como "
        "`statistics.stdev`) sobre √n.",
        "Devolva `(mudança, ep)`, nessa ordem. A razão das perplexidades médias (`mean(values) / mean(reference)`) "
        "não é pareada: um trecho difícil, de perplexidade alta, pesaria mais que os outros.",
    ),
    esperado=lambda ns: {"my_paired_change": _independente},
    entradas=_entradas_ex1,
    rtol=1e-6, atol=1e-9,
    erros_comuns=(
        ErroComum("a mudança é a razão das perplexidades médias, que não é pareada: um trecho de perplexidade alta "
                  "pesa mais que os outros. Tire a média dos logs das razões, trecho a trecho.",
                  lambda ns: {"my_paired_change": _errada("razão das médias")}),
        ErroComum("a média das razões (aritmética) não é a da medida: tire a média dos **logaritmos** das razões e "
                  "volte com `exp`, e calcule o EP sobre os logaritmos.",
                  lambda ns: {"my_paired_change": _errada("média das razões")}),
        ErroComum("o desvio-padrão foi o populacional (divisão por n): o EP usa o amostral, n − 1 "
                  "(`statistics.stdev`, ou `ddof=1`).", lambda ns: {"my_paired_change": _errada("ddof 0")}),
        ErroComum("esse é o desvio-padrão dos logs, não o erro-padrão da média: divida por √n.",
                  lambda ns: {"my_paired_change": _errada("desvio, não EP")}),
        ErroComum("a mudança ficou na escala do log: volte à escala da razão com `math.expm1(média)` "
                  "(`exp(média) − 1`); o EP, este sim, fica no log.",
                  lambda ns: {"my_paired_change": _errada("log, sem voltar")}),
        ErroComum("a ordem da resposta está trocada: devolva `(mudança, ep)`, a mudança primeiro.",
                  lambda ns: {"my_paired_change": _errada("trocado")}),
    ),
    proibidas=("lncc_llm.forgetting.paired_change", "lncc_llm.training.mean_and_se", "scipy.stats.sem",
               "scipy.stats.mstats.sem", "scipy.stats.ttest_rel", "scipy.stats.ttest_1samp"),
    tipo="nucleo",
    inicio="""
def my_paired_change(values, reference):
    \"\"\"A mudança média (geométrica) das perplexidades `values` contra `reference`, trecho a trecho, e o EP da
    média do log da razão. Devolve (mudança, ep); +0.05 quer dizer 5 % acima da referência.\"\"\"
    return ____
""",
    seguir="paired_change = my_paired_change",
    contexto=celulas_do_notebook(NOTEBOOK, ("cap07c-setup", "cap07c-dados")),
)
