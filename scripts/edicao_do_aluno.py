"""Grava a edição do aluno: os notebooks do livro sem as soluções dos exercícios.

    python scripts/edicao_do_aluno.py pasta/                          # todos os notebooks
    python scripts/edicao_do_aluno.py pasta/ cap03_moe_bloco cap04_feixe_cache   # só estes

Saem as células de código das soluções (``# @title Solução do exercício N …``, inclusive as
"(continuação)") e os comentários em prosa delas (``<details class="lncc-comentario">``); ficam as
dicas, as células iniciais (com a saída "Não tentado") e o resto da lição, com os mesmos ids. Para
uma turma em que as respostas não devem estar a um clique. Os notebooks só precisam do ``lncc_llm``
instalado: a pasta pode ficar em qualquer lugar. Ver README, "Edição do aluno";
``tests/test_edicao_do_aluno.py`` confere.
"""
from __future__ import annotations

import argparse
import sys

from lncc_llm.exercicios.edicao import escrever


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Grava em DESTINO os notebooks do livro sem as soluções dos exercícios.")
    parser.add_argument("destino", help="a pasta da edição do aluno (criada se não existir)")
    parser.add_argument("notebooks", nargs="*",
                        help="os notebooks (cap03_moe_bloco ...); sem nenhum, todos os do livro")
    args = parser.parse_args(argv)
    try:
        removidas = escrever(args.destino, args.notebooks or None)
    except ValueError as erro:
        parser.error(str(erro))
    for nome, n in removidas.items():
        print(f"{nome}.ipynb: {n} {'célula removida' if n == 1 else 'células removidas'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
