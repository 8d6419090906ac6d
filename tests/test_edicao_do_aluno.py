"""A edição do aluno (``scripts/edicao_do_aluno.py``): os notebooks do livro sem as soluções.

Para cada notebook: nenhuma célula de solução (``# @title Solução do exercício``, inclusive as
"(continuação)"), nenhum comentário ``lncc-comentario``, nenhuma saída de solução; as dicas e as
células iniciais de cada exercício conferível continuam lá, com as saídas; saem exatamente as
células de solução e de comentário, e o resto fica igual, na mesma ordem e com os mesmos ids. Um
notebook pequeno da edição roda inteiro num kernel, e depois cada verificador ainda diz "Não
tentado".
"""
from __future__ import annotations

import copy
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lncc_llm.exercicios import NOTEBOOKS, do_capitulo
from lncc_llm.exercicios.edicao import edicao_do_aluno, escrever

RAIZ = Path(__file__).resolve().parents[1]
LIVRO = RAIZ / "book"
CADERNOS = sorted(p.stem for p in LIVRO.glob("*.ipynb"))


def _fonte(celula: dict) -> str:
    return "".join(celula["source"])


def _ler(nome: str) -> dict:
    return json.loads((LIVRO / f"{nome}.ipynb").read_text(encoding="utf-8"))


def _e_solucao(celula: dict) -> bool:
    return celula["cell_type"] == "code" and any(
        linha.lstrip().startswith("# @title Solução do exercício")
        for linha in _fonte(celula).splitlines())


def _e_comentario(celula: dict) -> bool:
    return celula["cell_type"] == "markdown" and "lncc-comentario" in _fonte(celula)


def _saidas(celula: dict) -> str:
    return json.dumps(celula.get("outputs", []), ensure_ascii=False)


def test_os_notebooks_do_livro_sao_os_do_registro():
    assert sorted(NOTEBOOKS) == CADERNOS


@pytest.mark.parametrize("nome", CADERNOS)
def test_a_edicao_nao_tem_solucao(nome):
    edicao = edicao_do_aluno(_ler(nome))
    for celula in edicao["cells"]:
        assert not _e_solucao(celula), _fonte(celula)[:80]
        assert not _e_comentario(celula), _fonte(celula)[:80]
        assert "lncc-solucao" not in _saidas(celula), _fonte(celula)[:80]
        assert "a solução de referência passa pelo verificador" not in _saidas(celula)


@pytest.mark.parametrize("nome", CADERNOS)
def test_saem_so_as_solucoes_e_os_comentarios(nome):
    original = _ler(nome)
    copia = copy.deepcopy(original)
    edicao = edicao_do_aluno(original)
    assert original == copia, "edicao_do_aluno mudou o notebook recebido"
    removiveis = [c for c in original["cells"] if _e_solucao(c) or _e_comentario(c)]
    assert len(original["cells"]) - len(edicao["cells"]) == len(removiveis)
    esperadas = [c for c in original["cells"] if not (_e_solucao(c) or _e_comentario(c))]
    assert edicao["cells"] == esperadas, "uma célula que não é solução mudou ou saiu do lugar"
    assert {k: v for k, v in edicao.items() if k != "cells"} == {
        k: v for k, v in original.items() if k != "cells"}


@pytest.mark.parametrize("nome", CADERNOS)
def test_as_dicas_e_as_celulas_iniciais_ficam(nome):
    original = _ler(nome)
    edicao = edicao_do_aluno(original)
    for ex in do_capitulo(nome):
        inicial = [i for i, c in enumerate(original["cells"]) if c["cell_type"] == "code"
                   and re.match(rf"# Exercício {ex.numero}[ :(]", _fonte(c))]
        assert len(inicial) == 1, f"{ex.id}: {len(inicial)} células iniciais no notebook"
        i = inicial[0]
        assert original["cells"][i] in edicao["cells"], f"{ex.id}: a célula inicial saiu ou mudou"
        assert original["cells"][i].get("outputs"), f"{ex.id}: a célula inicial sem saída guardada"
        if ex.dicas:
            dicas = original["cells"][i - 1]
            assert dicas["cell_type"] == "markdown"
            assert _fonte(dicas).startswith('<details class="lncc-dica">'), ex.id
            assert dicas in edicao["cells"], f"{ex.id}: as dicas saíram ou mudaram"


def test_o_script_grava_a_edicao(tmp_path):
    destino = tmp_path / "aluno"
    r = subprocess.run([sys.executable, "scripts/edicao_do_aluno.py", str(destino)], cwd=RAIZ,
                       capture_output=True, text=True, check=True)
    assert sorted(p.stem for p in destino.glob("*.ipynb")) == CADERNOS
    assert len(r.stdout.splitlines()) == len(NOTEBOOKS)
    for nome in NOTEBOOKS:
        original = _ler(nome)
        gravado = json.loads((destino / f"{nome}.ipynb").read_text(encoding="utf-8"))
        assert gravado == edicao_do_aluno(original)
        removidas = len(original["cells"]) - len(gravado["cells"])
        assert f"{nome}.ipynb: {removidas} célula" in r.stdout


def test_o_script_grava_so_os_nomeados_e_nunca_em_book(tmp_path):
    r = subprocess.run([sys.executable, "scripts/edicao_do_aluno.py", str(tmp_path),
                        "cap03_moe_bloco", "book/cap01_introducao.ipynb"], cwd=RAIZ,
                       capture_output=True, text=True, check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".edicao_do_aluno", "cap01_introducao.ipynb",
                                                          "cap03_moe_bloco.ipynb"]
    assert r.stdout.splitlines()[0].startswith("cap03_moe_bloco.ipynb: ")
    with pytest.raises(ValueError, match="book/"):
        escrever(LIVRO, ["cap03_moe_bloco"])
    with pytest.raises(ValueError, match="não é um notebook do livro"):
        escrever(tmp_path, ["cap99_inexistente"])


def test_importar_a_edicao_nao_importa_o_torch():
    codigo = ("import sys; from lncc_llm.exercicios import edicao; "
              "assert 'torch' not in sys.modules, 'torch importado'")
    subprocess.run([sys.executable, "-c", codigo], check=True, cwd=RAIZ)


def test_a_edicao_de_um_notebook_roda_inteira_e_nada_fica_respondido(tmp_path):
    """"Run All" na edição do aluno do cap03_moe_bloco (uns 10 s na CPU): nenhuma célula falha sem
    as soluções, e no fim todo verificador do notebook ainda responde "Não tentado"."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    if importlib.util.find_spec("torch") is None:   # sem importar o torch neste processo
        pytest.skip("o notebook precisa do torch")
    nome = "cap03_moe_bloco"
    edicao = edicao_do_aluno(_ler(nome))
    assert len(edicao["cells"]) < len(_ler(nome)["cells"])
    edicao["cells"].append({
        "cell_type": "code", "execution_count": None, "id": "conferir-nao-tentados", "metadata": {},
        "outputs": [],
        "source": f"from lncc_llm.exercicios import conferir_nao_tentados\n"
                  f"conferir_nao_tentados({nome!r})",
    })
    caderno = nbformat.reads(json.dumps(edicao), as_version=4)   # as fontes em listas viram texto
    cliente = nbclient.NotebookClient(caderno, timeout=600, kernel_name="python3",
                                      resources={"metadata": {"path": str(tmp_path)}})
    cliente.execute()   # CellExecutionError se uma célula falhar (a última: AssertionError)
    erros = [s for c in caderno.cells if c.cell_type == "code" for s in c.outputs
             if s.output_type == "error"]
    assert not erros, erros


def test_na_pasta_da_edicao_a_solucao_nao_sai_pelo_mostrar_solucao(tmp_path, monkeypatch, capsys):
    from lncc_llm.exercicios import MARCA_DA_EDICAO, nucleo
    from lncc_llm.exercicios.cap03_moe_bloco import ex1

    escrever(tmp_path, ["cap03_moe_bloco"])
    assert (tmp_path / MARCA_DA_EDICAO).exists()
    monkeypatch.delenv("LNCC_LLM_SEM_SOLUCOES", raising=False)
    mostrados = []
    monkeypatch.setattr(nucleo, "mostrar", lambda obj: mostrados.append(repr(obj)))
    monkeypatch.setattr(nucleo.registro, "registrar", lambda *a, **k: None)
    ex1.mostrar_solucao()                                     # fora da pasta: a solução aparece
    assert "MoELayer" in mostrados[-1]
    monkeypatch.chdir(tmp_path)
    ex1.mostrar_solucao()
    assert "MoELayer" not in mostrados[-1] and "ficam com o professor" in mostrados[-1]
    ex1.dica(len(ex1.dicas))                                  # a última dica não aponta a solução
    assert "mostrar_solucao" not in mostrados[-1] and "recolhida" not in mostrados[-1]
