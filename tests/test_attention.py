"""Testes de lncc_llm.attention: números do texto, concordância com o PyTorch e com o BERT real."""
import math

import pytest
import torch

from lncc_llm import (
    additive_mask,
    causal_mask,
    merge_heads,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
    split_heads,
)


def test_mini_corpus_matches_text():
    # Seção 2.8: E = [[1,0],[0,1],[1,1],[-1,1]], entrada "teddy reads" = linhas 0 e 2.
    E = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 1.0]])
    X = E[[0, 2]]
    Z, A = scaled_dot_product_attention(X, X, X)
    s = 1 / math.sqrt(2)
    expected_A = torch.softmax(torch.tensor([[s, s], [s, 2 * s]]), dim=-1)
    assert torch.allclose(A, expected_A)
    assert torch.allclose(A, torch.tensor([[0.5, 0.5], [0.33, 0.67]]), atol=0.005)
    assert torch.allclose(Z, torch.tensor([[1.0, 0.5], [1.0, 0.67]]), atol=0.005)


@pytest.mark.parametrize("shape", [(5, 8), (2, 3, 7, 16)])
def test_agrees_with_torch_sdpa(shape):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(*shape, generator=g) for _ in range(3))
    out, weights = scaled_dot_product_attention(q, k, v)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    assert torch.allclose(out, ref, atol=1e-6)
    assert torch.allclose(weights.sum(-1), torch.ones(shape[:-1]), atol=1e-6)


def test_masked_agrees_with_torch_and_zeroes_masked_keys():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 4, 6, 8, generator=g) for _ in range(3))
    mask = causal_mask(6)
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert torch.allclose(out, ref, atol=1e-6)
    assert torch.all(weights[..., ~mask] == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 4, 6), atol=1e-6)


def test_custom_scale_changes_sharpness():
    x = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    _, soft = scaled_dot_product_attention(x, x, x, scale=0.1)
    _, sharp = scaled_dot_product_attention(x, x, x, scale=10.0)
    assert sharp[1, 1] > soft[1, 1]


def test_padding_mask_blocks_pad_tokens():
    attention_mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    m = padding_mask(attention_mask)
    assert m.shape == (2, 1, 1, 4)
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 3, 4, 5, generator=g) for _ in range(3))
    _, weights = scaled_dot_product_attention(q, k, v, mask=m)
    assert torch.all(weights[1, :, :, 2:] == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3, 4), atol=1e-6)


def test_additive_mask_is_zero_or_minus_inf():
    add = additive_mask(torch.tensor([[1, 1, 0]]))
    assert add[0, 0] == 0 and add[0, 1] == 0 and torch.isinf(add[0, 2]) and add[0, 2] < 0


def test_fully_masked_row_gets_zero_weights():
    x = torch.ones(2, 3)
    mask = torch.tensor([[False, False], [True, True]])
    out, weights = scaled_dot_product_attention(x, x, x, mask=mask)
    assert torch.all(weights[0] == 0) and torch.all(out[0] == 0)
    assert torch.allclose(weights[1], torch.tensor([0.5, 0.5]))


def test_bad_inputs_raise_clear_errors():
    x = torch.randn(3, 4)
    with pytest.raises(ValueError, match="forma"):
        scaled_dot_product_attention(x, x, x, mask=torch.ones(5, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="0/1"):
        scaled_dot_product_attention(x, x, x, mask=torch.full((3, 3), 0.5))
    with pytest.raises(ValueError, match="d_k"):
        scaled_dot_product_attention(x, torch.randn(3, 5), x)
    with pytest.raises(ValueError, match="posições"):
        scaled_dot_product_attention(x, x, torch.randn(2, 4))
    with pytest.raises(ValueError, match="cabeças"):
        split_heads(torch.randn(1, 3, 10), 3)
    with pytest.raises(ValueError, match="batch"):
        padding_mask(torch.ones(4))
    with pytest.raises(ValueError, match="≥ 1"):
        causal_mask(0)


def test_split_merge_roundtrip_and_layout():
    x = torch.arange(2 * 3 * 12, dtype=torch.float32).view(2, 3, 12)
    heads = split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 3)
    assert torch.equal(heads[0, 1, 0], x[0, 0, 3:6])  # cabeça 1 = fatia 3:6 das features
    assert torch.equal(merge_heads(heads), x)


def test_causal_mask_is_lower_triangular():
    m = causal_mask(4)
    assert m.tolist() == [[i >= j for j in range(4)] for i in range(4)]


def test_multi_head_agrees_with_torch_multihead_attention():
    torch.manual_seed(0)
    d, heads = 12, 3
    mha = torch.nn.MultiheadAttention(d, heads, batch_first=True, bias=True).eval()
    wq, wk, wv = mha.in_proj_weight.chunk(3)
    bq, bk, bv = mha.in_proj_bias.chunk(3)
    x = torch.randn(2, 5, d)
    concat, weights = multi_head_attention(
        x,
        lambda t: t @ wq.T + bq,
        lambda t: t @ wk.T + bk,
        lambda t: t @ wv.T + bv,
        heads,
    )
    ref_out, ref_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    assert torch.allclose(mha.out_proj(concat), ref_out, atol=1e-6)
    assert torch.allclose(weights, ref_w, atol=1e-6)


def test_reproduces_bert_layer0_attention(encoder, teddy_inputs):
    model, _ = encoder
    with torch.no_grad():
        out = model(**teddy_inputs, output_attentions=True, output_hidden_states=True)
        layer = model.encoder.layer[0]
        sa = layer.attention.self
        x = out.hidden_states[0]
        concat, weights = multi_head_attention(
            x, sa.query, sa.key, sa.value, model.config.num_attention_heads,
            mask=padding_mask(teddy_inputs["attention_mask"]),
        )
        sub_block = layer.attention.output.LayerNorm(layer.attention.output.dense(concat) + x)
        ffn = layer.output.dense(layer.intermediate(sub_block))
        layer_out = layer.output.LayerNorm(ffn + sub_block)
    assert (weights - out.attentions[0]).abs().max() < 1e-5
    assert (layer_out - out.hidden_states[1]).abs().max() < 1e-4
