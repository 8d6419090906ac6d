"""Deixa o markdown dos notebooks legível fora do livro: caixas em HTML, citações autor–ano.

    python scripts/markdown_portatil.py             # converte todos os notebooks de book/
    python scripts/markdown_portatil.py --conferir  # só confere (sai com 1 se algum mudaria)

O Colab não carrega extensões, e um JupyterLab sem ``jupyterlab-myst`` mostra cru o MyST
(```` ```{admonition} ````, ``{cite}`chave```). Este script troca as caixas por ``<div>`` e
``<details>`` e as citações por texto autor–ano com link para a obra, lendo ``book/references.bib``;
o livro recebe o MyST de volta pela extensão ``book/_ext/myst_portatil.py`` (a lógica está lá).
Escreva capítulos novos em MyST, como sempre, e rode este script antes de guardar.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

RAIZ = Path(__file__).resolve().parents[1]
LIVRO = RAIZ / "book"
sys.path.insert(0, str(LIVRO / "_ext"))

from myst_portatil import para_commonmark, para_myst, referencias  # noqa: E402


def converter(caderno: dict, refs: dict) -> dict:
    for celula in caderno["cells"]:
        if celula["cell_type"] == "markdown":
            texto = "".join(celula["source"])
            # de volta ao MyST e de novo à forma portátil: um link novo no .bib chega às citações
            novo = para_commonmark(para_myst(texto), refs)
            if novo != texto:
                celula["source"] = novo.splitlines(keepends=True)
    return caderno


def main(argv: list[str]) -> int:
    conferir = "--conferir" in argv
    refs = referencias(LIVRO / "references.bib")
    velhos = []
    for caminho in sorted(LIVRO.glob("*.ipynb")):
        antes = caminho.read_text(encoding="utf-8")
        depois = json.dumps(converter(json.loads(antes), refs), indent=1, ensure_ascii=False) + "\n"
        if depois != antes:
            velhos.append(caminho.name)
            if not conferir:
                caminho.write_text(depois, encoding="utf-8")
    acao = "ainda têm MyST cru" if conferir else "convertidos"
    print(f"{len(velhos)} notebooks {acao}" + (f": {', '.join(velhos)}" if velhos else ""))
    return 1 if conferir and velhos else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
