"""Testes de lncc_llm.sampling: temperatura, top-p contra o transformers e o laço de geração no SmolLM2."""
import math

import pytest
import torch
from transformers.generation.logits_process import (
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from lncc_llm.sampling import (
    apply_temperature,
    context_window,
    entropy,
    generate,
    min_p_logits,
    penalize_repetition,
    sample_many,
    sampling_distribution,
    top_k_filter,
    top_p_filter,
)

PROMPT = "Transformers are models that"


@pytest.fixture(scope="module")
def next_logits(decoder):
    model, tok = decoder
    ids = tok(PROMPT, return_tensors="pt")
    with torch.no_grad():
        return model(**ids).logits[0, -1].float()


def test_temperature_ratio_law():
    z = torch.tensor([2.0, 0.5, -1.0], dtype=torch.float64)
    for tau in (0.25, 1.0, 4.0):
        p = torch.softmax(apply_temperature(z, tau), -1)
        assert math.isclose(p[0] / p[1], math.exp((z[0] - z[1]) / tau), rel_tol=1e-12)
    assert entropy(torch.softmax(apply_temperature(z, 0.25), -1)) < entropy(torch.softmax(z, -1))


def test_entropy_of_uniform_and_one_hot():
    assert math.isclose(float(entropy(torch.full((8,), 1 / 8))), math.log(8), rel_tol=1e-12)
    assert float(entropy(torch.tensor([0.0, 1.0, 0.0]))) == 0.0


@pytest.mark.parametrize("p", [0.3, 0.6, 0.9, 1.0])
def test_top_p_equals_transformers_processor(next_logits, p):
    ours = top_p_filter(next_logits, p)
    theirs = TopPLogitsWarper(top_p=p)(torch.zeros(1, 1, dtype=torch.long), next_logits[None].clone())[0]
    kept = torch.isfinite(theirs).nonzero().flatten()
    assert set(ours.indices.tolist()) == set(kept.tolist())
    assert torch.allclose(ours.probs, torch.softmax(theirs, -1), atol=1e-6)


@pytest.mark.parametrize("p", [0.3, 0.6, 0.9])
def test_nucleus_is_smallest_set_with_mass_at_least_p(next_logits, p):
    probs = torch.softmax(next_logits.double(), -1)
    nucleus = top_p_filter(next_logits, p)
    mass = probs[nucleus.indices].sum().item()
    assert mass >= p and probs[nucleus.indices[:-1]].sum().item() < p
    assert math.isclose(float(nucleus.probs.sum()), 1.0, rel_tol=1e-6)
    assert torch.all(nucleus.probs[nucleus.indices] > 0) and int((nucleus.probs > 0).sum()) == len(nucleus.indices)


def test_greedy_is_identical_to_model_generate(decoder):
    model, tok = decoder
    ours = generate(model, tok, PROMPT, max_new_tokens=20, greedy=True)
    ids = tok(PROMPT, return_tensors="pt")
    ref = model.generate(**ids, max_new_tokens=20, do_sample=False)[0, ids["input_ids"].shape[1]:].tolist()
    assert ours.new_ids == ref
    assert ours.text.startswith(" can be used to create a new model that is a copy")


def test_greedy_chat_is_identical_to_model_generate(decoder):
    model, tok = decoder
    ours = generate(model, tok, "What is 27 + 58?", max_new_tokens=15, greedy=True, chat=True)
    x = tok.apply_chat_template([{"role": "user", "content": "What is 27 + 58?"}], add_generation_prompt=True,
                                return_tensors="pt", return_dict=True)
    ref = model.generate(**x, max_new_tokens=15, do_sample=False)[0, x["input_ids"].shape[1]:].tolist()
    assert ours.new_ids == ref[: len(ours.new_ids)]


def test_cache_on_and_off_give_identical_tokens(decoder):
    model, tok = decoder
    with_cache = generate(model, tok, PROMPT, max_new_tokens=12, temperature=0.7, top_p=0.9, seed=3)
    without = generate(model, tok, PROMPT, max_new_tokens=12, temperature=0.7, top_p=0.9, seed=3, use_cache=False)
    assert with_cache.new_ids == without.new_ids
    # o laço mede o tempo de cada passo (usado no Capítulo 4 para o gráfico do KV cache)
    assert len(with_cache.step_seconds) == len(without.step_seconds) == 12
    assert all(t > 0 for t in with_cache.step_seconds + without.step_seconds)


def test_same_seed_same_text_other_seed_other_text(decoder):
    model, tok = decoder
    a = generate(model, tok, PROMPT, max_new_tokens=15, temperature=1.0, seed=1)
    b = generate(model, tok, PROMPT, max_new_tokens=15, temperature=1.0, seed=1)
    c = generate(model, tok, PROMPT, max_new_tokens=15, temperature=1.0, seed=2)
    assert a.new_ids == b.new_ids and a.new_ids != c.new_ids


def test_low_temperature_approaches_greedy(decoder):
    model, tok = decoder
    cold = generate(model, tok, PROMPT, max_new_tokens=10, temperature=1e-4, seed=5)
    assert cold.new_ids == generate(model, tok, PROMPT, max_new_tokens=10, greedy=True).new_ids


def test_returns_step_distributions(decoder):
    model, tok = decoder
    out = generate(model, tok, PROMPT, max_new_tokens=5, temperature=0.7, top_p=0.6, return_probs=True)
    assert out.step_probs.shape == (5, model.config.vocab_size)
    assert torch.allclose(out.step_probs.sum(-1), torch.ones(5), atol=1e-5)
    assert len(out.chosen_probs) == len(out.entropies) == 5


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"temperature": 0}, "temperature deve ser > 0"),
        ({"temperature": -1.0}, "temperature deve ser > 0"),
        ({"temperature": float("nan")}, "temperature deve ser > 0"),
        ({"top_p": 0.0}, r"top_p deve estar no intervalo \(0, 1\]"),
        ({"top_p": 1.5}, r"top_p deve estar no intervalo \(0, 1\]"),
        ({"max_new_tokens": 0}, "max_new_tokens deve ser um inteiro ≥ 1"),
    ],
)
def test_bad_parameters_get_pt_br_errors(decoder, kwargs, message):
    model, tok = decoder
    with pytest.raises(ValueError, match=message):
        generate(model, tok, PROMPT, **kwargs)


def test_empty_prompt_is_rejected(decoder):
    model, tok = decoder
    with pytest.raises(ValueError, match="prompt está vazio"):
        generate(model, tok, "   ")


def test_prompt_longer_than_window_is_truncated_or_refused(decoder, monkeypatch):
    model, tok = decoder
    monkeypatch.setattr(model.config, "max_position_embeddings", 16)
    assert context_window(model) == 16
    long_prompt = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    with pytest.raises(ValueError, match="passaria da janela de 16"):
        generate(model, tok, long_prompt, max_new_tokens=4, greedy=True, on_overflow="error")
    with pytest.warns(UserWarning, match="descartei os"):
        out = generate(model, tok, long_prompt, max_new_tokens=4, greedy=True)
    assert len(out.prompt_ids) + 4 <= 16 and out.truncated_tokens > 0


# ----------------------------------------------------------------------------- top-k e penalidade


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("k", [1, 3, 10])
def test_top_k_equals_transformers_warper_with_ties(seed, k):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randint(-4, 5, (50,), generator=g).double() / 2   # valores repetidos: empates no k-ésimo
    ours = top_k_filter(logits, k)
    theirs = TopKLogitsWarper(top_k=k)(torch.zeros(1, 1, dtype=torch.long), logits[None].clone())[0]
    kept = torch.isfinite(theirs)
    assert torch.equal(ours.probs > 0, kept)
    assert torch.allclose(ours.probs, torch.softmax(theirs, -1), atol=1e-12)
    assert set(ours.indices.tolist()) == set(torch.nonzero(kept).flatten().tolist())
    assert len(ours.indices) >= k   # empates mantêm todos


def test_top_k_keeps_exactly_k_without_ties_and_respects_temperature():
    logits = torch.tensor([3.0, 1.0, 2.0, 0.0, -1.0])
    nucleus = top_k_filter(logits, 2, temperature=0.5)
    assert nucleus.indices.tolist() == [0, 2]
    expected = torch.softmax(torch.tensor([3.0, 2.0]).double() / 0.5, -1)
    assert torch.allclose(nucleus.probs[[0, 2]].double(), expected)
    assert top_k_filter(logits, 99).indices.numel() == 5


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("min_p", [0.0, 0.05, 0.3, 1.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_min_p_equals_transformers_warper(seed, min_p, dtype):
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(60, generator=g) * 3).to(dtype)
    logits[7] = logits.max()                                  # um empate no topo
    theirs = MinPLogitsWarper(min_p=min_p)(torch.zeros(1, 1, dtype=torch.long), logits[None].clone())[0]
    ours = min_p_logits(logits, min_p)
    assert torch.equal(torch.isfinite(ours), torch.isfinite(theirs))
    assert torch.equal(ours[torch.isfinite(ours)], logits[torch.isfinite(ours)])
    assert ours.dtype == dtype


def test_min_p_known_threshold_and_bad_input():
    probs = torch.tensor([0.5, 0.3, 0.1, 0.06, 0.04]).double()
    kept = torch.isfinite(min_p_logits(probs.log(), 0.2))       # limiar 0.2 × 0.5 = 0.1: o 0.1 fica
    assert kept.tolist() == [True, True, True, False, False]
    assert torch.isfinite(min_p_logits(probs.log(), 1.0)).sum() == 1
    for bad in (-0.1, 1.5, True, "0.1"):
        with pytest.raises(ValueError, match="min_p deve ser"):
            min_p_logits(probs.log(), bad)
    with pytest.raises(ValueError, match=r"vetor de logits \(\|V\|,\)"):
        min_p_logits(torch.zeros(2, 3), 0.1)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("penalty", [0.5, 1.0, 1.3, 2.0])
def test_repetition_penalty_equals_transformers_processor(seed, penalty):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(40, generator=g)
    previous = torch.randint(0, 40, (12,), generator=g)      # com repetições: cada token conta uma vez
    ours = penalize_repetition(logits, previous.tolist(), penalty)
    theirs = RepetitionPenaltyLogitsProcessor(penalty=penalty)(previous[None], logits[None].clone())[0]
    assert torch.allclose(ours, theirs, atol=0)


def test_repetition_penalty_shrinks_both_signs_and_leaves_the_rest():
    logits = torch.tensor([2.0, -2.0, 1.0])
    out = penalize_repetition(logits, [0, 1, 0], 2.0)
    assert out.tolist() == [1.0, -4.0, 1.0]
    assert logits.tolist() == [2.0, -2.0, 1.0]            # não altera a entrada


@pytest.mark.parametrize("bad, message", [
    ({"k": 0}, "top_k deve ser um inteiro"),
    ({"k": 2.5}, "top_k deve ser um inteiro"),
])
def test_top_k_bad_input(bad, message):
    with pytest.raises(ValueError, match=message):
        top_k_filter(torch.zeros(5), **bad)


@pytest.mark.parametrize("penalty", [0, -1.0, float("nan"), "muito"])
def test_repetition_penalty_bad_input(penalty):
    with pytest.raises(ValueError, match="repetition_penalty"):
        penalize_repetition(torch.zeros(5), [1], penalty)
    with pytest.raises(ValueError, match="fora do vocabulário"):
        penalize_repetition(torch.zeros(5), [7], 1.2)


def test_generate_top_k_1_is_greedy_and_penalty_matches_transformers(decoder):
    model, tok = decoder
    greedy = generate(model, tok, PROMPT, max_new_tokens=10, greedy=True)
    top1 = generate(model, tok, PROMPT, max_new_tokens=10, temperature=0.7, top_k=1, seed=5)
    assert top1.new_ids == greedy.new_ids                 # k = 1: só o mais provável sobra
    ours = generate(model, tok, PROMPT, max_new_tokens=16, greedy=True, repetition_penalty=1.3,
                    stop_at_eos=False)
    ids = tok(PROMPT, return_tensors="pt")
    with torch.no_grad():
        theirs = model.generate(**ids, do_sample=False, max_new_tokens=16, repetition_penalty=1.3,
                                min_new_tokens=16)
    assert ours.new_ids == theirs[0, ids["input_ids"].shape[1]:].tolist()
    assert ours.new_ids != generate(model, tok, PROMPT, max_new_tokens=16, greedy=True,
                                    stop_at_eos=False).new_ids   # a penalidade mudou algo


# ----------------------------------------------------------------------------- τ, k e p juntos; lote


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("tau, k, p", [(0.7, 5, 0.9), (1.5, 20, 0.5), (1.0, None, 0.8), (0.5, 3, 1.0)])
def test_sampling_distribution_equals_the_transformers_chain(seed, tau, k, p):
    g = torch.Generator().manual_seed(seed)
    logits = 2 * torch.randn(2, 60, generator=g).double()   # lote de 2 (empates: teste do top-k)
    ours = sampling_distribution(logits, tau, k, p)
    theirs = TemperatureLogitsWarper(tau)(None, logits.clone())
    if k is not None:
        theirs = TopKLogitsWarper(top_k=k)(None, theirs)
    if p < 1.0:
        theirs = TopPLogitsWarper(top_p=p)(None, theirs)
    assert torch.allclose(ours, torch.softmax(theirs, -1), atol=1e-12)
    assert torch.allclose(sampling_distribution(logits[0], tau, k, p), ours[0])


def test_top_p_after_top_k_is_relative_to_the_top_k_mass():
    logits = torch.log(torch.tensor([0.4, 0.3, 0.2, 0.1]))
    # top-k = 2 renormaliza para (4/7, 3/7); p = 0.5 então guarda só o primeiro
    assert sampling_distribution(logits, 1.0, 2, 0.5).tolist() == pytest.approx([1, 0, 0, 0])
    assert (sampling_distribution(logits, 1.0, None, 0.5) > 0).sum() == 2   # sem top-k, dois ficam


def test_sample_many_one_row_equals_generate_and_rows_differ(decoder):
    model, tok = decoder
    (one,) = sample_many(model, tok, PROMPT, n=1, max_new_tokens=8, temperature=0.9, seed=3)
    assert one == generate(model, tok, PROMPT, max_new_tokens=8, temperature=0.9, seed=3).text
    rows = sample_many(model, tok, PROMPT, n=3, max_new_tokens=8, temperature=0.9, seed=3)
    assert len(rows) == 3 and len(set(rows)) > 1
    assert rows == sample_many(model, tok, PROMPT, n=3, max_new_tokens=8, temperature=0.9, seed=3)
    greedy = generate(model, tok, PROMPT, max_new_tokens=8, greedy=True).text
    assert sample_many(model, tok, PROMPT, n=3, max_new_tokens=8, top_k=1, seed=0) == [greedy] * 3


def test_sample_many_stops_each_row_at_eos(decoder):
    model, tok = decoder
    period = tok(".", add_special_tokens=False)["input_ids"][0]

    class PeriodIsEos:                                     # o "." faz o papel do EOS
        eos_token_id = period

        def __getattr__(self, name):
            return getattr(tok, name)

        def __call__(self, *args, **kwargs):
            return tok(*args, **kwargs)

    rows = sample_many(model, PeriodIsEos(), PROMPT, n=4, max_new_tokens=40, temperature=0.8, seed=1)
    ended = 0
    for row in rows:
        ids = tok(row, add_special_tokens=False)["input_ids"]
        assert period not in ids[:-1]                       # nada depois do primeiro "."
        ended += ids[-1] == period
    assert ended >= 2


@pytest.mark.parametrize("kwargs, message", [
    ({"n": 0}, "n deve ser"), ({"n": 2, "temperature": 0}, "temperatura"),
    ({"n": 2, "top_k": 0}, "top_k"), ({"n": 2, "max_new_tokens": 0}, "max_new_tokens"),
])
def test_sample_many_bad_input(decoder, kwargs, message):
    model, tok = decoder
    with pytest.raises(ValueError, match=message):
        sample_many(model, tok, PROMPT, **kwargs)


def test_sample_batch_with_one_prompt_is_sample_many(decoder):
    from lncc_llm.sampling import sample_batch, sample_many

    model, tok = decoder
    many = sample_many(model, tok, "The weather today is", n=3, max_new_tokens=8, temperature=0.9, seed=4)
    (batch,) = sample_batch(model, tok, ["The weather today is"], n=3, max_new_tokens=8, temperature=0.9,
                            seed=4)
    assert batch == many


def test_sample_batch_pads_on_the_left_without_leaking_into_the_rows(decoder):
    """Prompts de comprimentos diferentes no mesmo lote: com top_k = 1 cada linha tem de dar a gulosa
    dela sozinha, o que só acontece se a máscara e as posições ignorarem o preenchimento."""
    from lncc_llm.sampling import sample_batch

    model, tok = decoder
    prompts = ["Hi", "The capital of France is a city called", "What is 2 + 2?"]
    rows = sample_batch(model, tok, prompts, n=2, max_new_tokens=6, top_k=1, seed=0)
    for prompt, texts in zip(prompts, rows):
        alone = generate(model, tok, prompt, max_new_tokens=6, greedy=True).text
        assert texts == [alone, alone], prompt


def test_sample_batch_refuses_bad_input(decoder):
    from lncc_llm.sampling import sample_batch

    model, tok = decoder
    with pytest.raises(ValueError, match="vazia"):
        sample_batch(model, tok, [], n=2)
    with pytest.raises(ValueError, match="n deve ser"):
        sample_batch(model, tok, ["a"], n=0)
