"""Testes de lncc_llm.training: threads fixas, lotes reprodutíveis e avaliação da perda."""
import math

import pytest
import torch

from lncc_llm.gpt import GPTConfig, GPTModel
from lncc_llm.training import (
    estimate_loss,
    fixed_threads,
    language_model_loss,
    perplexity,
    random_batch,
)


def test_fixed_threads_sets_and_restores():
    before = torch.get_num_threads()
    with fixed_threads(1) as n:
        assert n == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError):
        with fixed_threads(1):
            raise RuntimeError("erro dentro do bloco")
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads"):
        with fixed_threads(0):
            pass


def test_random_batch_targets_are_inputs_shifted_by_one():
    data = torch.arange(1000)
    x, y = random_batch(data, 8, 16, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (8, 16)
    assert torch.equal(y[:, :-1], x[:, 1:]) and torch.equal(y[:, -1], x[:, -1] + 1)
    x2, _ = random_batch(data, 8, 16, torch.Generator().manual_seed(0))
    assert torch.equal(x, x2)
    with pytest.raises(ValueError, match="poucos"):
        random_batch(torch.arange(10), 2, 10, torch.Generator())


def test_estimate_loss_uses_eval_mode_and_restores_training():
    torch.manual_seed(0)
    model = GPTModel(GPTConfig(vocab_size=11, max_seq_len=8, d_model=8, n_heads=2, n_layers=1, dropout=0.5))
    model.train()
    data = torch.arange(200) % 11
    g = torch.Generator().manual_seed(0)
    batches = [random_batch(data, 4, 8, g) for _ in range(3)]
    a = estimate_loss(model, batches)
    b = estimate_loss(model, batches)
    assert a == b and model.training  # sem dropout na avaliação; modo de treino restaurado
    assert abs(a - math.log(11)) < 1.0  # modelo sem treino: perto de ln|V|
    x, y = batches[0]
    assert language_model_loss(torch.zeros(4, 8, 11), y).item() == pytest.approx(math.log(11))
    assert perplexity(math.log(11)) == pytest.approx(11)


def test_text_perplexity_is_exp_of_the_hand_computed_mean_nll(decoder):
    from lncc_llm.training import text_perplexity

    model, tokenizer = decoder
    text = "The human heart has four chambers and pumps blood through the body."
    ids = torch.tensor([tokenizer(text)["input_ids"]])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, :-1]
    nll = -torch.log_softmax(logits, -1).gather(1, ids[0, 1:, None]).mean().item()
    assert text_perplexity(model, tokenizer, text) == pytest.approx(math.exp(nll), rel=1e-5)
    assert model.training is False
    with pytest.raises(ValueError, match="vazio"):
        text_perplexity(model, tokenizer, "  ")


def test_mean_and_se_match_the_statistics_module():
    import statistics

    from lncc_llm.training import mean_and_se

    values = [1.0, 2.0, 4.0, 7.0]
    mean, se = mean_and_se(values)
    assert mean == pytest.approx(statistics.fmean(values))
    assert se == pytest.approx(statistics.stdev(values) / len(values) ** 0.5)   # n − 1, não n
    with pytest.raises(ValueError, match="pelo menos 2"):
        mean_and_se([1.0])


def test_general_passages_and_their_perplexities(decoder):
    from lncc_llm.training import general_passages, passage_perplexities, text_perplexity

    passages = general_passages()
    assert len(passages) == 12 and all(p.strip() for p in passages)
    assert len(set(passages)) == 12
    model, tokenizer = decoder
    got = passage_perplexities(model, tokenizer, passages[:2])
    assert got == [text_perplexity(model, tokenizer, p) for p in passages[:2]]
    with pytest.raises(ValueError, match="Nenhum trecho"):
        passage_perplexities(model, tokenizer, [])


def test_char_gpt_budget_runs_are_consistent():
    from lncc_llm.training import char_gpt_budget

    budget = char_gpt_budget()
    runs = budget["execucoes"]
    assert budget["lote"] == 32 and budget["contexto"] == 64 and len(runs) >= 3
    for run in runs:
        curve = run["curva"]
        assert [p["passos"] for p in curve] == sorted(p["passos"] for p in curve)
        assert all(a["segundos"] < b["segundos"] for a, b in zip(curve, curve[1:]))
        assert all(a["perda_validacao"] > b["perda_validacao"] for a, b in zip(curve, curve[1:]))
    one = {p["passos"]: p for r in runs if r["threads"] == 1 and r["agenda"] == "const" for p in r["curva"]}
    two = {p["passos"]: p for r in runs if r["threads"] == 2 and r["agenda"] == "const" for p in r["curva"]}
    assert 300 in one and 300 in two and two[300]["segundos"] < one[300]["segundos"]
    # a mesma conta com 1 ou 2 threads: a perda não depende do número de threads
    assert two[300]["perda_validacao"] == one[300]["perda_validacao"]


def test_trained_char_gpt_loads_into_the_appendix_model_and_reproduces_its_recorded_loss():
    """O checkpoint de scripts/gpt_caracteres_longo.py: a configuração da seção A.11, os pesos entram no
    GPTModel sem sobrar nem faltar, a curva gravada desce, e a perda nos 8 lotes fixos de validação da
    seção A.11 é a última da curva; um tokenizador de outro tamanho é recusado em pt-BR."""
    from lncc_llm.corpus import CharTokenizer, shakespeare_text, train_val_split
    from lncc_llm.training import trained_char_gpt

    text = shakespeare_text()
    tokenizer = CharTokenizer(text)
    model, record = trained_char_gpt(tokenizer.vocab_size)
    assert record["config"] == dict(vocab_size=tokenizer.vocab_size, max_seq_len=64, d_model=128,
                                    n_heads=2, n_layers=2, dropout=0.2)
    assert not model.training
    curve = record["curva"]
    assert [p["passos"] for p in curve][-1] == record["passos"]
    assert curve[-1]["perda_validacao"] < curve[0]["perda_validacao"]
    train_data, val_data = train_val_split(torch.tensor(tokenizer.encode(text), dtype=torch.long), 0.1)
    g = torch.Generator().manual_seed(1234)
    for _ in range(8):
        random_batch(train_data, 64, 64, g)
    val_batches = [random_batch(val_data, 64, 64, g) for _ in range(8)]
    with fixed_threads(1):
        assert estimate_loss(model, val_batches) == pytest.approx(curve[-1]["perda_validacao"], abs=2e-3)
    with pytest.raises(ValueError, match="tokenizador"):
        trained_char_gpt(tokenizer.vocab_size + 1)
