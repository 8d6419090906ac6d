"""Testes de lncc_llm.gpt: peças conferidas contra o PyTorch, causalidade, contagem de parâmetros e geração."""
import pytest
import torch
import torch.nn.functional as F

from lncc_llm.gpt import (
    GELU,
    GPT_CONFIG_124M,
    FeedForward,
    GPTConfig,
    GPTModel,
    LayerNorm,
    MultiHeadAttention,
    TransformerBlock,
    count_parameters,
    generate,
)

SMALL = GPTConfig(vocab_size=50, context_length=16, emb_dim=24, n_heads=3, n_layers=2, drop_rate=0.0)


def _small_model(**changes):
    torch.manual_seed(0)
    return GPTModel(SMALL.replace(**changes)).eval()


def test_layernorm_matches_torch():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 5, 8, generator=g) * 3 + 1
    ours = LayerNorm(8)
    ref = torch.nn.LayerNorm(8, eps=1e-5)
    with torch.no_grad():
        ours.scale.copy_(torch.randn(8, generator=g))
        ours.shift.copy_(torch.randn(8, generator=g))
        ref.weight.copy_(ours.scale)
        ref.bias.copy_(ours.shift)
    assert torch.allclose(ours(x), ref(x), atol=1e-5)
    plain = LayerNorm(8)(x)
    assert torch.allclose(plain.mean(-1), torch.zeros(2, 5), atol=1e-5)
    assert torch.allclose(plain.var(-1, unbiased=False), torch.ones(2, 5), atol=1e-3)


def test_gelu_is_the_tanh_approximation():
    x = torch.linspace(-6, 6, 1001)
    assert torch.allclose(GELU()(x), F.gelu(x, approximate="tanh"), atol=1e-6)
    assert torch.allclose(GELU()(x), F.gelu(x), atol=1e-3)  # perto da GELU exata


def test_feedforward_expands_four_times_and_keeps_shape():
    ff = FeedForward(GPT_CONFIG_124M)
    assert ff.layers[0].out_features == 4 * 768 and ff.layers[2].out_features == 768
    assert ff(torch.randn(2, 3, 768)).shape == (2, 3, 768)


def test_attention_matches_torch_sdpa_with_same_weights():
    torch.manual_seed(0)
    att = MultiHeadAttention(d_in=24, d_out=24, context_length=16, num_heads=3, dropout=0.0, qkv_bias=True).eval()
    x = torch.randn(2, 7, 24)

    def heads(t):
        return t.view(2, 7, 3, 8).transpose(1, 2)

    with torch.no_grad():
        q, k, v = heads(att.W_query(x)), heads(att.W_key(x)), heads(att.W_value(x))
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        ref = att.out_proj(ref.transpose(1, 2).reshape(2, 7, 24))
        ours = att(x)
        weights = att.attention_weights(x)
    assert torch.allclose(ours, ref, atol=1e-6)
    assert weights.shape == (2, 3, 7, 7)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3, 7), atol=1e-6)
    future = torch.triu(torch.ones(7, 7, dtype=torch.bool), diagonal=1)
    assert torch.all(weights[..., future] == 0)


def test_attention_rejects_sequences_longer_than_context():
    att = MultiHeadAttention(8, 8, context_length=4, num_heads=2)
    with pytest.raises(ValueError, match="contexto de 4"):
        att(torch.randn(1, 5, 8))


def test_block_is_pre_norm_with_shortcuts():
    torch.manual_seed(0)
    block = TransformerBlock(SMALL).eval()
    x = torch.randn(2, 6, 24)
    with torch.no_grad():
        h = x + block.att(block.norm1(x))
        expected = h + block.ff(block.norm2(h))
        assert torch.allclose(block(x), expected, atol=1e-6)


def test_changing_a_future_token_never_changes_earlier_outputs():
    model = _small_model()
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, 50, (1, 12), generator=g)
    with torch.no_grad():
        base = model(idx)
        for t in range(12):
            changed = idx.clone()
            changed[0, t] = (changed[0, t] + 7) % 50
            out = model(changed)
            assert torch.allclose(out[:, :t], base[:, :t], atol=1e-6), f"posição alterada {t}"
            assert not torch.allclose(out[:, t], base[:, t])


def test_without_attention_each_position_sees_only_itself():
    model = _small_model(use_attention=False)
    assert not any(isinstance(m, MultiHeadAttention) for m in model.modules())
    idx = torch.tensor([[1, 2, 3, 4, 5]])
    changed = torch.tensor([[9, 9, 9, 9, 5]])  # só o passado muda
    with torch.no_grad():
        assert torch.allclose(model(idx)[:, -1], model(changed)[:, -1], atol=1e-6)
    with_att = count_parameters(_small_model())
    per_layer = 4 * 24 * 24 + 24 + 2 * 24  # W_Q, W_K, W_V, W_O (+ viés de W_O) e norm1
    assert count_parameters(model) == with_att - SMALL.n_layers * per_layer


def test_gpt2_124m_parameter_counts():
    with torch.device("meta"):
        untied = GPTModel(GPT_CONFIG_124M)
        tied = GPTModel(GPT_CONFIG_124M.replace(tie_weights=True))
        gpt2_like = GPTModel(GPT_CONFIG_124M.replace(tie_weights=True, qkv_bias=True))
    assert count_parameters(untied) == 163_009_536
    assert count_parameters(tied) == 124_412_160
    assert 163_009_536 - 50257 * 768 == 124_412_160
    assert tied.out_head.weight is tied.tok_emb.weight
    # O GPT-2 do transformers tem viés em Q, K e V: 12 camadas × 3 × 768 = 27.648 a mais.
    assert count_parameters(gpt2_like) == 124_439_808 == 124_412_160 + 12 * 3 * 768


def test_gpt2_124m_matches_transformers_architecture_count():
    from transformers import GPT2Config, GPT2LMHeadModel

    with torch.device("meta"):
        hf = GPT2LMHeadModel(GPT2Config())
        ours = GPTModel(GPT_CONFIG_124M.replace(tie_weights=True, qkv_bias=True))
    assert sum(p.numel() for p in hf.parameters()) == count_parameters(ours) == 124_439_808


def test_forward_shape_and_context_check():
    model = _small_model()
    assert model(torch.zeros(3, 5, dtype=torch.long)).shape == (3, 5, 50)
    with pytest.raises(ValueError, match="contexto de 16"):
        model(torch.zeros(1, 17, dtype=torch.long))


def test_greedy_generation_is_deterministic_and_matches_argmax_loop():
    model = _small_model()
    start = torch.tensor([[3, 1, 4]])
    out1 = generate(model, start, max_new_tokens=20)
    out2 = generate(model, start, max_new_tokens=20)
    assert torch.equal(out1, out2) and out1.shape == (1, 23)
    assert torch.equal(out1[:, :3], start)
    idx = start
    with torch.no_grad():
        for _ in range(20):  # janela deslizante: só os últimos 16 tokens
            nxt = model(idx[:, -16:])[:, -1].argmax(-1, keepdim=True)
            idx = torch.cat([idx, nxt], dim=1)
    assert torch.equal(idx, out1)


def test_sampling_is_reproducible_with_a_cpu_generator():
    model = _small_model()
    start = torch.tensor([[0]])
    a = generate(model, start, 15, temperature=0.8, generator=torch.Generator().manual_seed(0))
    b = generate(model, start, 15, temperature=0.8, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="generator"):
        generate(model, start, 1, temperature=0.8)
    with pytest.raises(ValueError, match="≥ 0"):
        generate(model, start, 1, temperature=-1.0)


def test_config_validation_is_in_portuguese():
    with pytest.raises(ValueError, match="não se divide"):
        GPTConfig(emb_dim=10, n_heads=3)
    with pytest.raises(ValueError, match="drop_rate"):
        GPTConfig(drop_rate=1.5)
    with pytest.raises(ValueError, match="n_layers"):
        GPTConfig(n_layers=0)
    assert GPT_CONFIG_124M.to_dict()["vocab_size"] == 50257
