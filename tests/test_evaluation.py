"""Testes de lncc_llm.evaluation: o juiz por logits, o viés de posição, contaminação e múltipla escolha."""
import json

import pytest

from lncc_llm import evaluation as ev
from lncc_llm.likelihood import sequence_logprob


def test_course_task_has_48_items_with_balanced_answers():
    items = ev.mc_items()
    assert len(items) == 48
    assert sorted(i["answer"] for i in items) == [0] * 12 + [1] * 12 + [2] * 12 + [3] * 12
    assert all(len(i["choices"]) == 4 and len(set(i["choices"])) == 4 for i in items)
    assert len({i["question"] for i in items}) == 48
    assert len(ev.judge_pairs()) == 52


def test_mc_items_bad_files_get_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="não encontrado"):
        ev.mc_items(tmp_path / "nao_existe.json")
    bad = tmp_path / "ruim.json"
    bad.write_text('[{"question": "x", "choices": ["a", "b"], "answer": 0,}]', encoding="utf-8")
    with pytest.raises(ValueError, match="não é um JSON válido.*linha 1"):
        ev.mc_items(bad)
    bad.write_text('{"question": "x"}', encoding="utf-8")
    with pytest.raises(ValueError, match="lista de questões"):
        ev.mc_items(bad)
    bad.write_text('[{"question": "x", "choices": ["a", "b"], "answer": 2}]', encoding="utf-8")
    with pytest.raises(ValueError, match="índice"):
        ev.mc_items(bad)
    bad.write_bytes("[{\"question\": \"ol\xe1\"}]".encode("latin-1"))
    with pytest.raises(ValueError, match="UTF-8"):
        ev.mc_items(bad)


def test_judge_refuses_empty_question_or_answer(decoder):
    model, tok = decoder
    for triple in (("What is 2 + 2?", "", "4"), ("What is 2 + 2?", "4", "   "), ("", "4", "5"),
                   ("What is 2 + 2?", None, "4")):
        with pytest.raises(ValueError, match="vazia"):
            ev.judge_pair(model, tok, *triple)
        with pytest.raises(ValueError, match="vazia"):
            ev.judge_batch(model, tok, [("Name a fruit.", "Apple.", "Car."), triple])
    with pytest.raises(ValueError, match="tripla"):
        ev.judge_batch(model, tok, [("só a pergunta", "uma resposta")])


def test_judge_reports_the_probability_mass_of_its_labels(decoder):
    import torch

    model, tok = decoder
    v = ev.judge_pair(model, tok, "What is 2 + 2?", "4.", "5.")
    assert 0.0 < v.mass <= 1.0
    assert v.probs[0] / v.probs[1] == pytest.approx(torch.tensor(v.margin).exp().item(), rel=1e-6)


def test_judge_labels_must_be_single_distinct_tokens(decoder):
    _, tok = decoder
    for template in ev.JUDGE_TEMPLATES.values():
        assert len(ev.label_token_ids(tok, template["labels"])) == 2
    with pytest.raises(ValueError, match="um token só"):
        ev.label_token_ids(tok, ("Resposta boa", "B"))
    with pytest.raises(ValueError, match="desconhecido"):
        ev.judge_pair(None, tok, "q", "a", "b", template="nenhum")


def test_batched_judge_equals_one_pair_at_a_time(decoder):
    model, tok = decoder
    triples = [("What is 2 + 2?", "4.", "A long and very confident explanation that ends in 5."),
               ("Name a fruit.", "Apple.", "Car.")]
    batched = ev.judge_batch(model, tok, triples)
    for triple, verdict in zip(triples, batched):
        single = ev.judge_pair(model, tok, *triple)
        assert single.logits == pytest.approx(verdict.logits, abs=1e-3)
        assert single.position == verdict.position and single.label == ("A", "B")[single.position]


def test_position_consistency_counts_like_mt_bench(monkeypatch):
    # quatro pares: consistente e certo; consistente e errado; viés 1ª; viés 2ª
    plan = {"forward": [0, 1, 0, 1], "swapped": [1, 0, 0, 1]}
    margins = {"forward": [2.0, -1.0, 3.0, -1.0], "swapped": [-1.0, 2.0, 1.0, -3.0]}

    def fake(model, tok, triples, template="padrao"):
        which = "forward" if triples[0][1] == "certa0" else "swapped"
        return [ev.Verdict("AB"[p], p, (m, 0.0)) for p, m in zip(plan[which], margins[which])]

    monkeypatch.setattr(ev, "judge_batch", fake)
    pairs = [("q", f"certa{i}", f"errada{i}") for i in range(4)]
    rep = ev.position_consistency(None, None, pairs)
    assert (rep.pairs, rep.consistent, rep.first, rep.second, rep.correct, rep.ties) == (4, 2, 1, 1, 1, 2)
    assert rep.calibrated == 3        # margens 2−(−1), −1−2, 3−1, −1−(−3): três positivas
    assert rep.rates()["consistent"] == 50.0
    with pytest.raises(ValueError, match="vazia"):
        ev.position_consistency(None, None, [])


def test_near_duplicates_flags_copies_not_strangers():
    train = ["El Niño is the warm phase of ENSO in the Pacific.", "Bake the bread for forty minutes."]
    test = ["el nino is the warm phase of ENSO in the pacific", "The stock market closed higher today."]
    (i0, j0, s0, flag0), (i1, _, s1, flag1) = ev.near_duplicates(train, test)
    assert (i0, j0, flag0) == (0, 0, True) and s0 > 0.7
    assert i1 == 1 and not flag1 and s1 < 0.3
    assert ev.near_duplicates(train, train[:1])[0][2] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="dois conjuntos"):
        ev.near_duplicates([], test)


def test_multiple_choice_accuracy_matches_hand_scores_and_lm_eval_normalisation(decoder):
    model, tok = decoder
    items = ev.mc_items()[:3]
    res = ev.multiple_choice_accuracy(model, tok, items)
    for item, lls, pred, pred_norm in zip(items, res.loglikelihoods, res.predictions, res.predictions_norm):
        ctx = ev.MC_PROMPT.format(**item)
        hand = [sequence_logprob(model, tok, ctx, " " + c) for c in item["choices"]]
        assert lls == pytest.approx(hand, abs=1e-4)
        assert pred == max(range(4), key=hand.__getitem__)
        assert pred_norm == max(range(4), key=lambda k: hand[k] / len(item["choices"][k]))
    assert res.acc == sum(p == i["answer"] for p, i in zip(res.predictions, items)) / 3
    sub = res.subset([0, 2])
    assert sub.predictions == [res.predictions[0], res.predictions[2]] and sub.answers == [items[0]["answer"], items[2]["answer"]]


def test_multiple_choice_rejects_bad_items(decoder):
    model, tok = decoder
    with pytest.raises(ValueError, match="vazio"):
        ev.multiple_choice_accuracy(model, tok, [])
    with pytest.raises(ValueError, match="índice"):
        ev.multiple_choice_accuracy(model, tok, [{"question": "q", "choices": ["a", "b"], "answer": 2}])


def test_lm_eval_harness_agrees_with_our_scorer_offline(tiny_dir, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_dir).eval()
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    items = ev.mc_items()[:4]
    data = tmp_path / "quatro.json"
    data.write_text(json.dumps(items))
    folder = ev.lm_eval_task(tmp_path / "tarefa", data)
    harness = ev.run_lm_eval(model, tok, folder, quiet=True)
    ours = ev.multiple_choice_accuracy(model, tok, items)
    assert harness["acc"] == ours.acc and harness["acc_norm"] == ours.acc_norm
    flat = [v for row in harness["loglikelihoods"] for v in row]
    assert flat == pytest.approx([v for row in ours.loglikelihoods for v in row], abs=1e-3)
    # o erro-padrão do harness é o de uma média: desvio amostral (n − 1) / √n
    hits = ours.correct()
    p, n = sum(hits) / len(hits), len(hits)
    expected_se = (p * (1 - p) * n / (n - 1)) ** 0.5 / n ** 0.5
    assert harness["acc_stderr"] == pytest.approx(expected_se, abs=1e-9)
    without = ev.run_lm_eval(model, tok, folder, quiet=True, bootstrap_iters=0)
    assert without["acc_stderr"] != without["acc_stderr"]          # nan: o harness não calcula


def test_lm_eval_in_a_kernel_with_a_fresh_datasets_cache_shows_nothing_under_nbval(tiny_dir, tmp_path):
    # na primeira execução, o datasets gera o split do JSON e mostra uma barra (um widget, no kernel):
    # o nbval a veria como saída inesperada. Sob LNCC_LLM_QUIET=1, run_lm_eval não mostra nada.
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import os\n"
            f"os.environ['HF_DATASETS_CACHE'] = {str(tmp_path / 'hf_datasets')!r}\n"
            "os.environ['LNCC_LLM_QUIET'] = '1'\n"
            "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
            "from lncc_llm import evaluation as ev\n"
            f"model = AutoModelForCausalLM.from_pretrained({str(tiny_dir)!r}).eval()\n"
            f"tok = AutoTokenizer.from_pretrained({str(tiny_dir)!r})"),
        nbformat.v4.new_code_cell("result = ev.run_lm_eval(model, tok)"),
        nbformat.v4.new_code_cell("print(sorted(result))"),
    ]
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    assert nb.cells[1].outputs == []
    assert nb.cells[2].outputs[0]["text"].strip() == "['acc', 'acc_norm', 'acc_norm_stderr', 'acc_stderr', 'loglikelihoods']"


def test_abstention_curve_trades_coverage_for_accuracy():
    conf = [0.9, 0.8, 0.6, 0.4]
    correct = [True, True, False, False]
    curve = ev.abstention_curve(conf, correct)
    assert [round(c, 2) for _, c, _ in curve] == [0.25, 0.5, 0.75, 1.0]
    assert [a for _, _, a in curve] == [1.0, 1.0, pytest.approx(2 / 3), 0.5]
    assert ev.abstention_curve([0.5, 0.5], [True, False]) == [(0.5, 1.0, 0.5)]   # empate: o mesmo limiar
    with pytest.raises(ValueError, match="mesmo tamanho"):
        ev.abstention_curve([0.5], [True, False])


def test_mc_confidences_are_the_softmax_maximum():
    res = ev.MCResult(0.5, 0.5, [[0.0, 0.0], [0.0, -100.0]], [0, 0], [0, 0], [0, 1])
    assert res.confidences() == pytest.approx([0.5, 1.0])
    assert res.correct() == [True, False]


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


def test_normalized_confidence_uses_per_character_scores():
    r = ev.MCResult(0.0, 0.0, [[-2.0, -6.0]], [0], [1], [1], [[1, 6]])
    assert r.confidences()[0] == pytest.approx(1 / (1 + 2.718281828459045 ** -4), rel=1e-9)
    assert r.confidences(normalized=True)[0] == pytest.approx(1 / (1 + 2.718281828459045 ** -1), rel=1e-9)
    assert r.correct() == [False] and r.correct(normalized=True) == [True]


def test_cross_similarities_flags_a_copy_above_all_other_pairs():
    train = ["El Niño warms the Pacific.", "Trade winds blow west.", "A monsoon is seasonal."]
    test = ["el nino warms the pacific", "What is a volcano?"]
    sims = ev.cross_similarities(train, test)
    assert sims.shape == (2, 3)
    assert sims[0, 0] == sims.max() and sims[0, 0] > 0.5


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
