"""Cada exercício conferível carrega a própria prova (issue 34), sem kernel:

- a solução de referência (o código da célula recolhida) passa pelo verificador;
- cada erro comum falha com a sua própria mensagem;
- corrupções genéricas falham (1 % a mais, formato errado, ``None``, a entrada devolvida sem mudança);
- a lacuna ``____`` conta como "não tentado";
- a saída é a mesma em duas execuções;
- as células do notebook são as geradas das definições (a solução do notebook = a referência).
"""
from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lncc_llm.exercicios import Status, ____, todos
from lncc_llm.exercicios.celulas import (
    celula_dicas,
    celula_inicial,
    celula_solucao,
    posicao_do_enunciado,
)

RAIZ = Path(__file__).resolve().parents[1]
EXERCICIOS = todos()
IDS = [ex.id for ex in EXERCICIOS]


@pytest.fixture(scope="module")
def resolvidos():
    """O namespace de cada exercício depois de rodar a solução de referência (uma vez por exercício)."""
    cache = {}

    def resolver(ex):
        if ex.id not in cache:
            ns = ex.contexto()
            import matplotlib.pyplot as plt
            exec(compile(ex.solucao, f"<solução de {ex.id}>", "exec"), ns)
            plt.close("all")
            cache[ex.id] = ns
        return dict(cache[ex.id])

    return resolver


def _corrupcoes(valor):
    """Respostas erradas genéricas para um valor certo: cada uma tem de ser recusada."""
    if callable(valor) and not isinstance(valor, type):
        yield "devolve a entrada sem mudança", lambda *args, **kw: args[0] if args else None
        yield "devolve None", lambda *args, **kw: None
        return
    yield "None", None
    if isinstance(valor, dict):
        yield "dicionário vazio", {}
        return
    if isinstance(valor, str):
        yield "texto trocado", valor + " x"
        return
    if hasattr(valor, "detach"):
        valor = valor.detach().cpu().double().numpy()
    arr = np.asarray(valor)
    if arr.dtype.kind in "biu":
        yield "um a mais", arr + 1
    elif arr.dtype.kind == "f":
        yield "1 % a mais", arr * 1.01 + (arr == 0) * 0.01
    if arr.ndim >= 1:
        yield "formato errado", np.concatenate([arr.ravel(), arr.ravel()[:1]])
    else:
        yield "formato errado", np.stack([arr, arr])


def test_ha_exercicios_em_todos_os_capitulos_com_resposta_computavel():
    assert len(EXERCICIOS) >= 5
    assert len(set(IDS)) == len(IDS)


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_solucao_de_referencia_passa(ex, resolvidos):
    resultado = ex.checar(resolvidos(ex))
    assert resultado.status is Status.CORRETO, repr(resultado)


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_lacuna_conta_como_nao_tentado(ex, resolvidos):
    ns = resolvidos(ex)
    for nome in ex.variaveis:
        vazio = dict(ns, **{nome: ____})
        assert ex.checar(vazio).status is Status.NAO_TENTADO
        sem = {k: v for k, v in ns.items() if k != nome}
        assert ex.checar(sem).status is Status.NAO_TENTADO


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_cada_erro_comum_falha_com_a_sua_mensagem(ex, resolvidos):
    ns = resolvidos(ex)
    mensagens = [erro.mensagem for erro in ex.erros_comuns]
    assert len(set(mensagens)) == len(mensagens), "duas mensagens iguais não distinguem os erros"
    for erro in ex.erros_comuns:
        errado = dict(ns, **erro.resposta(ns))
        resultado = ex.checar(errado)
        assert resultado.status is Status.INCORRETO, f"{erro.mensagem!r} foi aceito"
        assert resultado.mensagem == erro.mensagem, f"esperava {erro.mensagem!r}, veio {resultado.mensagem!r}"


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_corrupcoes_genericas_falham(ex, resolvidos):
    ns = resolvidos(ex)
    for nome in ex.variaveis:
        for descricao, errado in _corrupcoes(ns[nome]):
            resultado = ex.checar(dict(ns, **{nome: errado}))
            assert resultado.status in (Status.INCORRETO, Status.ERRO), f"{nome}: {descricao} foi aceito"
            assert resultado.mensagem, f"{nome}: {descricao} sem diagnóstico"


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_saida_deterministica(ex, resolvidos):
    ns = resolvidos(ex)
    assert ex.checar(ns)._repr_html_() == ex.checar(ns)._repr_html_()
    nome = ex.variaveis[0]
    for _, errado in _corrupcoes(ns[nome]):
        a, b = ex.checar(dict(ns, **{nome: errado})), ex.checar(dict(ns, **{nome: errado}))
        assert (repr(a), a._repr_html_()) == (repr(b), b._repr_html_())


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_celulas_do_notebook_sao_as_geradas(ex):
    notebook = importlib.import_module(f"lncc_llm.exercicios.{ex.capitulo}").NOTEBOOK
    caderno = json.loads((RAIZ / "book" / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    celulas = caderno["cells"]
    i = posicao_do_enunciado(celulas, ex.numero)
    fontes = ["".join(c["source"]) for c in celulas[i + 1:i + 4]]
    assert fontes == [celula_dicas(ex), celula_inicial(ex), celula_solucao(ex)], (
        f"{notebook}: as células do exercício {ex.numero} não são as geradas; rode "
        f"`python scripts/exercicios_nos_notebooks.py {ex.capitulo}` e reexecute o notebook")
    solucao = celulas[i + 3]
    assert solucao["metadata"].get("cellView") == "form" and solucao["metadata"]["jupyter"]["source_hidden"]
    saida = "".join("".join(o.get("data", {}).get("text/html", "")) for o in solucao.get("outputs", []))
    assert saida.startswith('<details class="lncc-solucao">'), "a saída guardada da solução não está recolhida"
    inicial = celulas[i + 2]
    texto = "".join("".join(o.get("data", {}).get("text/plain", "")) for o in inicial.get("outputs", []))
    assert texto.startswith("[..] Não tentado"), "a saída guardada da célula inicial deveria ser 'não tentado'"


def test_importar_os_exercicios_nao_importa_o_torch():
    codigo = ("import sys, lncc_llm.exercicios as e; e.todos(); "
              "assert 'torch' not in sys.modules, 'torch importado'")
    subprocess.run([sys.executable, "-c", codigo], check=True, cwd=RAIZ)


def test_resposta_que_levanta_excecao_vira_uma_linha():
    from lncc_llm.exercicios import Exercicio

    ex = Exercicio("cap00.ex1", "teste", ("f",), (), esperado=lambda ns: {"f": lambda x: x * 2},
                   entradas=lambda ns: [(1,), (2,)])

    def quebrada(x):
        raise ValueError("ops\nsegunda linha")

    resultado = ex.checar({"f": quebrada})
    assert resultado.status is Status.ERRO
    assert resultado.mensagem == "`f` levantou ValueError: ops (na chamada de teste 1 de 2)."

    def nao_feita(x):
        raise NotImplementedError

    assert ex.checar({"f": nao_feita}).status is Status.NAO_TENTADO
    assert ex.checar({"f": lambda x: ____}).status is Status.NAO_TENTADO
    assert ex.checar({"f": lambda x: x * 2}).status is Status.CORRETO


def test_saida_recolhida_esconde_a_saida_num_details():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from lncc_llm.exercicios import saida_recolhida

    InteractiveShell.instance()
    with capture_output() as fora:
        with saida_recolhida("Saída da solução do exercício 9"):
            print("x = 1 < 2")
    assert "x = 1" not in fora.stdout                      # nada solto: só o bloco recolhido
    html = fora.outputs[0].data["text/html"]
    assert html.startswith('<details class="lncc-solucao"><summary><b>Saída da solução do exercício 9</b>')
    assert "x = 1 &lt; 2" in html and "passa pelo verificador" not in html


@pytest.mark.parametrize("capitulo", sorted({ex.capitulo for ex in EXERCICIOS}))
def test_sincronizar_um_notebook_em_dia_nao_muda_nada(capitulo):
    """O script que gera as células não apaga as saídas guardadas de uma célula que já é a gerada."""
    import copy

    from lncc_llm.exercicios import do_capitulo
    from lncc_llm.exercicios.celulas import sincronizar

    notebook = importlib.import_module(f"lncc_llm.exercicios.{capitulo}").NOTEBOOK
    caderno = json.loads((RAIZ / "book" / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    assert sincronizar(copy.deepcopy(caderno), do_capitulo(capitulo), notebook) == caderno


def test_o_pacote_instalado_leva_os_exercicios_e_as_solucoes():
    """Uma instalação que não é editável (o Colab: ``pip install git+…``) precisa do subpacote
    ``lncc_llm.exercicios`` e das soluções de referência em ``dados/exercicios``."""
    import tomllib

    config = tomllib.loads((RAIZ / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    pacotes = {p.parent.relative_to(RAIZ).as_posix().replace("/", ".")
               for p in (RAIZ / "lncc_llm").rglob("__init__.py")}
    assert pacotes <= set(config["packages"]), f"faltam em packages: {sorted(pacotes - set(config['packages']))}"
    padroes = config["package-data"]["lncc_llm"]
    for arquivo in (RAIZ / "lncc_llm" / "dados").rglob("*"):
        if arquivo.is_file():
            relativo = arquivo.relative_to(RAIZ / "lncc_llm")
            assert any(relativo.match(padrao) for padrao in padroes), f"{relativo} fora do package-data"
