"""Testes de lncc_llm.forgetting: a mudança pareada contra uma conta independente (numpy e scipy)."""
import json
import math
from importlib.resources import files

import numpy as np
import pytest
from scipy import stats

from lncc_llm.forgetting import paired_change


def _arquivo():
    return json.loads(files("lncc_llm").joinpath("dados/comparacao_metodos.json").read_text(encoding="utf-8"))


def test_igual_a_numpy_e_scipy_nos_treinos_gravados():
    dados = _arquivo()
    base = dados["bases"]["base"]["ppl_geral"]
    for run in dados["metodos"]:
        mudanca, ep = paired_change(run["ppl_geral"], base)
        logs = np.log(np.array(run["ppl_geral"]) / np.array(base))
        assert mudanca == pytest.approx(np.exp(logs.mean()) - 1, rel=1e-12)
        assert ep == pytest.approx(stats.sem(logs), rel=1e-12)


def test_pareada_nao_e_a_razao_das_medias():
    ref = [10.0, 100.0, 1000.0]
    vals = [20.0, 100.0, 1000.0]               # só o trecho fácil dobrou
    mudanca, _ = paired_change(vals, ref)
    assert mudanca == pytest.approx(2 ** (1 / 3) - 1)
    assert mudanca != pytest.approx(sum(vals) / sum(ref) - 1)
    # a mesma razão em todo trecho: mudança exata e EP zero
    assert paired_change([2 * r for r in ref], ref) == (pytest.approx(1.0), pytest.approx(0.0))
    # trocar as listas troca o sinal do log
    assert math.log1p(paired_change(ref, vals)[0]) == pytest.approx(-math.log1p(mudanca))


def test_erros_em_portugues():
    with pytest.raises(ValueError, match="mesmo número de trechos"):
        paired_change([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="positivas"):
        paired_change([1.0, -2.0], [1.0, 2.0])
