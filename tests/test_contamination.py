"""Testes de lncc_llm.contamination: quase-duplicatas e Min-K % prob."""
import pytest

from lncc_llm import contamination as ev


def test_near_duplicates_flags_copies_not_strangers():
    train = ["El Niño is the warm phase of ENSO in the Pacific.", "Bake the bread for forty minutes."]
    test = ["el nino is the warm phase of ENSO in the pacific", "The stock market closed higher today."]
    (i0, j0, s0, flag0), (i1, _, s1, flag1) = ev.near_duplicates(train, test)
    assert (i0, j0, flag0) == (0, 0, True) and s0 > 0.7
    assert i1 == 1 and not flag1 and s1 < 0.3
    assert ev.near_duplicates(train, train[:1])[0][2] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="dois conjuntos"):
        ev.near_duplicates([], test)


def test_cross_similarities_flags_a_copy_above_all_other_pairs():
    train = ["El Niño warms the Pacific.", "Trade winds blow west.", "A monsoon is seasonal."]
    test = ["el nino warms the pacific", "What is a volcano?"]
    sims = ev.cross_similarities(train, test)
    assert sims.shape == (2, 3)
    assert sims[0, 0] == sims.max() and sims[0, 0] > 0.5


def test_token_logprobs_match_the_models_own_loss(decoder):
    import torch

    model, tok = decoder
    texts = ["Question: Which planet is closest to the Sun?\nAnswer: Mercury",
             "The trade winds blow from east to west."]
    rows = ev.token_logprobs(model, tok, texts)        # em lote, com preenchimento
    for text, row in zip(texts, rows):
        ids = tok(text, return_tensors="pt", add_special_tokens=False)["input_ids"]
        assert len(row) == ids.shape[1] - 1
        with torch.no_grad():
            loss = model(input_ids=ids, labels=ids).loss.item()
        assert sum(row) / len(row) == pytest.approx(-loss, abs=1e-4)


def test_min_k_prob_averages_the_worst_tokens(decoder):
    model, tok = decoder
    text = "El Niño is the warm phase of the El Niño–Southern Oscillation."
    row = ev.token_logprobs(model, tok, [text])[0]
    for k in (0.1, 0.2, 0.5, 1.0):
        worst = sorted(row)[: max(1, int(len(row) * k))]
        assert ev.min_k_prob(model, tok, [text], k=k)[0] == pytest.approx(sum(worst) / len(worst))
    assert ev.min_k_prob(model, tok, [text], k=1.0)[0] == pytest.approx(sum(row) / len(row))
    # um texto natural tem os piores tokens menos improváveis que as mesmas palavras embaralhadas
    shuffled = "Oscillation phase warm El the is of Niño–Southern El the Niño."
    assert ev.min_k_prob(model, tok, [text])[0] > ev.min_k_prob(model, tok, [shuffled])[0]
    with pytest.raises(ValueError, match="fração"):
        ev.min_k_prob(model, tok, [text], k=0)
    with pytest.raises(ValueError, match="não vazios"):
        ev.min_k_prob(model, tok, [""])
