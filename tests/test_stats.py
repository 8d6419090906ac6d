"""Testes de lncc_llm.stats: Wilson, AUROC, permutação e a curva de abstenção."""
import pytest

from lncc_llm import stats as ev


def test_abstention_curve_trades_coverage_for_accuracy():
    conf = [0.9, 0.8, 0.6, 0.4]
    correct = [True, True, False, False]
    curve = ev.abstention_curve(conf, correct)
    assert [round(c, 2) for _, c, _ in curve] == [0.25, 0.5, 0.75, 1.0]
    assert [a for _, _, a in curve] == [1.0, 1.0, pytest.approx(2 / 3), 0.5]
    assert ev.abstention_curve([0.5, 0.5], [True, False]) == [(0.5, 1.0, 0.5)]   # empate: o mesmo limiar
    with pytest.raises(ValueError, match="mesmo tamanho"):
        ev.abstention_curve([0.5], [True, False])


def test_auroc_matches_sklearn_and_its_interval_contains_it():
    from sklearn.metrics import roc_auc_score

    scores = [0.9, 0.8, 0.8, 0.4, 0.3, 0.7, 0.2, 0.8]
    labels = [True, True, False, False, True, False, False, True]
    assert ev.auroc(scores, labels) == pytest.approx(roc_auc_score(labels, scores))
    assert ev.auroc([1, 2, 3, 4], [False, False, True, True]) == 1.0
    assert ev.auroc([1, 1, 1, 1], [False, True, False, True]) == 0.5        # empates contam meio
    point, low, high = ev.auroc_interval(scores, labels, n_boot=500)
    assert low <= point <= high and 0.0 <= low and high <= 1.0
    assert ev.auroc_permutation_p([1, 2, 3, 4, 5, 6, 7, 8], [False] * 4 + [True] * 4) < 0.05
    assert ev.auroc_permutation_p(scores, labels) > 0.05
    with pytest.raises(ValueError, match="uma questão certa e uma errada"):
        ev.auroc([0.1, 0.2], [True, True])
    with pytest.raises(ValueError, match="mesmo tamanho"):
        ev.auroc([0.1, 0.2], [True])


def test_abstention_curve_accepts_generators():
    curve = ev.abstention_curve((c for c in [0.9, 0.5]), (ok for ok in [True, False]))
    assert curve == [(0.9, 0.5, 1.0), (0.5, 1.0, 0.5)]


def test_wilson_interval_solves_the_score_equation():
    import math

    for hits, n in ((8, 8), (1, 8), (37, 128), (0, 5)):
        low, high = ev.wilson_interval(hits, n)
        p = hits / n
        for bound in (low, high):
            if 0 < bound < 1:      # |p − b| = z·√(b(1 − b)/n) nas duas pontas
                assert abs(p - bound) == pytest.approx(1.96 * math.sqrt(bound * (1 - bound) / n), rel=1e-9)
        assert low <= p <= high
    assert ev.wilson_interval(8, 8)[0] == pytest.approx(0.6756, abs=1e-4)
    with pytest.raises(ValueError, match="hits"):
        ev.wilson_interval(9, 8)


def test_auroc_se_hanley_mcneil_known_values_and_bootstrap():
    import numpy as np

    from lncc_llm.stats import auroc, auroc_se

    assert auroc_se(0.5, 24, 24) == pytest.approx(0.0842, abs=5e-4)     # o "uns 0,08" do Capítulo 5
    assert auroc_se(0.95, 24, 24) < auroc_se(0.8, 24, 24) < auroc_se(0.5, 24, 24)
    assert auroc_se(1.0, 24, 24) == 0.0
    rng = np.random.default_rng(0)                                     # contra a dispersão de AUCs simuladas
    aucs = [auroc(np.r_[rng.normal(1, 1, 24), rng.normal(0, 1, 24)], [1] * 24 + [0] * 24) for _ in range(2000)]
    assert auroc_se(float(np.mean(aucs)), 24, 24) == pytest.approx(float(np.std(aucs)), rel=0.15)
    for bad in ((0.5, 0, 3), (1.2, 3, 3), (0.5, 2.0, 3)):
        with pytest.raises(ValueError):
            auroc_se(*bad)
