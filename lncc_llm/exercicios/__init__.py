"""Exercícios que conferem a resposta do leitor: ``exN.verificar()``, ``exN.dica()`` e a solução recolhida.

Cada capítulo tem o seu módulo (``cap02``, ``cap03``, …, ``apA``) com os exercícios ``ex1``, ``ex2``…;
o notebook faz ``from lncc_llm.exercicios.cap03 import ____, ex1, ex2``. Importar este pacote não importa o
torch. Como usar: ``intro.md``, "Exercícios que conferem a sua resposta".
"""
from __future__ import annotations

import importlib

from .comparar import Incorreto, comparar
from .nucleo import ErroComum, Exercicio, Resultado, Status, ____, saida_recolhida

CAPITULOS = ("cap01", "cap02", "cap02_atencao_camada", "cap03", "cap03_moe_bloco", "cap04", "cap04_feixe_cache", "cap05", "cap05_instrucoes_raciocinio", "cap06", "cap06_velocidade_memoria", "cap07", "cap07_sft_lora_qlora", "cap07_sft_na_pratica", "cap08_alinhamento", "cap08_rl_grpo",
             "cap08_avaliacao", "cap08_vieses_harness", "cap09", "apA", "apA_treino", "apB")

__all__ = ["____", "CAPITULOS", "ErroComum", "Exercicio", "Incorreto", "Resultado", "Status", "comparar",
           "do_capitulo", "progresso", "saida_recolhida", "todos"]


def do_capitulo(capitulo: str) -> list[Exercicio]:
    """Os exercícios conferíveis de um capítulo (``"cap03"``), em ordem. Ver Introdução, "Exercícios que conferem a sua resposta"."""
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
    texto = "\n".join(f"{c:<18} {n:>2} exercícios | {t:>2} tentados | {k:>2} corretos" for c, n, t, k in linhas)
    tabela = "".join(f"<tr><td>{c}</td><td>{n}</td><td>{t}</td><td>{k}</td></tr>" for c, n, t, k in linhas)
    mostrar(Exibivel(texto, "<table><tr><th>capítulo</th><th>exercícios</th><th>tentados</th>"
                              f"<th>corretos</th></tr>{tabela}</table>"))
