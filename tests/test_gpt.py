"""Testes de lncc_llm.gpt: cada peça contra a do PyTorch, causalidade, contagens, pesos sorteados e geração."""
import pytest
import torch
import torch.nn.functional as F

from lncc_llm.gpt import (
    GELU,
    GPT_CONFIG_124M,
    CausalSelfAttention,
    FeedForward,
    GPTConfig,
    GPTModel,
    LayerNorm,
    SeparateHeadsAttention,
    TransformerBlock,
    count_parameters,
    generate,
)

SMALL = GPTConfig(vocab_size=50, max_seq_len=16, d_model=24, n_heads=3, n_layers=2, dropout=0.0)


def _seeded(cls, *args, seed=0):
    torch.manual_seed(seed)
    return cls(*args)


def _small_model(**changes):
    return _seeded(GPTModel, SMALL.replace(**changes)).eval()


def test_layernorm_matches_torch():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 5, 8, generator=g) * 3 + 1
    ours = LayerNorm(8)
    ref = torch.nn.LayerNorm(8, eps=1e-5)
    with torch.no_grad():
        ours.gamma.copy_(torch.randn(8, generator=g))
        ours.beta.copy_(torch.randn(8, generator=g))
        ref.weight.copy_(ours.gamma)
        ref.bias.copy_(ours.beta)
    assert torch.allclose(ours(x), ref(x), atol=1e-5)
    plain = LayerNorm(8)(x)
    assert torch.allclose(plain.mean(-1), torch.zeros(2, 5), atol=1e-5)
    assert torch.allclose(plain.var(-1, unbiased=False), torch.ones(2, 5), atol=1e-3)
    # Variância populacional (1/d): com 1/(d − 1) o resultado seria outro.
    sample_var = (x - x.mean(-1, keepdim=True)) / x.var(-1, keepdim=True).add(1e-5).sqrt()
    assert not torch.allclose(plain, sample_var, atol=1e-3)


def test_gelu_is_the_tanh_approximation():
    x = torch.linspace(-6, 6, 1001)
    assert torch.allclose(GELU()(x), F.gelu(x, approximate="tanh"), atol=1e-6)
    assert torch.allclose(GELU()(x), F.gelu(x), atol=1e-3)  # perto da GELU exata
    assert not torch.allclose(GELU()(x), torch.relu(x), atol=1e-2)


def test_feedforward_expands_four_times_and_is_down_gelu_up():
    ff = FeedForward(768)
    assert (ff.up.in_features, ff.up.out_features) == (768, 3072)
    assert (ff.down.in_features, ff.down.out_features) == (3072, 768)
    x = torch.randn(2, 3, 768)
    with torch.no_grad():
        expected = F.linear(F.gelu(F.linear(x, ff.up.weight, ff.up.bias), approximate="tanh"),
                            ff.down.weight, ff.down.bias)
        assert torch.allclose(ff(x), expected, atol=1e-5)
    assert count_parameters(ff) == 768 * 3072 + 3072 + 3072 * 768 + 768


def _heads(t, n_heads):
    b, n, d = t.shape
    return t.view(b, n, n_heads, d // n_heads).transpose(1, 2)


@pytest.mark.parametrize("qkv_bias", [False, True])
def test_attention_matches_torch_sdpa_with_the_same_weights(qkv_bias):
    torch.manual_seed(0)
    att = CausalSelfAttention(24, 3, max_seq_len=16, dropout=0.0, qkv_bias=qkv_bias).eval()
    x = torch.randn(2, 7, 24)
    with torch.no_grad():
        # As linhas [0, d), [d, 2d) e [2d, 3d) do peso de qkv são Q, K e V.
        q, k, v = (_heads(t, 3) for t in att.qkv(x).split(24, dim=-1))
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        ref = att.proj(ref.transpose(1, 2).reshape(2, 7, 24))
        ours = att(x)
        weights = att.attention_weights(x)
        w_q = att.qkv.weight[:24]
        assert torch.allclose(_heads(x @ w_q.T + (att.qkv.bias[:24] if qkv_bias else 0), 3), q)
    assert torch.allclose(ours, ref, atol=1e-6)
    assert weights.shape == (2, 3, 7, 7)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3, 7), atol=1e-6)
    future = torch.triu(torch.ones(7, 7, dtype=torch.bool), diagonal=1)
    assert torch.all(weights[..., future] == 0)


def test_attention_matches_torch_multihead_attention():
    """nn.MultiheadAttention guarda Q, K e V empilhados como o nosso qkv: copiamos e comparamos."""
    torch.manual_seed(1)
    ours = CausalSelfAttention(24, 3, max_seq_len=16, qkv_bias=True).eval()
    ref = torch.nn.MultiheadAttention(24, 3, bias=True, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(ours.qkv.weight)
        ref.in_proj_bias.copy_(ours.qkv.bias)
        ref.out_proj.weight.copy_(ours.proj.weight)
        ref.out_proj.bias.copy_(ours.proj.bias)
        x = torch.randn(2, 9, 24)
        future = torch.triu(torch.ones(9, 9, dtype=torch.bool), diagonal=1)
        out_ref, w_ref = ref(x, x, x, attn_mask=future, need_weights=True, average_attn_weights=False)
        assert torch.allclose(ours(x), out_ref, atol=1e-5)
        assert torch.allclose(ours.attention_weights(x), w_ref, atol=1e-6)


def test_separate_heads_attention_matches_torch_multihead_attention():
    """Q, K e V em três camadas: com os pesos copiados para o nn.MultiheadAttention (sem viés em Q, K e V),
    a saída coincide; a projeção de saída tem viés; a contagem é 4d² + d; o futuro não mexe no passado."""
    torch.manual_seed(2)
    ours = SeparateHeadsAttention(24, 3, max_seq_len=16).eval()
    ref = torch.nn.MultiheadAttention(24, 3, bias=True, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.q.weight, ours.k.weight, ours.v.weight]))
        ref.in_proj_bias.zero_()
        ref.out_proj.weight.copy_(ours.proj.weight)
        ref.out_proj.bias.copy_(ours.proj.bias)
        x = torch.randn(2, 9, 24)
        future = torch.triu(torch.ones(9, 9, dtype=torch.bool), diagonal=1)
        assert torch.allclose(ours(x), ref(x, x, x, attn_mask=future, need_weights=False)[0], atol=1e-5)
        changed = x.clone()
        changed[:, 5:] = torch.randn(2, 4, 24)
        assert torch.allclose(ours(changed)[:, :5], ours(x)[:, :5], atol=1e-6)
    assert ours.q.bias is None and ours.proj.bias is not None
    assert count_parameters(ours) == 4 * 24 * 24 + 24
    with pytest.raises(ValueError, match="contexto de 16"):
        ours(torch.randn(1, 17, 24))
    with pytest.raises(ValueError, match="não se divide"):
        SeparateHeadsAttention(10, 3, max_seq_len=4)


def test_attention_rejects_sequences_longer_than_context():
    att = CausalSelfAttention(8, 2, max_seq_len=4)
    with pytest.raises(ValueError, match="contexto de 4"):
        att(torch.randn(1, 5, 8))
    with pytest.raises(ValueError, match="não se divide"):
        CausalSelfAttention(10, 3, max_seq_len=4)


def test_block_is_pre_norm_with_shortcuts():
    torch.manual_seed(0)
    block = TransformerBlock(SMALL).eval()
    x = torch.randn(2, 6, 24)
    with torch.no_grad():
        h = x + block.attn(block.attn_norm(x))
        expected = h + block.ffn(block.ffn_norm(h))
        assert torch.allclose(block(x), expected, atol=1e-6)
        post_norm = block.ffn_norm(h + block.ffn(h))  # a variante pós-norm daria outra coisa
        assert not torch.allclose(block(x), post_norm, atol=1e-3)


def test_dropout_acts_only_in_training_mode():
    torch.manual_seed(0)
    model = GPTModel(SMALL.replace(dropout=0.5))
    idx = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        a, b = model(idx), model(idx)
        assert not torch.allclose(a, b)            # treino: cada passada sorteia outra máscara
        model.eval()
        assert torch.equal(model(idx), model(idx))  # eval: determinístico


def test_embed_is_token_plus_position():
    model = _small_model()
    idx = torch.tensor([[5, 5, 7]])
    with torch.no_grad():
        h = model.embed(idx)
        expected = model.token_embedding.weight[idx] + model.position_embedding.weight[:3]
    assert torch.allclose(h, expected)
    assert not torch.allclose(h[0, 0], h[0, 1])  # mesmo token, posições diferentes


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
    assert not any(isinstance(m, CausalSelfAttention) for m in model.modules())
    idx = torch.tensor([[1, 2, 3, 4, 5]])
    changed = torch.tensor([[9, 9, 9, 9, 5]])  # só o passado muda
    with torch.no_grad():
        assert torch.allclose(model(idx)[:, -1], model(changed)[:, -1], atol=1e-6)
    with_att = count_parameters(_small_model())
    per_layer = 4 * 24 * 24 + 24 + 2 * 24  # Q, K, V, U_O (+ viés de U_O) e a LayerNorm da atenção
    assert count_parameters(model) == with_att - SMALL.n_layers * per_layer


def test_gpt2_124m_parameter_counts():
    with torch.device("meta"):
        untied = GPTModel(GPT_CONFIG_124M)
        tied = GPTModel(GPT_CONFIG_124M.replace(tie_weights=True))
        gpt2_like = GPTModel(GPT_CONFIG_124M.replace(tie_weights=True, qkv_bias=True))
    assert count_parameters(untied) == 163_009_536
    assert count_parameters(tied) == 124_412_160
    assert 163_009_536 - 50257 * 768 == 124_412_160
    assert tied.lm_head.weight is tied.token_embedding.weight
    # O GPT-2 do transformers tem viés em Q, K e V: 12 camadas × 3 × 768 = 27.648 a mais.
    assert count_parameters(gpt2_like) == 124_439_808 == 124_412_160 + 12 * 3 * 768


def test_gpt2_124m_matches_transformers_architecture_count():
    from transformers import GPT2Config, GPT2LMHeadModel

    with torch.device("meta"):
        hf = GPT2LMHeadModel(GPT2Config())
        ours = GPTModel(GPT_CONFIG_124M.replace(tie_weights=True, qkv_bias=True))
    assert sum(p.numel() for p in hf.parameters()) == count_parameters(ours) == 124_439_808
    # Mesmas formas, peça por peça (a c_attn do GPT-2 é um Conv1D: peso transposto).
    assert tuple(ours.blocks[0].attn.qkv.weight.shape) == tuple(hf.transformer.h[0].attn.c_attn.weight.shape[::-1])
    assert tuple(ours.position_embedding.weight.shape) == tuple(hf.transformer.wpe.weight.shape)


def test_seeded_124m_model_gives_the_texts_logits():
    """A ordem de criação dos pesos e dos sorteios de dropout reproduz os logits impressos no texto."""
    batch = torch.tensor([[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]])
    built_with_seed_123 = _seeded(GPTModel, GPT_CONFIG_124M, seed=123)  # recém-criado: modo de treino
    with torch.no_grad():
        logits = built_with_seed_123(batch)
    text_first = torch.tensor([[0.3613, 0.4223, -0.0711], [-0.1792, -0.5660, -0.9485],
                               [0.7120, 0.0332, 0.1085], [-1.0076, 0.3418, -0.1190]])
    text_second = torch.tensor([[-0.2564, 0.0900, 0.0335], [0.1230, 0.3653, -0.2074],
                                [1.0558, 1.0318, -0.2800], [-0.1565, 0.3926, 0.3288]])
    assert torch.allclose(logits[0, :, :3], text_first, atol=1e-3)
    assert torch.allclose(logits[1, :, :3], text_second, atol=1e-3)


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
    c = generate(model, start, 15, temperature=0.8, generator=torch.Generator().manual_seed(1))
    assert torch.equal(a, b) and not torch.equal(a, c)
    with pytest.raises(ValueError, match="generator"):
        generate(model, start, 1, temperature=0.8)
    with pytest.raises(ValueError, match="≥ 0"):
        generate(model, start, 1, temperature=-1.0)


def test_count_parameters_counts_a_tied_matrix_once():
    tied = _small_model(tie_weights=True)
    untied = _small_model()
    assert count_parameters(untied) - count_parameters(tied) == 50 * 24
    with torch.no_grad():
        tied.token_embedding.weight[0, 0] = 123.0
    assert tied.lm_head.weight[0, 0].item() == 123.0  # é o mesmo tensor


def test_config_validation_is_in_portuguese():
    with pytest.raises(ValueError, match="não se divide"):
        GPTConfig(d_model=10, n_heads=3)
    with pytest.raises(ValueError, match="dropout"):
        GPTConfig(dropout=1.5)
    with pytest.raises(ValueError, match="n_layers"):
        GPTConfig(n_layers=0)
    with pytest.raises(ValueError, match="n_heads"):
        GPTConfig(n_heads=True)
    assert GPT_CONFIG_124M.to_dict()["vocab_size"] == 50257
    assert list(GPT_CONFIG_124M.to_dict())[:3] == ["vocab_size", "max_seq_len", "d_model"]
    assert GPT_CONFIG_124M.head_dim == 64
    assert GPT_CONFIG_124M.replace(n_layers=2).n_layers == 2 and GPT_CONFIG_124M.n_layers == 12
