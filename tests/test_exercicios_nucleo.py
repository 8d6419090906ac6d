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
