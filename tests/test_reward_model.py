"""Testes de lncc_llm.reward_model: Bradley–Terry com uma cabeça escalar, conferido com o trl."""
import math

import pytest
import torch

from lncc_llm import reward_model as rm


def test_pair_rewards_known_numbers():
    r = rm.PairRewards(torch.tensor([1.0, 0.0, 2.0]), torch.tensor([0.0, 0.0, 3.0]))
    assert r.margins.tolist() == [1.0, 0.0, -1.0]
    assert r.accuracy == pytest.approx(1 / 3)           # empate não conta como acerto
    expected = (-math.log(1 / (1 + math.exp(-1))) + math.log(2) - math.log(1 / (1 + math.exp(1)))) / 3
    assert r.loss == pytest.approx(expected)


def test_reward_trainer_metrics_are_the_hand_rewards(tiny_dir):
    """O trl e a conta à mão (último token não-preenchimento × vetor da cabeça) dão a mesma perda,
    acurácia e margem em pares reservados, depois de dois passos: ler outro token falharia."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from lncc_llm.alignment import preference_dataset, preference_rows
    from lncc_llm.trainers import run_training

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_dir, num_labels=1,
                                                               dtype=torch.float32)
    trainer = rm.reward_model_trainer(tok, steps=2, learning_rate=1e-2, model=model,
                                      eval_datasets={"reservados": preference_dataset("validacao")})
    run_training(trainer)
    metrics = trainer.evaluate(eval_dataset="reservados")
    hand = rm.pair_rewards(trainer.model, tok, preference_rows("validacao"))
    assert len(hand.margins) == 4
    assert metrics["eval_loss"] == pytest.approx(hand.loss, abs=1e-4)
    assert metrics["eval_accuracy"] == pytest.approx(hand.accuracy, abs=1e-6)
    assert metrics["eval_margin"] == pytest.approx(hand.margins.mean().item(), abs=1e-4)
    assert hand.margins.abs().max() > 1e-3              # a cabeça treinou: as margens não são zero


def test_reward_model_trainer_checks_its_inputs():
    from datasets import Dataset

    empty = Dataset.from_list([{"prompt": "a", "chosen": "b", "rejected": "c"}]).select([])
    with pytest.raises(ValueError, match="vazio"):
        rm.reward_model_trainer(None, empty)
    with pytest.raises(ValueError, match="par"):
        rm.pair_rewards(None, None, [])
