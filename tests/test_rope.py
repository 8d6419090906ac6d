"""Testes de lncc_llm.rope: números do texto, propriedades da rotação e o rotary do SmolLM2 real."""
import math

import pytest
import torch

from lncc_llm.rope import (
    apply_rope,
    attention_logits,
    interleaved_to_half_permutation,
    rope_angles,
    rope_cos_sin,
    rope_frequencies,
    rotate_half,
    rotation_matrix,
)

# Seção 3.3: o experimento-base do texto (Q = K = X, posições 0, 1, 2, base 10000, pares intercalados).
X_TOY = torch.tensor([[1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0], [0.0, 1.0, -1.0, 1.0]], dtype=torch.float64)
LOGITS_PLAIN = torch.tensor([[1.0, 0.5, -0.5], [0.5, 1.5, 1.0], [-0.5, 1.0, 1.5]], dtype=torch.float64)
LOGITS_ROPE = torch.tensor(
    [[1.0, -0.1556, -0.9645], [-0.1556, 1.5, 0.3444], [-0.9645, 0.3444, 1.5]], dtype=torch.float64
)


def _random(*shape, seed=0, dtype=torch.float64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def test_text_toy_logits_without_and_with_rope():
    positions = torch.arange(3)
    plain = attention_logits(X_TOY, X_TOY)
    # Os logits do texto já incluem a escala 1/√d = 1/2: X Xᵀ = [[2, 1, -1], ...].
    assert torch.equal(X_TOY @ X_TOY.T, 2 * LOGITS_PLAIN)
    assert torch.allclose(plain, LOGITS_PLAIN, atol=1e-12)
    q = apply_rope(X_TOY, positions)
    rope = attention_logits(q, q)
    assert torch.equal(rope.round(decimals=4), LOGITS_ROPE)
    # A entrada (0, 1) na mão: q_0 fica parada (posição 0) e q_1 gira 1 rad no 1º par e 0,01 rad no 2º.
    hand_01 = (math.cos(1) - math.sin(1) - math.sin(0.01)) / 2
    assert rope[0, 1].item() == pytest.approx(hand_01, abs=1e-12)


def test_frequencies_of_the_text():
    assert torch.allclose(rope_frequencies(4, dtype=torch.float64), torch.tensor([1.0, 0.01], dtype=torch.float64))
    inv = rope_frequencies(64, base=100000.0, dtype=torch.float64)
    assert inv[0] == 1.0 and inv[-1] == pytest.approx(100000.0 ** (-62 / 64))
    assert torch.all(inv[1:] < inv[:-1])
    assert rope_angles(torch.tensor([0, 1, 2]), 4, dtype=torch.float64).tolist() == [[0, 0], [1, 0.01], [2, 0.02]]


def test_rope_is_not_the_identity_and_position_zero_is():
    x = _random(5, 8)
    assert torch.equal(apply_rope(x, torch.zeros(5)), x)
    rotated = apply_rope(x, torch.arange(5))
    assert not torch.allclose(rotated[1:], x[1:])


@pytest.mark.parametrize("layout", ["interleaved", "rotate_half"])
def test_norm_preserved(layout):
    x = _random(2, 3, 7, 16)
    y = apply_rope(x, torch.arange(7) * 3.7, layout=layout)
    assert torch.allclose(y.norm(dim=-1), x.norm(dim=-1), atol=1e-12)
    # ...e cada par guarda a sua própria norma (é uma rotação em cada plano, não uma mistura).
    def pair_norms(t):
        if layout == "interleaved":  # pares (x0, x1), (x2, x3), ...
            return t.unflatten(-1, (8, 2)).norm(dim=-1)
        return torch.stack(t.chunk(2, dim=-1), dim=-1).norm(dim=-1)  # pares (x_j, x_{j+8})

    assert torch.allclose(pair_norms(x), pair_norms(y), atol=1e-12)


@pytest.mark.parametrize("layout", ["interleaved", "rotate_half"])
@pytest.mark.parametrize("shift", [1, 17, 1000, 2.5])
def test_logits_invariant_to_shifting_all_positions(layout, shift):
    q, k = _random(6, 32, seed=1), _random(6, 32, seed=2)
    pos = torch.arange(6, dtype=torch.float64)
    base_logits = attention_logits(apply_rope(q, pos, layout=layout), apply_rope(k, pos, layout=layout))
    shifted = attention_logits(
        apply_rope(q, pos + shift, layout=layout), apply_rope(k, pos + shift, layout=layout)
    )
    assert torch.allclose(base_logits, shifted, atol=1e-9)
    # Mas mudar só as posições das keys muda os logits: a posição relativa importa.
    moved = attention_logits(apply_rope(q, pos, layout=layout), apply_rope(k, pos + shift, layout=layout))
    assert not torch.allclose(base_logits, moved, atol=1e-3)


def test_relative_identity_2d():
    u, v = _random(2, seed=3), _random(2, seed=4)
    for alpha, beta in [(0.3, 1.1), (2.0, -0.7), (5.0, 5.0)]:
        left = (rotation_matrix(alpha) @ u) @ (rotation_matrix(beta) @ v)
        right = u @ rotation_matrix(beta - alpha) @ v
        assert left.item() == pytest.approx(right.item(), abs=1e-12)


def test_apply_rope_on_a_pair_is_the_rotation_matrix():
    u = _random(1, 2, seed=5)
    for p in (0.0, 0.4, 3.0):
        expected = rotation_matrix(p) @ u[0]
        assert torch.allclose(apply_rope(u, torch.tensor([p]))[0], expected, atol=1e-12)
        assert torch.allclose(apply_rope(u, torch.tensor([p]), layout="rotate_half")[0], expected, atol=1e-12)


def test_layouts_are_the_same_rotation_up_to_a_permutation():
    perm = interleaved_to_half_permutation(8)
    assert perm.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    x = _random(3, 5, 8, seed=6)
    pos = torch.tensor([0.0, 1.0, 2.0, 10.0, 31.5])
    inter = apply_rope(x, pos, layout="interleaved")
    half = apply_rope(x[..., perm], pos, layout="rotate_half")
    assert torch.allclose(inter[..., perm], half, atol=1e-12)
    # Sem reordenar, os dois arranjos dão vetores diferentes.
    assert not torch.allclose(apply_rope(x, pos, layout="rotate_half"), inter, atol=1e-3)
    # E os logits entre vetores girados não dependem da ordem das coordenadas.
    assert torch.allclose(attention_logits(inter, inter), attention_logits(half, half), atol=1e-12)


def test_rotate_half_and_cos_sin_tables():
    x = torch.arange(1.0, 7.0)
    assert rotate_half(x).tolist() == [-4.0, -5.0, -6.0, 1.0, 2.0, 3.0]
    cos, sin = rope_cos_sin(torch.arange(3), 4, layout="rotate_half", dtype=torch.float64)
    assert cos.shape == (3, 4) and torch.equal(cos[:, :2], cos[:, 2:])
    cos_i, _ = rope_cos_sin(torch.arange(3), 4, layout="interleaved", dtype=torch.float64)
    assert torch.equal(cos_i[:, 0], cos_i[:, 1]) and torch.equal(cos_i[:, 0], cos[:, 0])
    y = x[:4] * cos[2] + rotate_half(x[:4]) * sin[2]
    assert torch.allclose(y, apply_rope(x[:4].double(), torch.tensor([2]), layout="rotate_half")[0])


def test_batched_positions_and_dtype():
    x = _random(2, 4, 6, dtype=torch.float32)
    pos = torch.tensor([[0, 1, 2, 3], [5, 6, 7, 8]])
    y = apply_rope(x, pos)
    assert y.dtype == torch.float32 and y.shape == x.shape
    assert torch.allclose(y[1], apply_rope(x[1], torch.arange(5, 9)))


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="par"):
        apply_rope(torch.randn(3, 5), torch.arange(3))
    with pytest.raises(ValueError, match="Arranjo"):
        apply_rope(torch.randn(3, 4), torch.arange(3), layout="gptj")
    with pytest.raises(ValueError, match="posições"):
        apply_rope(torch.randn(3, 4), torch.arange(5))
    with pytest.raises(ValueError, match="positiva"):
        rope_frequencies(4, base=0)
    with pytest.raises(ValueError, match="d_k"):
        attention_logits(torch.randn(2, 4), torch.randn(2, 6))


def test_matches_smollm2_rotary_step(decoder):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    model, tokenizer = decoder
    cfg = model.config
    assert cfg.head_dim == 64 and cfg.rope_parameters["rope_theta"] == 100000.0
    inputs = tokenizer("Rotary embeddings turn positions into angles.", return_tensors="pt")
    n = inputs["input_ids"].shape[1]
    attn = model.model.layers[2].self_attn
    with torch.no_grad():
        hidden = model(**inputs, output_hidden_states=True).hidden_states[2]
        x = model.model.layers[2].input_layernorm(hidden)
        q = attn.q_proj(x).view(1, n, cfg.num_attention_heads, 64).transpose(1, 2)
        k = attn.k_proj(x).view(1, n, cfg.num_key_value_heads, 64).transpose(1, 2)
        positions = torch.arange(n) + 7  # posições deslocadas também valem
        cos, sin = model.model.rotary_emb(x, positions[None])
        q_ref, k_ref = apply_rotary_pos_emb(q, k, cos, sin)
    base = cfg.rope_parameters["rope_theta"]
    q_ours = apply_rope(q, positions, base=base, layout="rotate_half")
    k_ours = apply_rope(k, positions, base=base, layout="rotate_half")
    assert (q_ours - q_ref).abs().max() < 1e-5 and (k_ours - k_ref).abs().max() < 1e-5
    my_cos, my_sin = rope_cos_sin(positions, 64, base=base, layout="rotate_half")
    assert torch.allclose(my_cos, cos[0], atol=1e-6) and torch.allclose(my_sin, sin[0], atol=1e-6)
    # O arranjo intercalado (o do texto) não é o que este modelo usa.
    assert (apply_rope(q, positions, base=base, layout="interleaved") - q_ref).abs().max() > 1e-2


def test_consolidation_exercise_of_the_text():
    # Exercício de consolidação (Cap. 3): só x_reads muda para [1, -1, 0, 0].
    x = X_TOY.clone()
    x[2] = torch.tensor([1.0, -1.0, 0.0, 0.0], dtype=torch.float64)
    plain = attention_logits(x, x)
    q = apply_rope(x, torch.arange(3))
    rope = attention_logits(q, q)
    assert torch.equal(plain, torch.tensor([[1.0, 0.5, 0.5], [0.5, 1.5, 0.0], [0.5, 0.0, 1.0]], dtype=torch.float64))
    expected = torch.tensor([[1.0, -0.1556, 0.2466], [-0.1556, 1.5, 0.8415], [0.2466, 0.8415, 1.0]], dtype=torch.float64)
    assert torch.equal(rope.round(decimals=4), expected)
    assert rope[1, 2].item() == pytest.approx(math.sin(1), abs=1e-12)
    assert rope[0, 2].item() == pytest.approx((math.cos(2) + math.sin(2)) / 2, abs=1e-12)
    assert torch.allclose(rope.diagonal(), plain.diagonal())
