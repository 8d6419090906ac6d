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
    assert measured == pytest.approx(predicted, rel=0.15)


def test_activations_grow_linearly_with_tokens_and_loss_adds_the_head():
    model, cfg = _tiny()
    ids = torch.randint(0, cfg.vocab_size, (1, 64), generator=torch.Generator().manual_seed(2))
    small = saved_activation_bytes(model, input_ids=ids[:, :32])
    large = saved_activation_bytes(model, input_ids=ids)
    assert large / small == pytest.approx(2.0, rel=0.1)
    assert activation_model(cfg, 64)["total"] == pytest.approx(2 * activation_model(cfg, 32)["total"])
    with_loss = activation_model(cfg, 10)["cabeça"]
    assert with_loss == 2 * activation_model(cfg, 10, with_loss=False)["cabeça"]


def test_parameters_are_not_counted_and_nothing_is_left_behind():
    model, cfg = _tiny()
    ids = torch.randint(0, cfg.vocab_size, (1, 16), generator=torch.Generator().manual_seed(3))
    n_param_bytes = sum(p.numel() * 4 for p in model.parameters())
    measured = saved_activation_bytes(model, input_ids=ids)
    assert measured < n_param_bytes           # 16 tokens guardam bem menos que os pesos
    assert all(p.grad is None for p in model.parameters())


def test_bad_token_count_is_a_clear_error():
    _, cfg = _tiny()
    with pytest.raises(ValueError, match="tokens deve ser um inteiro"):
        activation_model(cfg, 0)
