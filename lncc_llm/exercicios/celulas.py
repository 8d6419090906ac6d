"""As células de cada exercício nos notebooks, geradas das definições (e conferidas por ``tests/``).

Para cada exercício conferível, logo depois do enunciado: as dicas em ``<details>`` (markdown, sem kernel),
a célula inicial que o leitor completa e a célula da solução, recolhida no livro (tag ``hide-input``), no
JupyterLab (``jupyter.source_hidden``) e no Colab (``# @title`` com ``cellView: form``), com a saída
dentro de um ``<details>``. Os comentários "Solução do exercício N (comentário)" viram ``<details>`` também.
``python scripts/exercicios_nos_notebooks.py`` reescreve as células; os testes só conferem.
"""
from __future__ import annotations

import hashlib
import json
import re
import textwrap

from .nucleo import Exercicio

METADADOS_SOLUCAO = {"cellView": "form", "jupyter": {"source_hidden": True}, "tags": ["hide-input"]}
_DETAILS_SEM_CLASSE = re.compile(r"^<details><summary><b>Solução")
_COMENTARIO = re.compile(
    r"^(`{3,})\{admonition\} (Solução[^\n]*)\n:class: dropdown\n\n?(.*?)\n\1[ \t]*$", re.S)


def celula_dicas(ex: Exercicio) -> str:
    return ex.dicas_markdown()


def celula_inicial(ex: Exercicio) -> str:
    """A célula que o leitor completa: a linha do import fica como está; as de baixo têm ``____``."""
    o_que = ("escreva o corpo da função no lugar de cada ____"
             if ex.tipo == "nucleo" and ex.inicio.startswith(("def ", "class "))
             else "troque cada ____ pela sua resposta")
    return (f"# Exercício {ex.numero} (uma dica por vez: {ex.nome}.dica()); os dois imports ficam como estão\n"
            "from lncc_llm.exercicios import ____\n"
            f"from lncc_llm.exercicios.{ex.capitulo} import {ex.nome}\n"
            + ("\n\n" if ex.inicio.startswith(("def ", "class ")) else "\n")   # o espaço que o ruff pede
            + f"# Sua resposta: {o_que}, nas linhas abaixo\n"
            f"{ex.inicio}\n"
            + ("\n\n" if ex.inicio.startswith(("def ", "class ")) else "")
            + f"{ex.nome}.verificar()"
            + (f"\n# A lição segue com a versão do lncc_llm; descomentada, a linha abaixo põe a sua na lição:\n"
               f"# {ex.seguir}" if ex.tipo == "nucleo" else ""))


def celula_solucao(ex: Exercicio) -> str:
    corpo = textwrap.indent(ex.solucao.strip("\n"), "    ", lambda linha: linha.strip() != "")
    return (f"# @title Solução do exercício {ex.numero} (abra depois de tentar)\n"
            f"from lncc_llm.exercicios.{ex.capitulo} import {ex.nome}\n\n"
            f"with {ex.nome}.solucao_recolhida():\n{corpo}")


def celula_saida_recolhida(fonte: str) -> str | None:
    """Uma solução com código mas sem verificador (reflexão, experimento): a mesma célula, com a saída
    dentro de ``saida_recolhida``. Devolve ``None`` se a célula não é uma solução ou já foi convertida."""
    primeira, _, corpo = fonte.partition("\n")
    m = re.match(r"# Solução do exercício (\d+)(.*)$", primeira)
    if not m:
        return None
    resto = m.group(2).strip()
    titulo = f"Saída da solução do exercício {m.group(1)}" + (f" {resto}" if resto else "")
    corpo = textwrap.indent(corpo.strip("\n"), "    ", lambda linha: linha.strip() != "")
    return (f"# @title Solução do exercício {m.group(1)}{(' ' + resto) if resto else ''} (abra depois de tentar)\n"
            "from lncc_llm.exercicios import saida_recolhida\n\n"
            f"with saida_recolhida({titulo!r}):\n{corpo}")


def comentario_em_details(fonte: str) -> str:
    """Troca um dropdown MyST "Solução …" por ``<details>`` (o MyST não abre fechado no JupyterLab/Colab)."""
    antigo = _DETAILS_SEM_CLASSE.match(fonte)
    if antigo:
        return '<details class="lncc-comentario">' + fonte[len("<details>"):]
    m = _COMENTARIO.match(fonte.strip("\n"))
    if not m:
        return fonte
    return (f'<details class="lncc-comentario"><summary><b>{m.group(2)}</b></summary>\n\n'
            f"{m.group(3).strip(chr(10))}\n\n</details>")


def _id(notebook: str, ex: Exercicio, papel: str) -> str:
    return hashlib.sha1(f"{notebook}:{ex.id}:{papel}".encode()).hexdigest()[:8]


def _markdown(fonte: str, id_: str) -> dict:
    return {"cell_type": "markdown", "id": id_, "metadata": {}, "source": fonte.splitlines(keepends=True)}


def _codigo(fonte: str, id_: str, metadados: dict) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": id_, "metadata": metadados,
            "outputs": [], "source": fonte.splitlines(keepends=True)}


def _fonte(celula: dict) -> str:
    return "".join(celula["source"])


def posicao_do_enunciado(celulas: list[dict], numero: int) -> int:
    """O índice da célula markdown com o enunciado: ``**Exercício N (núcleo). …**`` no fluxo da lição
    (um exercício núcleo; ``(previsão)`` num exercício curto de prever um número antes de medi-lo) ou
    ``**N. …**`` na seção de exercícios."""
    for i, celula in enumerate(celulas):
        if celula["cell_type"] == "markdown" and re.search(
                rf"(^|\n)\*\*Exercício {numero} \((?:núcleo|previsão)\)\. ", _fonte(celula)):
            return i
    inicio = next((i for i, c in enumerate(celulas) if c["cell_type"] == "markdown"
                   and re.search(r"^#+ Exercícios", _fonte(c), re.M)), 0)
    for i in range(inicio, len(celulas)):
        if celulas[i]["cell_type"] == "markdown" and re.search(rf"(^|\n)\*\*{numero}\. ", _fonte(celulas[i])):
            return i
    raise LookupError(f"enunciado do exercício {numero} não encontrado")


def _e_gerada(celula: dict, ex: Exercicio) -> bool:
    fonte = _fonte(celula)
    primeira = fonte.split("\n", 1)[0]
    if celula["cell_type"] == "markdown":
        return fonte.startswith(('<details class="lncc-dica"><summary>Dica 1</summary>',
                                 "<details><summary>Dica 1</summary>"))
    return (re.match(rf"# Exercício {ex.numero}[: ]", primeira) is not None
            or re.search(rf"Solução do exercício {ex.numero}\b(?! \(continuação)", primeira) is not None)


def sincronizar(caderno: dict, exercicios: list[Exercicio], notebook: str) -> dict:
    """Reescreve, no notebook, as células de dicas, inicial e de solução de cada exercício conferível."""
    celulas = caderno["cells"]
    for ex in exercicios:
        i = posicao_do_enunciado(celulas, ex.numero)
        j = i + 1
        antigas = []
        while j < len(celulas) and _e_gerada(celulas[j], ex):
            antigas.append(celulas.pop(j))
        ids = {("solucao" if c["cell_type"] == "code" and "Solução" in _fonte(c).split("\n", 1)[0] else
                "inicial" if c["cell_type"] == "code" else "dicas"): c.get("id") for c in antigas}
        novas = [
            _markdown(celula_dicas(ex), ids.get("dicas") or _id(notebook, ex, "dicas")),
            _codigo(celula_inicial(ex), ids.get("inicial") or _id(notebook, ex, "inicial"), {}),
            _codigo(celula_solucao(ex), ids.get("solucao") or _id(notebook, ex, "solucao"),
                    dict(METADADOS_SOLUCAO)),
        ]
        if not ex.dicas:
            novas = novas[1:]
        # uma célula que já é a gerada fica como está, com as saídas guardadas
        iguais = {(c["cell_type"], _fonte(c), json.dumps(c.get("metadata", {}), sort_keys=True)): c
                  for c in antigas}
        novas = [iguais.get((c["cell_type"], _fonte(c), json.dumps(c["metadata"], sort_keys=True)), c)
                 for c in novas]
        celulas[i + 1:i + 1] = novas
    for celula in celulas:
        if celula["cell_type"] == "code":
            nova = celula_saida_recolhida(_fonte(celula))
            if nova is not None:
                celula["source"] = nova.splitlines(keepends=True)
                celula["metadata"] = {**celula.get("metadata", {}), **METADADOS_SOLUCAO,
                                      "jupyter": {**celula.get("metadata", {}).get("jupyter", {}),
                                                  "source_hidden": True}}
        if celula["cell_type"] == "markdown":
            nova = comentario_em_details(_fonte(celula))
            if nova != _fonte(celula):
                celula["source"] = nova.splitlines(keepends=True)
    return caderno

