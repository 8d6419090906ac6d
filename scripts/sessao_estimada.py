"""Estima quanto tempo de trabalho cada notebook pede ao leitor da Introdução ("Para quem é"): a
leitura do fluxo principal, as células da lição e os exercícios obrigatórios. O livro promete uma
sessão de cerca de 90 minutos por notebook (``book/intro.md``; ``EDITORIAL.md``, §6).

    python scripts/sessao_estimada.py            # a tabela, notebook por notebook
    python scripts/sessao_estimada.py cap04_feixe_cache cap05_prompting_icl

É uma estimativa, com a regra escrita aqui, para que duas leituras do mesmo notebook deem o mesmo
número e uma mudança no texto mostre o efeito dela:

- **leitura**: as palavras do markdown do fluxo principal a 130 palavras por minuto (texto técnico,
  com fórmulas), sem o que fica recolhido (as caixas ``dropdown``, as dicas e as soluções), sem os
  enunciados (o tempo deles está no do exercício) e sem nada de "Para ir além (opcional)" em diante;
- **células**: 0,3 min por célula de código da lição, 0,03 min por linha de código e por linha de
  saída impressa, 0,5 min por figura (as células dos exercícios e as soluções não contam; de uma
  célula de desenho recolhida, conta a figura, não o código);
- **exercícios**: os minutos dos enunciados obrigatórios, de
  ``lncc_llm/dados/catalogo_exercicios.json``.

``tests/test_sessao_estimada.py`` confere a regra e que cada notebook fica perto dos 90 minutos.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from lncc_llm.exercicios import NOTEBOOKS
from lncc_llm.exercicios.catalogo import linhas

LIVRO = Path(__file__).resolve().parents[1] / "book"
PALAVRAS_POR_MINUTO = 130
MIN_POR_CELULA, MIN_POR_LINHA, MIN_POR_FIGURA = 0.3, 0.03, 0.5

_PARA_IR_ALEM = re.compile(r"^#{2,4} .*Para ir além", re.M)
_RECOLHIDO = re.compile(r'<details class="admonition dropdown">.*?</details>', re.S)
_ENUNCIADO = re.compile(r"\*\*Exercício \d.*", re.S)
_LINK = re.compile(r"\(https?://[^)]*\)")
_NAO_E_LICAO = ("# Exercício", "# @title Solução", "# @title Instalação")


def leitura_e_celulas(notebook: str) -> dict[str, float]:
    """Palavras lidas, células, linhas e figuras do fluxo principal de ``book/<notebook>.ipynb``,
    e os minutos que elas pedem pela regra do módulo."""
    celulas = json.loads((LIVRO / f"{notebook}.ipynb").read_text(encoding="utf-8"))["cells"]
    palavras = codigo = linhas_de_codigo = figuras = linhas_de_saida = 0
    for celula in celulas:
        fonte = "".join(celula["source"])
        if celula["cell_type"] == "markdown":
            if _PARA_IR_ALEM.search(fonte):
                break
            if fonte.lstrip().startswith("<details"):            # dica ou comentário de solução
                continue
            fonte = fonte.split("## Exercícios")[0]       # os enunciados do fim contam no exercício
            fonte = _ENUNCIADO.sub("", _RECOLHIDO.sub("", fonte))
            palavras += len(_LINK.sub("", fonte).split())
        elif fonte.strip() and not fonte.startswith(_NAO_E_LICAO):
            recolhida = "hide-input" in celula.get("metadata", {}).get("tags", [])
            if not recolhida:              # de uma figura recolhida, lê-se a figura, não o código
                codigo += 1
                linhas_de_codigo += len(fonte.splitlines())
            for saida in celula.get("outputs", []):
                if "image/png" in saida.get("data", {}):
                    figuras += 1
                elif saida["output_type"] == "stream" and not recolhida:
                    linhas_de_saida += len("".join(saida["text"]).splitlines())
    minutos = (palavras / PALAVRAS_POR_MINUTO + codigo * MIN_POR_CELULA
               + (linhas_de_codigo + linhas_de_saida) * MIN_POR_LINHA + figuras * MIN_POR_FIGURA)
    return {"palavras": palavras, "celulas": codigo, "figuras": figuras, "minutos": minutos}


def estimativas(notebooks: list[str] | None = None) -> dict[str, dict[str, float]]:
    """``{notebook: {"leitura": min, "exercicios": min, "total": min, ...}}``, pela regra acima."""
    obrigatorios: dict[str, int] = {}
    for linha in linhas():
        if not linha.opcional:
            anterior = obrigatorios.get(linha.notebook, 0)
            obrigatorios[linha.notebook] = anterior + (linha.minutos or 0)
    saida = {}
    for notebook in notebooks or NOTEBOOKS:
        base = leitura_e_celulas(notebook)
        exercicios = obrigatorios.get(notebook, 0)
        saida[notebook] = dict(base, leitura=base["minutos"], exercicios=exercicios,
                               total=base["minutos"] + exercicios)
    return saida


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Estima a sessão de cada notebook (leitura + exercícios).")
    parser.add_argument("notebooks", nargs="*", help="nomes sem .ipynb (padrão: todos)")
    args = parser.parse_args(argv)
    print(f"{'notebook':<34} {'palavras':>8} {'leitura e células':>18} {'exercícios':>11} "
          f"{'total':>6}")
    for notebook, e in estimativas(args.notebooks or None).items():
        print(f"{notebook:<34} {e['palavras']:>8} {e['leitura']:>14.0f} min "
              f"{e['exercicios']:>7} min {e['total']:>6.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
