"""A estimativa de sessão de ``scripts/sessao_estimada.py``: a regra (o que conta e o que não conta) e o
limite de cerca de 90 minutos por notebook (EDITORIAL.md, §6)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

RAIZ = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("sessao_estimada", RAIZ / "scripts" / "sessao_estimada.py")
sessao = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sessao)

# Notebooks que ainda passam dos 90 minutos, cada um com a issue que os reparte ou enxuga. Quando um
# deles baixar, tire-o daqui: o teste abaixo também falha se a lista sobrar.
ACIMA_DE_90 = {
    "cap09_tendencias": "issue 55 (Capítulo 8, avaliação, e Capítulo 9)",
}


def _notebook(tmp_path, celulas):
    caminho = tmp_path / "nb.ipynb"
    caminho.write_text(json.dumps({"cells": celulas}), encoding="utf-8")
    return caminho.stem


def _md(texto):
    return {"cell_type": "markdown", "source": texto}


def _codigo(texto, saida="", tags=None):
    saidas = [{"output_type": "stream", "name": "stdout", "text": saida}] if saida else []
    return {"cell_type": "code", "source": texto, "outputs": saidas, "metadata": {"tags": tags or []}}


def test_a_regra_conta_so_o_fluxo_principal(tmp_path, monkeypatch):
    monkeypatch.setattr(sessao, "LIVRO", tmp_path)
    nome = _notebook(tmp_path, [
        _md("## 1 Seção\n\num dois três quatro cinco seis sete oito nove dez "
            "[link](https://exemplo.org/um/dois/tres)\n\n"
            '<details class="admonition dropdown"><summary>x</summary>\n\nnão conta não conta\n\n</details>'),
        _md('<details class="lncc-dica"><summary>Dica 1</summary>\n\nnão conta\n\n</details>'),
        _md("**Exercício 1 (núcleo).** este enunciado conta no tempo do exercício"),
        _codigo("x = 1\ny = 2", saida="a\nb\n"),
        _codigo("# @title Figura\nplt.plot()", tags=["hide-input"]),        # recolhida: não conta
        _codigo("# Exercício 1 (uma dica por vez)\nresposta = ____"),        # célula do exercício: não conta
        _md("## Exercícios\n\n**2. Um enunciado do fim.** também conta no exercício"),
        _md("### Para ir além (opcional)\n\nnada daqui conta"),
        _codigo("z = 3"),
    ])
    medida = sessao.leitura_e_celulas(nome)
    assert medida["palavras"] == 14     # "## 1 Seção", as dez palavras e o texto do link (o endereço não conta)
    assert medida["celulas"] == 1 and medida["figuras"] == 0
    esperado = 14 / sessao.PALAVRAS_POR_MINUTO + sessao.MIN_POR_CELULA + (2 + 2) * sessao.MIN_POR_LINHA
    assert medida["minutos"] == pytest.approx(esperado)


def test_cada_notebook_cabe_em_cerca_de_90_minutos():
    estimativas = sessao.estimativas()
    acima = {nome: round(e["total"]) for nome, e in estimativas.items() if e["total"] > 92}
    novos = {nome: minutos for nome, minutos in acima.items() if nome not in ACIMA_DE_90}
    assert not novos, f"passam de cerca de 90 minutos (reparta ou leve para 'Para ir além'): {novos}"
    sobram = set(ACIMA_DE_90) - set(acima)
    assert not sobram, f"já cabem em 90 minutos: tire-os de ACIMA_DE_90: {sorted(sobram)}"


@pytest.mark.parametrize("notebook", ["cap04_inferencia_causal", "cap04_feixe_cache", "cap05_prompting_icl",
                                      "cap05_instrucoes_raciocinio"])
def test_os_notebooks_dos_capitulos_4_e_5_cabem_em_90_minutos(notebook):
    assert sessao.estimativas([notebook])[notebook]["total"] <= 90
