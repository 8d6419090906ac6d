"""Testes de lncc_llm.alignment: a perda do DPO, o DPOTrainer, REINFORCE e as vantagens do GRPO."""
import math

import pytest
import torch

from lncc_llm import alignment as al
from lncc_llm.style import style_score


def test_preference_set_prefers_the_scientific_voice():
    rows = al.preference_rows()
    assert len(rows) == 8
    for row in rows:
        assert [m["role"] for m in row["prompt"]] == ["user"]
        assert style_score(row["chosen"][0]["content"]) > 0 > style_score(row["rejected"][0]["content"])


def test_dpo_loss_is_ln2_when_policy_equals_reference():
    lp_w, lp_l = torch.tensor([-10.0, -30.0]), torch.tensor([-12.0, -5.0])
    out = al.dpo_loss(lp_w, lp_l, lp_w, lp_l, beta=0.1)
    assert float(out.loss) == pytest.approx(math.log(2), abs=1e-12)
    assert bool((out.margins == 0).all()) and out.accuracy == 0.0


def test_dpo_loss_known_numbers():
    # recompensas 0,1·(−10 + 11) = 0,1 e 0,1·(−12 + 11) = −0,1 → margem 0,2 → perda −log σ(0,2)
    out = al.dpo_loss([-10.0], [-12.0], [-11.0], [-11.0], beta=0.1)
    assert float(out.chosen_rewards[0]) == pytest.approx(0.1)
    assert float(out.rejected_rewards[0]) == pytest.approx(-0.1)
    assert float(out.loss) == pytest.approx(-math.log(1 / (1 + math.exp(-0.2))), abs=1e-9)
    assert float(out.loss) == pytest.approx(0.598139, abs=1e-6) and out.accuracy == 1.0


def test_dpo_loss_rejects_bad_inputs():
    with pytest.raises(ValueError, match="beta"):
        al.dpo_loss([0.0], [0.0], [0.0], [0.0], beta=0)
    with pytest.raises(ValueError, match="mesmo número"):
        al.dpo_loss([0.0, 1.0], [0.0], [0.0], [0.0])


def test_dpo_trainer_starts_at_ln2_and_its_loss_is_the_hand_loss_after_a_step(tiny_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lncc_llm.trainers import run_training

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    trainer = al.dpo_trainer(model, tok, steps=1, learning_rate=1e-2, batch_size=2)
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(4)])
    with torch.no_grad():
        assert float(trainer.compute_loss(trainer.model, batch)) == pytest.approx(math.log(2), abs=1e-6)
    run_training(trainer)
    trainer.model.eval()
    with torch.no_grad():
        trl_loss = float(trainer.compute_loss(trainer.model, batch))
    policy = al.batch_logprobs(trainer.model, batch)
    with trainer.model.disable_adapter():
        reference = al.batch_logprobs(trainer.model, batch)
    hand = al.dpo_loss(policy[:4], policy[4:], reference[:4], reference[4:], beta=0.1)
    assert trl_loss != pytest.approx(math.log(2), abs=1e-4)          # o passo mexeu nos adaptadores
    assert trl_loss == pytest.approx(float(hand.loss), rel=1e-4)
    assert trainer.state.log_history[0]["loss"] == pytest.approx(math.log(2), abs=1e-4)


def test_grpo_advantages_known_numbers_and_zero_for_equal_groups():
    assert al.grpo_advantages([1, 1, 0, 0], 4).tolist() == pytest.approx([0.8659, 0.8659, -0.8659, -0.8659], abs=1e-4)
    assert al.grpo_advantages([1, 1, 1, 1], 4).tolist() == [0.0, 0.0, 0.0, 0.0]
    two = al.grpo_advantages([1, 1, 0, 0, 3, 3, 3, 3], 4)
    assert two[:4].tolist() == pytest.approx([0.8659, 0.8659, -0.8659, -0.8659], abs=1e-4)
    assert two[4:].tolist() == [0.0] * 4                       # cada grupo se normaliza sozinho
    assert al.grpo_advantages([2, 0], 2, scale="none").tolist() == [1.0, -1.0]


def test_grpo_advantages_equal_trl_formula():
    from trl.trainer.utils import nanstd

    r = torch.tensor([0.0, 1.0, 0.0, 0.0, 0.5, 0.2, 0.9, 0.4])
    g = r.view(-1, 4)
    trl = ((g - g.mean(1, keepdim=True)) / (nanstd(g, dim=1).unsqueeze(1) + 1e-4)).flatten()
    assert torch.allclose(al.grpo_advantages(r, 4).float(), trl, atol=1e-6)
    # scale="batch": centra pela média do grupo, divide pelo desvio do lote inteiro (como o trl)
    batch = (g - g.mean(1, keepdim=True)).flatten() / (nanstd(r) + 1e-4)
    assert torch.allclose(al.grpo_advantages(r, 4, scale="batch").float(), batch, atol=1e-6)


def test_grpo_advantages_reject_bad_groups():
    with pytest.raises(ValueError, match="group_size"):
        al.grpo_advantages([1, 0], 1)
    with pytest.raises(ValueError, match="múltiplo"):
        al.grpo_advantages([1, 0, 1], 2)
    with pytest.raises(ValueError, match="scale"):
        al.grpo_advantages([1, 0], 2, scale="tudo")


def test_reinforce_step_is_reward_minus_baseline_times_score_function():
    run = al.reinforce([1.0, 2.0, 3.0], steps=5, learning_rate=0.1, baseline=True, noise=0.3, seed=3)
    for t in range(5):
        pi = run.probs[t]
        expected = (run.rewards[t] - run.baselines[t]) * (torch.nn.functional.one_hot(
            torch.tensor(run.actions[t]), 3).double() - pi)
        assert torch.allclose(run.gradients[t], expected, atol=1e-12)
    assert torch.allclose(run.probs.sum(dim=1), torch.ones(6, dtype=torch.float64))
    no_base = al.reinforce([1.0, 2.0, 3.0], steps=5, baseline=False)
    assert no_base.baselines == [0.0] * 5
    again = al.reinforce([1.0, 2.0, 3.0], steps=5, learning_rate=0.1, baseline=True, noise=0.3, seed=3)
    assert torch.equal(again.probs, run.probs)                 # gerador de CPU com semente


def test_reinforce_concentrates_on_the_best_action_with_a_baseline():
    run = al.reinforce([1.0, 1.5, 2.0, 1.2], steps=300, learning_rate=0.1, baseline=True)
    assert int(run.probs[-1].argmax()) == 2 and float(run.probs[-1, 2]) > 0.9


def test_gradient_variance_analytic_two_action_case():
    # r = [1, 0], π uniforme, sem ruído: com b = 0, var = 0,0625 por componente; com b = E[r] = 0,5, zero
    assert al.policy_gradient_variance([1.0, 0.0], baseline=0.0, noise=0.0, samples=200_000) == pytest.approx(0.125, abs=0.002)
    assert al.policy_gradient_variance([1.0, 0.0], baseline=0.5, noise=0.0) == pytest.approx(0.0, abs=1e-12)


def test_grpo_trainer_logged_loss_is_minus_the_token_weighted_advantage(tiny_dir):
    """Só pela interface pública: a perda que o trl registra é −Σ A_i n_i / Σ n_i, com as vantagens
    da fórmula do GRPO e os tamanhos que a função de recompensa recebeu (razão de importância 1).
    Se uma versão nova do trl mudar a normalização, este teste falha."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lncc_llm.trainers import run_training

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    prompts = Dataset.from_list([{"prompt": [{"role": "user", "content": q}], "answer": k}
                                 for k, q in enumerate(("Hi", "Name a fruit."))])
    # um <|im_end|> frequente, para as respostas terem tamanhos diferentes
    with torch.no_grad():
        model.lm_head.weight[tok.eos_token_id] = 0.8 * torch.randn(model.config.hidden_size,
                                                                  generator=torch.Generator().manual_seed(1))

    answers_seen = []

    def by_length(completions, completion_ids, answer):
        assert all(isinstance(c, str) for c in completions)     # o texto, como em reward_rate
        answers_seen.extend(answer)                              # a coluna extra do conjunto
        return [float(len(ids) % 3) for ids in completion_ids]

    run = al.grpo_trainer(model, tok, prompts, by_length, steps=2, learning_rate=1e-2, max_completion_length=6)
    run_training(run.trainer)
    assert len({n for step in run.lengths for n in step}) > 1
    assert len(answers_seen) == 16 and set(answers_seen) <= {0, 1}
    assert len(run.rewards) == len(run.lengths) == len(run.advantages) == 2 and len(run.rewards[0]) == 8
    assert run.logged("reward") == pytest.approx(run.mean_rewards, abs=1e-5)
    expected = [al.grpo_surrogate_value(a, n) for a, n in zip(run.advantages, run.lengths)]
    assert run.logged("loss") == pytest.approx(expected, abs=1e-4)
    assert any(abs(v) > 1e-3 for v in expected)        # as respostas têm tamanhos diferentes
    with pytest.raises(KeyError, match="registro"):
        run.logged("nao_existe")


def test_grpo_trainer_refuses_a_reward_that_is_not_a_function():
    from datasets import Dataset

    prompts = Dataset.from_list([{"prompt": [{"role": "user", "content": "Hi"}]}])
    with pytest.raises(TypeError, match="reward_fn"):
        al.grpo_trainer(None, None, prompts, [1.0, 0.0])
    with pytest.raises(ValueError, match="vazio"):
        al.grpo_trainer(None, None, prompts.select([]), lambda c, ids: [])


def test_grpo_surrogate_value_known_numbers_and_bad_input():
    # vantagens ±1 em respostas de 3 e 1 tokens: −(3 − 1)/4
    assert al.grpo_surrogate_value([1.0, -1.0], [3, 1]) == pytest.approx(-0.5)
    assert al.grpo_surrogate_value([1.0, -1.0], [2, 2]) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="vantagem"):
        al.grpo_surrogate_value([1.0], [2, 2])
    with pytest.raises(ValueError, match="vantagem"):
        al.grpo_surrogate_value([1.0, 2.0], [0, 0])


def test_reward_rate_is_reproducible_and_checks_its_inputs(tiny_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    prompts = [[{"role": "user", "content": q}] for q in ("Hi", "Name a fruit.")]
    seen = []

    def ended(completions, completion_ids):
        seen.extend(completion_ids)
        return [1.0 if tok.eos_token_id in ids else 0.0 for ids in completion_ids]

    a = al.reward_rate(model, tok, prompts, ended, samples=5, max_new_tokens=4)
    b = al.reward_rate(model, tok, prompts, ended, samples=5, max_new_tokens=4)
    assert a.rewards == b.rewards and a.completions == b.completions
    assert a.n == 10 and 0.0 <= a.rate <= 1.0 and len(a.rewards) == 2
    assert all(len(ids) <= 4 for ids in seen)
    assert all(ids.index(tok.eos_token_id) == len(ids) - 1 for ids in seen if tok.eos_token_id in ids)
    with pytest.raises(ValueError, match="prompt"):
        al.reward_rate(model, tok, [], ended)
    with pytest.raises(ValueError, match="temperature"):
        al.reward_rate(model, tok, prompts, ended, temperature=0)
    # colunas extras (o gabarito de cada prompt) chegam à recompensa, repetidas por amostra
    got = []

    def by_answer(completions, completion_ids, answer):
        got.extend(answer)
        return [0.0] * len(completions)

    al.reward_rate(model, tok, prompts, by_answer, samples=3, max_new_tokens=2,
                   columns={"answer": [7, 9]})
    assert got == [7, 7, 7, 9, 9, 9]
    both = al.reward_rate(model, tok, prompts,
                          {"fim": lambda c, ids, answer: ended(c, ids), "zero": by_answer}, samples=3,
                          max_new_tokens=2, columns={"answer": [7, 9]})
    assert set(both) == {"fim", "zero"} and both["zero"].rate == 0.0
    assert both["fim"].completions == both["zero"].completions       # as mesmas amostras
    assert both["fim"].rewards == al.reward_rate(model, tok, prompts, ended, samples=3,
                                                 max_new_tokens=2).rewards
    with pytest.raises(ValueError, match="coluna"):
        al.reward_rate(model, tok, prompts, by_answer, columns={"answer": [7]})


def test_dpo_trainer_evaluate_reports_the_hand_numbers_on_held_out_pairs(tiny_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    held_out = al.preference_dataset("validacao")
    assert len(held_out) == 4 and len(al.preference_dataset()) == 8
    trainer = al.dpo_trainer(model, tok, steps=1, learning_rate=1e-2, batch_size=2,
                             eval_datasets={"reservados": held_out})
    metrics = trainer.evaluate(eval_dataset="reservados")
    assert metrics["eval_loss"] == pytest.approx(math.log(2), abs=1e-6)
    assert metrics["eval_rewards/margins"] == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="eval_datasets"):
        al.dpo_trainer(model, tok, steps=1, eval_datasets={"vazio": held_out.select([])})


def test_preference_inputs_defaults_and_refusals():
    dataset, extra = al.preference_inputs()
    assert len(dataset) == 8 and extra == {}
    held = al.preference_dataset("validacao")
    _, extra = al.preference_inputs(dataset, {"reservados": held})
    assert list(extra) == ["eval_dataset"] and len(extra["eval_dataset"]["reservados"]) == 4
    with pytest.raises(ValueError, match="vazio"):
        al.preference_inputs(dataset.select([]))
    with pytest.raises(ValueError, match="eval_datasets"):
        al.preference_inputs(dataset, {"vazio": held.select([])})
    with pytest.raises(ValueError, match="eval_datasets"):
        al.preference_inputs(dataset, [held])
