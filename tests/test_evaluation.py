"""Testes de lncc_llm.evaluation: o juiz por logits, o viés de posição, contaminação e múltipla escolha."""
import json

import pytest

from lncc_llm import evaluation as ev
from lncc_llm.likelihood import sequence_logprob


def test_course_task_has_16_items_with_balanced_answers():
    items = ev.mc_items()
    assert len(items) == 16
    assert sorted(i["answer"] for i in items) == [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4
    assert all(len(i["choices"]) == 4 and len(set(i["choices"])) == 4 for i in items)
    assert len(ev.judge_pairs()) == 20


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
    assert nb.cells[2].outputs[0]["text"].strip() == "['acc', 'acc_norm', 'loglikelihoods']"


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
