#!/usr/bin/env python3
"""Reexecuta os notebooks do livro no lugar, na ordem do _toc.yml, para atualizar as saídas
guardadas.

Uso, da raiz do repositório:  python scripts/executar_notebooks.py [trecho-do-nome ...]
Sem argumentos, reexecuta todos. Roda como o nbval: calado (LNCC_LLM_QUIET=1) e offline.
"""
import os
import sys
import time
from pathlib import Path

import nbformat
import yaml
from nbconvert.preprocessors import ExecutePreprocessor

ROOT = Path(__file__).resolve().parents[1]


def notebooks_in_toc_order():
    """Lista os .ipynb de book/ na ordem em que aparecem no _toc.yml."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    found = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if key in node:
                    path = ROOT / "book" / node[key]
                    path = path if path.suffix else path.with_suffix(".ipynb")
                    if path.suffix == ".ipynb" and path.exists():
                        found.append(path)
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return found


def main(filters):
    os.environ["LNCC_LLM_QUIET"] = "1"
    os.environ["LNCC_LLM_PROGRESSO"] = "0"  # sem registro de progresso dos exercícios
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.pop("MPLBACKEND", None)  # o kernel usa o backend inline do Jupyter
    paths = [p for p in notebooks_in_toc_order()
             if not filters or any(f in p.name for f in filters)]
    if not paths:
        sys.exit("Nenhum notebook encontrado no _toc.yml com esses nomes.")
    for path in paths:
        start = time.perf_counter()
        nb = nbformat.read(path, as_version=4)
        ExecutePreprocessor(timeout=900, kernel_name="python3", record_timing=False).preprocess(
            nb, {"metadata": {"path": str(path.parent)}}
        )
        nbformat.write(nb, path)
        print(f"{path.relative_to(ROOT)}: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
