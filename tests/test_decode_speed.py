"""O teto do decode: bytes lidos por token, a largura de banda e o limite de tokens por segundo."""
import pytest
import torch

from lncc_llm.decode_speed import decode_bytes_per_token, decode_limit, read_bandwidth
from lncc_llm.llama_block import kv_cache_bytes


def test_bytes_per_token_of_smollm2_are_the_fp32_weights_plus_the_kv_cache(decoder):
    model, _ = decoder
    n_params = sum(p.numel() for p in model.parameters())
    assert n_params == 134_515_008                                   # os pesos amarrados contam uma vez
    assert decode_bytes_per_token(model, 0) == 4 * n_params          # 513 MiB em fp32
    c = model.config
    for n in (1, 21, 4096):
        cache = kv_cache_bytes(c.num_hidden_layers, c.num_key_value_heads, 64, n, 4)
        assert decode_bytes_per_token(model, n) == 4 * n_params + cache
    assert decode_bytes_per_token(model, 1) - decode_bytes_per_token(model, 0) == 46_080


def test_bytes_per_token_follow_the_dtype_of_the_weights():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
    model = LlamaForCausalLM(config)
    n_params = sum(p.numel() for p in model.parameters())
    assert decode_bytes_per_token(model, 10) == 4 * n_params + 2 * 2 * 2 * 4 * 10 * 4
    half = model.to(torch.bfloat16)
    assert decode_bytes_per_token(half, 10) == 2 * n_params + 2 * 2 * 2 * 4 * 10 * 2


def test_limit_is_bandwidth_over_bytes_and_refuses_nonsense():
    assert decode_limit(49.0, 49_000_000) == pytest.approx(1000.0)
    with pytest.raises(ValueError, match="positivos"):
        decode_limit(0.0, 10)
    with pytest.raises(ValueError, match="positivos"):
        decode_limit(10.0, 0)


def test_bandwidth_is_measured_and_bad_sizes_are_refused():
    gb_s = read_bandwidth(16 * 2**20, repeats=2)
    assert 0.1 < gb_s < 10_000
    with pytest.raises(ValueError, match="4 MiB"):
        read_bandwidth(1024)
    with pytest.raises(ValueError, match="repeats"):
        read_bandwidth(16 * 2**20, repeats=0)


def test_bytes_per_token_refuses_a_model_without_kv_heads():
    from transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=16, n_positions=8))
    with pytest.raises(ValueError, match="num_key_value_heads"):
        decode_bytes_per_token(model, 4)
    with pytest.raises(ValueError, match="n_positions"):
        decode_bytes_per_token(model, -1)


def test_cpu_bf16_support_reads_the_torch_flags():
    from lncc_llm.decode_speed import cpu_bf16_support

    info = cpu_bf16_support()
    assert info["capacidade"] == torch.backends.cpu.get_cpu_capability()
    assert set(info) == {"capacidade", "avx512_bf16", "amx"} and all(isinstance(info[k], bool) for k in ("avx512_bf16", "amx"))


def test_gemv_seconds_times_one_product_and_refuses_nonsense():
    from lncc_llm.decode_speed import gemv_seconds

    w = torch.randn(4096, 512)
    t = gemv_seconds(w, repeats=3)
    assert 0 < t < 1.0
    with pytest.raises(ValueError, match="matriz de pesos"):
        gemv_seconds(torch.randn(8))
    with pytest.raises(ValueError, match="repeats"):
        gemv_seconds(w, repeats=0)


def test_batch_decode_seconds_on_a_tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    from lncc_llm.decode_speed import batch_decode_seconds

    class Tok:
        def __call__(self, text):
            return {"input_ids": [1, 2, 3]}

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2)).eval()
    for b in (1, 4):
        assert 0 < batch_decode_seconds(model, Tok(), "x", b, steps=3) < 1.0
    with pytest.raises(ValueError, match="batch_size"):
        batch_decode_seconds(model, Tok(), "x", 0)
