"""Grava a página do catálogo de exercícios, ``book/exercicios.md``, a partir do registro.

    python scripts/catalogo_exercicios.py             # reescreve book/exercicios.md
    python scripts/catalogo_exercicios.py --conferir  # só confere: sai com 1 se ela está velha

A página sai de ``lncc_llm.exercicios.catalogo.pagina_markdown()``: os enunciados dos notebooks, o
registro dos exercícios e os minutos de ``lncc_llm/dados/catalogo_exercicios.json``. Rode de novo
depois de mudar um enunciado, um exercício ou um tempo; ``tests/test_catalogo_exercicios.py``
confere que a página guardada é a gerada.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lncc_llm.exercicios.catalogo import pagina_markdown

PAGINA = Path(__file__).resolve().parents[1] / "book" / "exercicios.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Grava book/exercicios.md, o catálogo de exercícios.")
    parser.add_argument("--conferir", action="store_true",
                        help="não grava nada; sai com 1 se book/exercicios.md difere da gerada")
    args = parser.parse_args(argv)
    texto = pagina_markdown()
    atual = PAGINA.read_text(encoding="utf-8") if PAGINA.exists() else None
    if args.conferir:
        if atual != texto:
            print(f"{PAGINA.name} está velha: rode `python scripts/catalogo_exercicios.py`")
            return 1
        print(f"{PAGINA.name}: em dia")
        return 0
    if atual == texto:
        print(f"{PAGINA.name}: já em dia")
    else:
        PAGINA.write_text(texto, encoding="utf-8")
        print(f"{PAGINA.name}: gravada")
    return 0


if __name__ == "__main__":
    sys.exit(main())
