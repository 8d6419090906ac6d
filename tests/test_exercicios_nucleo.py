"""O núcleo dos exercícios sem kernel: os diagnósticos genéricos de ``comparar``, o veredito, as dicas
e o registro local de progresso (desligado sob a CI)."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from lncc_llm.exercicios import ErroComum, Exercicio, Incorreto, Status, ____, comparar, registro

M = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
P = np.array([0.7, 0.2, 0.1])


@pytest.mark.parametrize("obtido, trecho", [
    (None, "é None"),
    (M.T, "está transposta"),
    (M[:, :2], "tem formato (2, 2)"),
    (M * 2, "fator constante de 2"),
    (M / 2, "fator constante de 0.5"),
    (np.where(M > 5, np.nan, M), "tem NaN"),
    ("texto", "deveria ser um número"),
])
def test_comparar_diagnostica_os_erros_genericos(obtido, trecho):
    with pytest.raises(Incorreto, match=re.escape(trecho)):
        comparar(obtido, M)


def test_comparar_reconhece_log_no_lugar_da_probabilidade():
    with pytest.raises(Incorreto, match="parece estar em log"):
        comparar(np.log(P), P)
    with pytest.raises(Incorreto, match="probabilidade onde se pedia o log"):
        comparar(P, np.log(P))


def test_comparar_aceita_o_certo_em_qualquer_embalagem():
    torch = pytest.importorskip("torch")
    comparar(torch.tensor(M, dtype=torch.float32), M)
    comparar(M.tolist(), M)
    comparar({"a": 1, "b": [1.0, 2.0]}, {"a": 1, "b": (1.0, 2.0)})
    comparar(3, 3)
    with pytest.raises(Incorreto, match="não é o valor esperado"):
        comparar(4, 3)
    with pytest.raises(Incorreto, match="faltam as chaves 'b'"):
        comparar({"a": 1}, {"a": 1, "b": 2})
    comparar(M * (1 + 1e-6), M)                      # dentro de rtol = 1e-4
    with pytest.raises(Incorreto):
        comparar(M * 1.01, M)                         # 1 % fora


def _ex(**kw):
    base = dict(esperado=lambda ns: {"x": 2.0},
                erros_comuns=(ErroComum("esqueceu de dobrar", lambda ns: {"x": 1.0}),))
    base.update(kw)
    return Exercicio("cap00.ex7", "teste", ("x",), ("primeira", "segunda"), **base)


def test_veredito_em_todos_os_estados():
    ex = _ex()
    assert ex.checar({"x": 2.0}).status is Status.CORRETO
    assert ex.checar({"x": ____}).status is Status.NAO_TENTADO
    assert ex.checar({}).status is Status.NAO_TENTADO
    errado = ex.checar({"x": 1.0})
    assert (errado.status, errado.mensagem) == (Status.INCORRETO, "esqueceu de dobrar")
    generico = ex.checar({"x": 3.0})
    assert generico.status is Status.INCORRETO and "3" in generico.mensagem
    assert repr(ex.checar({"x": 2.0})) == "[OK] Correto"
    assert "<script" not in errado._repr_html_() and "Ainda não" in errado._repr_html_()


def test_dicas_uma_de_cada_vez_e_em_details(capsys):
    ex = _ex()
    ex.dica()
    ex.dica()
    ex.dica()                                         # depois da última, repete a última
    saida = capsys.readouterr().out
    assert "Dica 1 de 2: primeira" in saida and saida.count("Dica 2 de 2: segunda") == 2
    assert ex.dicas_markdown().count('<details class="lncc-dica">') == 2


def test_progresso_local_ligado_desligado(tmp_path, monkeypatch):
    monkeypatch.setenv("LNCC_LLM_CACHE", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("LNCC_LLM_PROGRESSO", "1")
    registro.registrar("cap00.ex7", "incorreto")
    registro.registrar("cap00.ex7", "correto")
    registro.registrar("cap00.ex7", "dica")
    dados = json.loads((tmp_path / "progresso.json").read_text(encoding="utf-8"))
    assert dados["cap00.ex7"] == {"tentativas": 2, "dicas": 1, "viu_solucao": False, "correto": True}
    assert registro.resumo({"cap00": ["cap00.ex7", "cap00.ex8"]}) == [("cap00", 2, 1, 1)]
    for desligado in ({"LNCC_LLM_PROGRESSO": "0"}, {"CI": "true"}):
        (tmp_path / "progresso.json").unlink(missing_ok=True)
        with monkeypatch.context() as m:
            for k, v in desligado.items():
                m.setenv(k, v)
            registro.registrar("cap00.ex7", "correto")
        assert not (tmp_path / "progresso.json").exists()


def test_contexto_nao_deixa_o_gradiente_desligado(tmp_path, monkeypatch):
    """Uma célula da lição com `torch.set_grad_enabled(False)` (o Apêndice B tem uma) roda no processo dos
    testes; depois de montar o contexto, o gradiente volta a como estava, ou os testes de treino seguintes
    no mesmo worker falham com "does not require grad"."""
    import torch

    from lncc_llm.exercicios import contexto

    caderno = {"cells": [{"cell_type": "code", "id": "desliga", "metadata": {}, "outputs": [],
                          "source": ["import torch\n", "torch.set_grad_enabled(False)\n", "x = 1\n"]}]}
    (tmp_path / "falso.ipynb").write_text(json.dumps(caderno), encoding="utf-8")
    monkeypatch.setattr(contexto, "LIVRO", tmp_path)
    assert torch.is_grad_enabled()
    ns = contexto.celulas_do_notebook("falso", ("desliga",))()
    assert ns["x"] == 1
    assert torch.is_grad_enabled()


# ---------------------------------------------------------------- a lacuna, as soluções isoladas, as dicas
def test_a_lacuna_se_propaga_e_continua_a_mesma():
    import copy

    assert (____ @ M) is ____ and (M @ ____) is ____ and (2 * ____ + 1) is ____
    assert ____[0] is ____ and ____(3) is ____ and ____.T is ____ and -____ is ____
    assert copy.deepcopy(____) is ____ and copy.copy(____) is ____
    assert ____ == ____ and ____ != 0 and not ____
    assert (M * ____) is ____                         # o NumPy devolve a conta para a lacuna
    assert f"{____:.3f}" == "____"                    # um print formatado da resposta em branco não quebra


@pytest.mark.parametrize("uso", [lambda: [x for x in ____], lambda: len(____), lambda: 3 in ____,
                                 lambda: sum(____), lambda: list(____)])
def test_percorrer_a_lacuna_da_um_erro_claro_e_nao_trava(uso):
    with pytest.raises(TypeError, match="ainda é `____`"):
        uso()


def test_o_verificador_nao_mexe_nos_geradores_aleatorios_do_leitor(monkeypatch):
    import torch

    from lncc_llm.exercicios import nucleo

    ex = _ex_funcao(entradas=lambda ns: [(float(torch.rand(1)),), (float(np.random.rand()),)])
    ns = {"f": lambda x: 2 * x}
    monkeypatch.setattr(nucleo, "_namespace_do_leitor", lambda: ns)
    monkeypatch.setattr(nucleo, "mostrar", lambda *a, **k: None)
    monkeypatch.setattr(registro, "registrar", lambda *a, **k: None)
    torch.manual_seed(3)
    np.random.seed(3)
    ex.verificar()
    depois = (float(torch.rand(1)), float(np.random.rand()))
    torch.manual_seed(3)
    np.random.seed(3)
    assert depois == (float(torch.rand(1)), float(np.random.rand()))


def test_um_except_exception_do_leitor_nao_engole_a_funcao_proibida():
    def engole(x):
        try:
            return np.linalg.svd(x, compute_uv=False)
        except Exception:
            return None

    ex = Exercicio("cap00.ex4", "teste", ("f",), ("d",), esperado=lambda ns: {"f": lambda x: np.ones(2)},
                   entradas=lambda ns: [(np.eye(2),)], proibidas=("numpy.linalg.svd",))
    assert ex.checar({"f": engole}).status is Status.NAO_TENTADO


def _ex_funcao(**kw):
    base = dict(esperado=lambda ns: {"f": lambda x: 2 * x}, entradas=lambda ns: [(1,), (5,)],
                erros_comuns=(ErroComum("somou em vez de dobrar", lambda ns: {"f": lambda x: x + 2},
                                        dica="Multiplique por 2."),))
    base.update(kw)
    return Exercicio("cap00.ex3", "teste", ("f",), ("dica geral 1", "dica geral 2"), **base)


def test_funcao_com_lacuna_no_meio_e_nao_tentado_e_diz_a_linha():
    ns = {}
    exec("def f(x):\n    y = x * 2\n    z = ____ + y\n    return y\n", {"____": ____}, ns)
    resultado = _ex_funcao().checar(ns)
    assert resultado.status is Status.NAO_TENTADO
    assert "linha 3" in resultado.mensagem


def test_funcao_pronta_ou_que_so_a_chama_e_nao_tentado():
    import math as m

    ex = _ex_funcao(esperado=lambda ns: {"f": lambda x: m.sqrt(x)}, proibidas=("math.sqrt",))
    assert ex.checar({"f": m.sqrt}).status is Status.NAO_TENTADO
    ns = {"__name__": "__main__"}
    exec("import math\ndef f(x):\n    return math.sqrt(x)\n", ns)
    resultado = ex.checar({"f": ns["f"]})
    assert resultado.status is Status.NAO_TENTADO and "math.sqrt" in resultado.mensagem
    exec("def g(x):\n    return x ** 0.5\n", ns)
    assert ex.checar({"f": ns["g"]}).status is Status.CORRETO
    assert m.sqrt(4) == 2                                  # a armadilha foi desfeita


def test_a_dica_seguinte_segue_o_erro_reconhecido(monkeypatch):
    from lncc_llm.exercicios import nucleo

    vistos = []
    monkeypatch.setattr(nucleo, "mostrar", lambda obj: vistos.append(repr(obj)))
    monkeypatch.setattr(nucleo, "_namespace_do_leitor", lambda *a, **k: {"f": lambda x: x + 2})
    ex = _ex_funcao()
    ex.verificar()
    assert "somou em vez de dobrar" in vistos[-1]
    ex.dica()
    assert vistos[-1].startswith("Dica sobre o seu erro: Multiplique por 2.")
    ex.dica()
    assert vistos[-1].startswith("Dica 1 de 2: dica geral 1")


def test_a_solucao_roda_a_parte_e_nao_responde_pelo_leitor():
    """O que a solução define some; o que ela troca volta; a resposta do leitor fica; os geradores voltam."""
    import random

    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    ex = _ex(esperado=lambda ns: {"x": 2.0})
    ns = {"x": 7.0, "licao": [1, 2]}
    random.seed(3)
    depois_da_semente = random.getstate()
    np.random.seed(3)
    with capture_output():
        with ex.solucao_recolhida(ns):
            ns["x"] = 2.0                 # a solução responde...
            ns["auxiliar"] = "da solução"
            random.random()
            np.random.rand()
    assert ns == {"x": 7.0, "licao": [1, 2]}          # ...mas a resposta do leitor (7.0) volta
    assert random.getstate() == depois_da_semente
    assert np.random.rand() == np.random.RandomState(3).rand()
    ns.pop("x")
    with capture_output():
        with ex.solucao_recolhida(ns):
            ns["x"] = 2.0
    assert ex.checar(ns).status is Status.NAO_TENTADO  # depois de "Run All", ainda não tentado


def test_a_continuacao_da_solucao_recebe_o_que_a_solucao_definiu():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from lncc_llm.exercicios import nucleo

    InteractiveShell.instance()
    ns = {}
    with capture_output():
        with nucleo.isolado(ns, chave="exercício 9"):
            ns["modelo"] = "treinado"
        assert "modelo" not in ns
        with nucleo.isolado(ns, chave="exercício 9", retomar=True):
            assert ns["modelo"] == "treinado"
    assert ns == {}


def test_celula_inicial_nao_pede_para_trocar_o_import():
    from lncc_llm.exercicios import todos
    from lncc_llm.exercicios.celulas import celula_inicial

    for ex in todos():
        linhas = celula_inicial(ex).splitlines()
        assert "ficam como estão" in linhas[0]
        assert linhas[1] == "from lncc_llm.exercicios import ____"
        assert any(linha.startswith("# Sua resposta") for linha in linhas)
        assert "____" in "\n".join(linhas[3:])


def test_um_exercicio_nucleo_tem_funcao_entradas_e_a_linha_para_seguir():
    from lncc_llm.exercicios.celulas import celula_inicial

    with pytest.raises(ValueError, match="núcleo"):
        Exercicio("cap00.ex1", "t", ("f",), (), esperado=lambda ns: {"f": abs}, tipo="nucleo")
    ex = Exercicio("cap00.ex1", "t", ("f",), (), esperado=lambda ns: {"f": abs}, tipo="nucleo",
                   entradas=lambda ns: [(-1,)], seguir="attention = f",
                   inicio="def f(x):\n    return ____\n")
    celula = celula_inicial(ex)
    assert "escreva o corpo da função" in celula and celula.endswith("# attention = f")
    with pytest.raises(ValueError, match="tipo"):
        Exercicio("cap00.ex1", "t", ("f",), (), esperado=lambda ns: {"f": abs}, tipo="outro")


def test_um_atributo_com_o_nome_da_funcao_proibida_nao_e_atalho():
    """`self.causal_mask` (um buffer do leitor) não é a função `causal_mask` que o notebook importou: só os
    nomes lidos como globais contam; a função chamada pelo nome global continua sendo atalho."""
    import math as m

    ns = {"__name__": "__main__", "sqrt": m.sqrt}
    exec("class C:\n    sqrt = 2.0\n\ndef f(x):\n    return C.sqrt * x\n\ndef g(x):\n    return sqrt(x)\n", ns)
    ex = _ex_funcao(esperado=lambda ns: {"f": lambda x: 2.0 * x}, proibidas=("math.sqrt",))
    assert ex.checar({"f": ns["f"]}).status is Status.CORRETO
    assert ex.checar({"f": ns["g"]}).status is Status.NAO_TENTADO


def test_uma_local_com_o_nome_da_funcao_proibida_nao_e_atalho():
    """Uma variável local chamada como a função proibida, lida numa compreensão (LOAD_DEREF), não é a
    função global do notebook."""
    import math as m

    ns = {"__name__": "__main__", "sqrt": m.sqrt}
    exec("def f(x):\n    sqrt = 2.0\n    return sum(sqrt * v for v in [x])\n", ns)
    ex = _ex_funcao(esperado=lambda ns: {"f": lambda x: 2.0 * x}, proibidas=("math.sqrt",))
    assert ex.checar({"f": ns["f"]}).status is Status.CORRETO


def test_a_armadilha_devolve_o_atributo_como_estava():
    """Depois da conferência, um @staticmethod proibido continua @staticmethod (chamável pela instância)."""
    import torch

    antes = vars(torch.nn.Transformer)["generate_square_subsequent_mask"]
    ex = _ex_funcao(esperado=lambda ns: {"f": lambda x: 2 * x},
                    proibidas=("torch.nn.Transformer.generate_square_subsequent_mask", "math.sqrt"))
    assert ex.checar({"f": lambda x: 2 * x}).status is Status.CORRETO
    assert vars(torch.nn.Transformer)["generate_square_subsequent_mask"] is antes
    assert isinstance(antes, staticmethod)


def test_comparar_desce_em_tuplas_de_partes_de_formatos_diferentes():
    """(margens, acurácia, AUC): uma tupla que o numpy não junta num array é comparada parte a parte."""
    from lncc_llm.exercicios.comparar import Incorreto, comparar

    comparar(([1.0, 2.0], 0.5, 0.75), ([1.0, 2.0 + 1e-7], 0.5, 0.75))
    with pytest.raises(Incorreto, match=r"\[0\]"):
        comparar(([1.0, 2.5], 0.5, 0.75), ([1.0, 2.0], 0.5, 0.75), nome="x")
    with pytest.raises(Incorreto, match=r"\[2\]"):
        comparar(([1.0, 2.0], 0.5, 0.70), ([1.0, 2.0], 0.5, 0.75), nome="x")
