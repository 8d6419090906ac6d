"""Reescreve nos notebooks as células dos exercícios conferíveis (dicas, inicial, solução).

    python scripts/exercicios_nos_notebooks.py            # todos os capítulos
    python scripts/exercicios_nos_notebooks.py cap03_moe_bloco apendice_a_treino  # só estes

As células saem das definições em ``lncc_llm/exercicios/<notebook>.py`` e das soluções de referência
em ``lncc_llm/dados/exercicios/``; as saídas das células novas ficam vazias até o notebook ser
reexecutado (``python scripts/executar_notebooks.py capNN``). ``tests/test_exercicios.py`` confere
que as células dos notebooks são exatamente as geradas.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from lncc_llm.exercicios import NOTEBOOKS, do_capitulo
from lncc_llm.exercicios.celulas import sincronizar

LIVRO = Path(__file__).resolve().parents[1] / "book"

def main(capitulos: list[str]) -> None:
    for notebook in capitulos or NOTEBOOKS:
        exercicios = do_capitulo(notebook)
        caminho = LIVRO / f"{notebook}.ipynb"
        caderno = json.loads(caminho.read_text(encoding="utf-8"))
        antes = json.dumps(caderno, indent=1, ensure_ascii=False) + "\n"
        novo = sincronizar(caderno, exercicios, notebook)
        depois = json.dumps(novo, indent=1, ensure_ascii=False) + "\n"
        if depois != antes:
            caminho.write_text(depois, encoding="utf-8")
            print(f"{caminho.name}: {len(exercicios)} exercícios reescritos")
        else:
            print(f"{caminho.name}: já em dia")


if __name__ == "__main__":
    main(sys.argv[1:])
