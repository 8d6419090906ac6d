"""Exercícios que conferem a resposta do leitor: ``exN.verificar()``, ``exN.dica()`` e a solução recolhida.

Cada notebook tem o seu módulo, com o mesmo nome (``book/cap03_variacoes_modernas.ipynb`` →
``lncc_llm.exercicios.cap03_variacoes_modernas``), com os exercícios ``ex1``, ``ex2``…; a célula inicial faz
``from lncc_llm.exercicios.cap03_variacoes_modernas import ____, ex1``. Importar este pacote não importa o
torch. Como usar: ``intro.md``, "Exercícios que conferem a sua resposta".
"""
from __future__ import annotations

import importlib

from .comparar import Incorreto, comparar
from .nucleo import (
    MARCA_DA_EDICAO,
    ErroComum,
    Exercicio,
    Resultado,
    Status,
    ____,
    edicao_do_aluno,
    saida_recolhida,
)

# um módulo por notebook, com o nome do notebook, na ordem do _toc.yml
CAPITULOS = ("cap01_introducao", "cap02_nucleo_transformer", "cap02_atencao_camada", "cap03_variacoes_modernas",
             "cap03_moe_bloco", "cap04_inferencia_causal", "cap04_feixe_cache", "apendice_a_gpt_do_zero",
             "apendice_a_treino", "apendice_b_llama_do_zero", "cap05_prompting_icl",
             "cap05_instrucoes_raciocinio", "cap06_pretreinamento_otimizacao", "cap06_velocidade_memoria",
             "cap07_treinamento_otimizacao", "cap07_sft_lora_qlora", "cap07_metodos_comparados",
             "cap07_sft_na_pratica",
             "cap08_alinhamento", "cap08_rl_grpo", "cap08_avaliacao", "cap08_vieses_harness",
             "cap09_tendencias")
NOTEBOOKS = CAPITULOS

__all__ = ["____", "MARCA_DA_EDICAO", "edicao_do_aluno", "CAPITULOS", "NOTEBOOKS", "conferir_nao_tentados", "ErroComum", "Exercicio", "Incorreto", "Resultado", "Status", "comparar",
           "do_capitulo", "progresso", "saida_recolhida", "todos"]


def do_capitulo(capitulo: str) -> list[Exercicio]:
    """Os exercícios conferíveis de um notebook (``"cap03_variacoes_modernas"``), em ordem. Ver Introdução, "Exercícios que conferem a sua resposta"."""
    try:
        modulo = importlib.import_module(f"{__name__}.{capitulo}")
    except ModuleNotFoundError:
        return []
    return sorted((v for v in vars(modulo).values() if isinstance(v, Exercicio)), key=lambda e: e.numero)


def todos() -> list[Exercicio]:
    """Todos os exercícios conferíveis do livro, capítulo por capítulo."""
    return [ex for cap in CAPITULOS for ex in do_capitulo(cap)]


def progresso() -> None:
    """Mostra o seu progresso local por capítulo (tentados e corretos). Ver Introdução, "Exercícios que conferem a sua resposta"."""
    from . import registro
    from .nucleo import Exibivel, mostrar

    if not registro.ligado():
        mostrar(Exibivel("O registro de progresso está desligado (LNCC_LLM_PROGRESSO=0 ou CI).",
                           "<p>O registro de progresso está desligado (<code>LNCC_LLM_PROGRESSO=0</code> ou CI).</p>"))
        return
    linhas = registro.resumo({cap: [e.id for e in do_capitulo(cap)] for cap in CAPITULOS})
    largura = max(len(c) for c, *_ in linhas) if linhas else 0
    texto = "\n".join(f"{c:<{largura}} {n:>2} exercícios | {t:>2} tentados | {k:>2} corretos" for c, n, t, k in linhas)
    tabela = "".join(f"<tr><td>{c}</td><td>{n}</td><td>{t}</td><td>{k}</td></tr>" for c, n, t, k in linhas)
    mostrar(Exibivel(texto, "<table><tr><th>capítulo</th><th>exercícios</th><th>tentados</th>"
                              f"<th>corretos</th></tr>{tabela}</table>"))


def conferir_nao_tentados(notebook: str, ns: dict | None = None) -> None:
    """Depois de "Run All" (ou do nbval), sem nada escrito pelo leitor, cada verificador do notebook tem de
    responder "não tentado": as soluções não respondem pelo leitor. Levanta ``AssertionError`` se algum
    responder outra coisa. Ver Introdução, "Exercícios que conferem a sua resposta"."""
    from .nucleo import Status, _namespace_do_leitor

    if ns is None:
        ns = _namespace_do_leitor()
    respostas = {ex.id: ex.checar(ns) for ex in do_capitulo(notebook)}
    outros = {i: r for i, r in respostas.items() if r.status is not Status.NAO_TENTADO}
    assert not outros, f"depois de rodar {notebook} inteiro, estes verificadores não dizem 'não tentado': {outros}"
    print(f"{notebook}: {len(respostas)} verificadores, todos 'não tentado' depois de rodar o notebook inteiro")
