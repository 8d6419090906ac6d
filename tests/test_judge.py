"""Testes de lncc_llm.judge: o juiz por logits, a deixa na vez do assistente, o viés de posição e o juiz
simulado."""
import pytest

from lncc_llm import judge as ev


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


def test_the_cue_opens_the_assistant_turn_and_labels_carry_the_space(decoder):
    _, tok = decoder
    text = ev.judge_prompt(tok, "Q?", "one", "two")
    assert text.endswith("Answer B: two<|im_end|>\n<|im_start|>assistant\nAnswer")
    old = ev.judge_prompt(tok, "Q?", "one", "two", template="deixa_no_usuario")
    assert old.endswith("Better answer:<|im_end|>\n<|im_start|>assistant\n")
    for name, tpl in ev.JUDGE_TEMPLATES.items():
        tokens = ev._label_tokens(ev._template(name))
        assert tokens == (tuple(" " + x for x in tpl["labels"]) if tpl["cue"] else tpl["labels"])
        assert len(ev.label_token_ids(tok, tokens)) == 2


def test_reading_at_the_cue_puts_the_mass_on_the_labels(decoder):
    # o par da soma do Capítulo 8: com a deixa na vez do usuário, o modelo ia escrever outra coisa
    model, tok = decoder
    q, wrong, right = "What is 27 + 58?", "27 + 58 = 125.", "85."
    cue = [ev.judge_pair(model, tok, q, *pair) for pair in ((wrong, right), (right, wrong))]
    old = [ev.judge_pair(model, tok, q, *pair, template="deixa_no_usuario")
           for pair in ((wrong, right), (right, wrong))]
    assert min(v.mass for v in cue) > 0.5 > max(v.mass for v in old)


def test_report_from_margins_counts_each_case():
    # certa vence nas duas; errada vence nas duas; 1ª posição nas duas; 2ª nas duas
    rep = ev.PositionReport.from_margins([1.0, -1.0, 2.0, -0.5], [-1.0, 1.0, 0.5, -2.0])
    assert (rep.consistent, rep.correct, rep.first, rep.second, rep.ties) == (2, 1, 1, 1, 2)
    assert rep.calibrated == 3          # 1 − (−1), −1 − 1, 2 − 0,5, −0,5 − (−2)
    assert rep.margins[2] == (2.0, 0.5)
    with pytest.raises(ValueError, match="mesmo"):
        ev.PositionReport.from_margins([1.0], [])


def test_simulated_judge_calibration_recovers_the_signal_whatever_the_bias():
    from scipy.stats import norm

    expected = norm.cdf(2 ** 0.5 * 0.5)
    reports = {b: ev.simulated_judge(20_000, 0.5, b, seed=3) for b in (0.0, 1.0, 3.0)}
    for rep in reports.values():
        assert rep.calibrated / rep.pairs == pytest.approx(expected, abs=0.012)
    swap = [reports[b].correct for b in (0.0, 1.0, 3.0)]
    assert swap[0] > swap[1] > swap[2]                       # a regra da troca perde o sinal
    assert reports[3.0].first / 20_000 > 0.9
    blind = ev.simulated_judge(20_000, 0.0, 2.0, seed=3)
    assert blind.calibrated / blind.pairs == pytest.approx(0.5, abs=0.012)
    same_noise = ev.simulated_judge(52, 0.5, 0.0, seed=0), ev.simulated_judge(52, 0.5, 4.0, seed=0)
    assert same_noise[0].calibrated == same_noise[1].calibrated    # o viés se cancela exatamente
    with pytest.raises(ValueError, match="n_pairs"):
        ev.simulated_judge(0, 0.5, 1.0)
