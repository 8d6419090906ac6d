"""Testes de lncc_llm.activations: a conta à mão das ativações bate com o que o autograd guarda."""
import pytest
import torch

from lncc_llm.activations import activation_model, saved_activation_bytes


def _tiny(seed=0, **kw):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=160, num_hidden_layers=3,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      tie_word_embeddings=True, attn_implementation="sdpa", **kw)
    return LlamaForCausalLM(cfg).eval(), cfg


@pytest.mark.parametrize("batch,length", [(1, 32), (2, 48)])
def test_model_matches_what_autograd_saves(batch, length):
    model, cfg = _tiny()
    ids = torch.randint(0, cfg.vocab_size, (batch, length), generator=torch.Generator().manual_seed(1))
    measured = saved_activation_bytes(model, input_ids=ids, labels=ids)
    predicted = activation_model(cfg, batch * length)["total"]
    assert measured == pytest.approx(predicted, rel=0.1)


def test_frozen_norms_save_less_and_the_model_knows_it():
    model, cfg = _tiny()
    for name, p in model.named_parameters():
        p.requires_grad_("norm" not in name)
    ids = torch.randint(0, cfg.vocab_size, (2, 40), generator=torch.Generator().manual_seed(4))
    measured = saved_activation_bytes(model, input_ids=ids, labels=ids)
    predicted = activation_model(cfg, 80, trainable_norms=False)["total"]
    assert measured == pytest.approx(predicted, rel=0.1)
    assert predicted < activation_model(cfg, 80)["total"]


def test_activations_grow_linearly_with_tokens_and_loss_adds_the_head():
    model, cfg = _tiny()
    ids = torch.randint(0, cfg.vocab_size, (1, 64), generator=torch.Generator().manual_seed(2))
    small = saved_activation_bytes(model, input_ids=ids[:, :32])
    large = saved_activation_bytes(model, input_ids=ids)
    assert large / small == pytest.approx(2.0, rel=0.1)
    assert activation_model(cfg, 64)["total"] == pytest.approx(2 * activation_model(cfg, 32)["total"])
    assert activation_model(cfg, 10)["cabeça"] == 10 * cfg.vocab_size * 4
    assert activation_model(cfg, 10, with_loss=False)["cabeça"] == 0


def test_parameters_are_not_counted_and_nothing_is_left_behind():
    model, cfg = _tiny()
    ids = torch.randint(0, cfg.vocab_size, (1, 16), generator=torch.Generator().manual_seed(3))
    n_param_bytes = sum(p.numel() * 4 for p in model.parameters())
    measured = saved_activation_bytes(model, input_ids=ids)
    assert measured < n_param_bytes           # 16 tokens guardam bem menos que os pesos
    assert all(p.grad is None for p in model.parameters())


def test_step_peak_sees_gradients_adam_and_activations():
    from lncc_llm.activations import step_peak

    model, cfg = _tiny()
    ids = torch.randint(0, cfg.vocab_size, (2, 32), generator=torch.Generator().manual_seed(5))
    weights = [p.detach().clone() for p in model.parameters()]
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.0)
    peak = step_peak(model, optimizer, input_ids=ids, labels=ids)
    n_param_bytes = sum(p.numel() * 4 for p in model.parameters())
    n_tensors = len(list(model.parameters()))
    # gradiente + os dois momentos do Adam, e o contador de passos (um escalar fp32 por tensor)
    assert peak["fim"] == 3 * n_param_bytes + 4 * n_tensors
    assert peak["pico"] >= peak["fim"]
    assert all(torch.equal(a, b) for a, b in zip(weights, model.parameters()))   # taxa 0: nada muda
    assert all(p.grad is None for p in model.parameters())


def test_bad_token_count_is_a_clear_error():
    _, cfg = _tiny()
    with pytest.raises(ValueError, match="tokens deve ser um inteiro"):
        activation_model(cfg, 0)
