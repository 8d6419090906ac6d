"""Testes de lncc_llm.gguf_blocks: o nosso desquantizador contra o do gguf-py e contra o modelo."""
import numpy as np
import pytest
from gguf import GGMLQuantizationType, quants

from lncc_llm import gguf_blocks as gb


def test_bits_per_weight_count_the_block_scales():
    assert gb.bits_per_weight("Q4_1") == 5.0
    assert gb.bits_per_weight("Q8_0") == 8.5
    assert gb.bits_per_weight("F32") == 32.0
    with pytest.raises(ValueError, match="não suportado"):
        gb.bits_per_weight("Q6_K")


@pytest.mark.parametrize("kind", ["Q8_0", "Q4_1"])
def test_our_dequantizer_equals_gguf_py_on_random_blocks(kind):
    x = np.random.default_rng(0).standard_normal((6, 96)).astype(np.float32)
    x[0, :32] = 0.0                                     # um bloco todo zero (d = 0)
    x[1, :32] = 7.0                                     # um bloco constante
    raw = quants.quantize(x, GGMLQuantizationType[kind])
    ours = {"Q8_0": gb.dequantize_q8_0, "Q4_1": gb.dequantize_q4_1}[kind](raw, x.shape)
    theirs = quants.dequantize(raw, GGMLQuantizationType[kind])
    assert ours.dtype == np.float32 and ours.shape == x.shape
    assert np.array_equal(ours, theirs)
    step = np.abs(x).max() / (7 if kind == "Q8_0" else 1)      # erro bem menor que o alcance
    assert np.abs(ours - x).max() < step


def test_q4_1_nibble_order_low_bits_first():
    # um bloco à mão: d = 1, m = 0,5, byte j = (alto j+16 → 15 − j, baixo j → j)
    d, m = np.float16(1.0).tobytes(), np.float16(0.5).tobytes()
    packed = bytes(((15 - j) << 4) | j for j in range(16))
    raw = np.frombuffer(d + m + packed, dtype=np.uint8)
    w = gb.dequantize_q4_1(raw, (1, 32))[0]
    assert w[:16].tolist() == [j + 0.5 for j in range(16)]
    assert w[16:].tolist() == [15 - j + 0.5 for j in range(16)]


def test_bad_sizes_and_heads_get_clear_errors():
    with pytest.raises(ValueError, match="bytes não formam"):
        gb.dequantize_q8_0(np.zeros(33, np.uint8), (1, 32))
    with pytest.raises(ValueError, match="cabeças"):
        gb.unpermute_qk(np.zeros((10, 4)), 3)


def test_unpermute_inverts_the_llama_cpp_permutation():
    w = np.arange(24 * 2).reshape(24, 2)
    n_heads = 3
    # a permutação do conversor do llama.cpp (intercala as metades de cada cabeça)
    permuted = w.reshape(n_heads, 2, 24 // n_heads // 2, 2).swapaxes(1, 2).reshape(w.shape)
    assert not np.array_equal(permuted, w)
    assert np.array_equal(gb.unpermute_qk(permuted, n_heads), w)


def test_course_gguf_gives_the_weights_transformers_loaded(decoder):
    from gguf import GGUFReader

    from lncc_llm.models import decoder_gguf_path

    model, _ = decoder
    tensors = {t.name: t for t in GGUFReader(decoder_gguf_path()).tensors}
    layer = model.model.layers[3]
    cases = {"token_embd.weight": (model.model.embed_tokens.weight, None),
             "blk.3.ffn_gate.weight": (layer.mlp.gate_proj.weight, None),
             "blk.3.attn_q.weight": (layer.self_attn.q_proj.weight, model.config.num_attention_heads),
             "blk.3.attn_k.weight": (layer.self_attn.k_proj.weight, model.config.num_key_value_heads),
             "blk.3.ffn_norm.weight": (layer.post_attention_layernorm.weight, None)}
    for name, (weight, heads) in cases.items():
        ours = gb.dequantize_tensor(tensors[name])
        if heads:
            assert not np.array_equal(ours, weight.detach().numpy())   # sem desfazer a permutação
            ours = gb.unpermute_qk(ours, heads)
        assert np.array_equal(ours, weight.detach().numpy()), name
