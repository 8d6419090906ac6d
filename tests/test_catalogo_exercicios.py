"""O catálogo de exercícios (``book/exercicios.md``): a página guardada é a gerada do registro, cada
notebook tem a sua seção, todo exercício conferível aparece com verificador, e os minutos de
``lncc_llm/dados/catalogo_exercicios.json`` cobrem exatamente os enunciados dos notebooks."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lncc_llm.exercicios import NOTEBOOKS, todos
from lncc_llm.exercicios.catalogo import (
    LIVRO,
    enunciados,
    ler_notebook,
    linhas,
    minutos,
    pagina_markdown,
    titulo_do_notebook,
)

RAIZ = Path(__file__).resolve().parents[1]
PAGINA = RAIZ / "book" / "exercicios.md"


@pytest.fixture(scope="module")
def catalogo():
    return linhas()


@pytest.fixture(scope="module")
def pagina():
    return pagina_markdown()


def _secao(pagina: str, notebook: str) -> str:
    """O trecho da página entre o título do notebook e o título seguinte."""
    m = re.search(rf"^## \[[^\n]*\]\({notebook}\.ipynb\)\n(.*?)(?=^## |\Z)", pagina, re.M | re.S)
    assert m, f"a página não tem a seção de {notebook}"
    return m.group(1)


def _enunciados_no_notebook(notebook: str) -> list[int]:
    """Os números ``**N. `` das células markdown da seção de exercícios, contados sem o catálogo
    (as dicas e os comentários recolhidos, ``<details…``, não são enunciados)."""
    celulas = ler_notebook(notebook)["cells"]
    fontes = ["".join(c["source"]) for c in celulas]
    inicio = next(i for i, (c, f) in enumerate(zip(celulas, fontes))
                  if c["cell_type"] == "markdown" and re.search(r"^#+ Exercícios", f, re.M))
    numeros = []
    for c, f in zip(celulas[:inicio], fontes[:inicio]):       # os núcleo, no fluxo da lição
        if c["cell_type"] == "markdown" and not f.lstrip().startswith("<details"):
            numeros += [int(m.group(2)) for m in re.finditer(r"(^|\n)\*\*Exercício (\d+) \((?:núcleo|previsão)\)\. ", f)]
    for c, f in zip(celulas[inicio:], fontes[inicio:]):
        if c["cell_type"] == "markdown" and not f.lstrip().startswith("<details"):
            numeros += [int(m.group(2)) for m in re.finditer(r"(^|\n)\*\*(\d+)\. ", f)]
    return numeros


def test_a_pagina_guardada_e_a_gerada(pagina):
    assert PAGINA.exists(), "falta book/exercicios.md: rode `python scripts/catalogo_exercicios.py`"
    assert PAGINA.read_text(encoding="utf-8") == pagina, (
        "book/exercicios.md está velha: rode `python scripts/catalogo_exercicios.py`")


def test_a_pagina_esta_no_sumario():
    toc = (RAIZ / "_toc.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s*- file: exercicios\s*$", toc, re.M)


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_cada_notebook_tem_a_sua_secao_com_link(pagina, notebook):
    titulo = titulo_do_notebook(ler_notebook(notebook))
    assert f"## [{titulo}]({notebook}.ipynb)\n" in pagina
    assert "**Total:**" in _secao(pagina, notebook)


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_os_enunciados_lidos_sao_os_do_notebook(catalogo, notebook):
    lidos = [linha.numero for linha in catalogo if linha.notebook == notebook]
    assert lidos == _enunciados_no_notebook(notebook)
    assert [n for n, _, _ in enunciados(ler_notebook(notebook))] == lidos
    assert all(linha.titulo and not linha.titulo.endswith(".") and "**" not in linha.titulo
               for linha in catalogo if linha.notebook == notebook)


def test_todo_exercicio_conferivel_aparece_com_verificador(catalogo, pagina):
    por_chave = {(linha.notebook, linha.numero): linha for linha in catalogo}
    for ex in todos():
        linha = por_chave.get((ex.capitulo, ex.numero))
        assert linha is not None, f"{ex.id} fora do catálogo (sem enunciado **{ex.numero}. …**?)"
        assert linha.verificador
        assert linha.tipo == ("núcleo" if ex.tipo == "nucleo" else "consolidação")
        tabela = _secao(pagina, ex.capitulo)
        assert re.search(rf"^\| {ex.numero} \| [^\n]* \| {linha.tipo} \| sim \| \d+ \|$", tabela,
                         re.M), f"{ex.id}: a linha da tabela não diz 'sim'"
    conferidos = {(ex.capitulo, ex.numero) for ex in todos()}
    assert all(linha.verificador == ((linha.notebook, linha.numero) in conferidos)
               for linha in catalogo)


def test_os_sem_verificador_e_sem_codigo_sao_conceituais(catalogo):
    for linha in catalogo:
        if linha.tipo == "conceitual":
            assert not linha.verificador
            caderno = ler_notebook(linha.notebook)
            assert not any(c["cell_type"] == "code" and "".join(c["source"]).startswith(
                f"# @title Solução do exercício {linha.numero} ") for c in caderno["cells"])


def test_os_minutos_cobrem_exatamente_os_enunciados(catalogo):
    tempos = minutos()
    esperado = {nb: sorted(str(linha.numero) for linha in catalogo if linha.notebook == nb)
                for nb in NOTEBOOKS}
    esperado = {nb: numeros for nb, numeros in esperado.items() if numeros}
    obtido = {nb: sorted(v) for nb, v in tempos.items()}
    faltam = {nb: sorted(set(n) - set(obtido.get(nb, []))) for nb, n in esperado.items()}
    sobram = {nb: sorted(set(n) - set(esperado.get(nb, []))) for nb, n in obtido.items()}
    assert not {k: v for k, v in faltam.items() if v}, (
        f"enunciados sem minutos em lncc_llm/dados/catalogo_exercicios.json: {faltam}")
    assert not {k: v for k, v in sobram.items() if v}, (
        f"minutos de enunciados que não existem mais: {sobram}")
    assert set(obtido) == set(esperado)


def test_os_minutos_sao_inteiros_positivos():
    arquivo = RAIZ / "lncc_llm" / "dados" / "catalogo_exercicios.json"
    dados = json.loads(arquivo.read_text(encoding="utf-8"))
    assert set(dados) - {"_sobre"} <= set(NOTEBOOKS)
    for notebook, tempos in minutos().items():
        for numero, valor in tempos.items():
            assert numero.isdigit() and type(valor) is int and valor > 0, (notebook, numero, valor)


def test_os_opcionais_sao_os_de_para_ir_alem(catalogo):
    # um exemplo de cada lado: no Capítulo 3, o exercício 1 fica no fluxo e o 2 sob "Para ir além"
    por_chave = {(linha.notebook, linha.numero): linha for linha in catalogo}
    assert not por_chave[("cap03_variacoes_modernas", 1)].opcional
    assert por_chave[("cap03_variacoes_modernas", 2)].opcional


def test_enunciados_num_notebook_de_brinquedo():
    md = lambda texto: {"cell_type": "markdown", "source": texto}  # noqa: E731
    caderno = {"cells": [
        md("## Síntese\n\n**1. Isto não é exercício.** (antes da seção)"),
        md("## Exercícios\n\n**1. Primeiro *com ênfase*.** Enunciado."),
        md('<details class="lncc-dica"><summary>Dica 1</summary>\n\n**2. Não conta.**</details>'),
        md("### Para ir além (opcional)\n\n```python\n# não é título\n```\n\n"
           "**2. Por que $x$?** Texto."),
        md("**3. Um título que\nquebra a linha.** Texto."),
        md("## Verificação do ambiente\n\n**4. Depois.** Texto."),
    ]}
    assert enunciados(caderno) == [(1, "Primeiro *com ênfase*", False), (2, "Por que $x$?", True),
                                   (3, "Um título que quebra a linha", True), (4, "Depois", False)]


def test_o_script_confere_a_pagina():
    r = subprocess.run([sys.executable, "scripts/catalogo_exercicios.py", "--conferir"], cwd=RAIZ,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_importar_o_catalogo_nao_importa_o_torch():
    codigo = ("import sys; from lncc_llm.exercicios import catalogo; catalogo.pagina_markdown(); "
              "assert 'torch' not in sys.modules, 'torch importado'")
    subprocess.run([sys.executable, "-c", codigo], check=True, cwd=RAIZ)


def test_o_livro_e_o_de_book():
    assert LIVRO == RAIZ / "book"
