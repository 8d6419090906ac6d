"""Testes de lncc_llm.llama: o decodificador escrito do zero contra o LlamaForCausalLM do SmolLM2."""
import pytest
import torch

from lncc_llm import llama as ll
from lncc_llm.gpt import count_parameters
from lncc_llm.llama_block import kv_cache_bytes, rms_norm
from lncc_llm.rope import rope_cos_sin
from lncc_llm.sampling import generate as library_generate
from lncc_llm.sampling import sampling_distribution


@pytest.fixture(scope="module")
def pair(decoder):
    hf, tok = decoder
    ours = ll.LlamaDecoder(ll.LlamaConfig.from_hf(hf.config)).to(next(hf.parameters()).device)
    ll.load_hf_weights(ours, hf)
    return ours.eval(), hf, tok


def _ids(tok, text, device):
    return torch.tensor([tok(text)["input_ids"]], device=device)


def test_config_and_parameter_count(pair):
    ours, hf, _ = pair
    cfg = ours.cfg
    assert (cfg.vocab_size, cfg.d_model, cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_ff) == \
        (49152, 576, 30, 9, 3, 1536)
    assert cfg.head_dim == 64 and cfg.rope_base == 100000.0 and cfg.tie_weights
    assert count_parameters(ours) == count_parameters(hf) == 134_515_008
    assert ours.lm_head.weight is ours.embed.weight


def test_logits_equal_the_library_model(pair):
    ours, hf, tok = pair
    device = next(hf.parameters()).device
    for text in ["O tucano pousou no galho.", "def soma(a, b):\n    return"]:
        ids = _ids(tok, text, device)
        with torch.no_grad():
            a, b = ours(ids), hf(ids).logits
        assert torch.allclose(a, b, atol=1e-3), (a - b).abs().max()
        assert torch.equal(a.argmax(-1), b.argmax(-1))


def test_pieces_equal_the_chapter3_versions():
    pos = torch.arange(7)
    cos, sin = ll.rope_tables(pos, 64, 100000.0)
    ref_cos, ref_sin = rope_cos_sin(pos, 64, base=100000.0, layout="rotate_half")
    assert torch.allclose(cos, ref_cos.float(), atol=1e-6) and torch.allclose(sin, ref_sin.float(), atol=1e-6)
    x = torch.randn(3, 5, 8, generator=torch.Generator().manual_seed(0))
    norm = ll.RMSNorm(8, eps=1e-5)
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 2, 8))
        assert torch.allclose(norm(x), rms_norm(x, norm.weight, 1e-5), atol=1e-6)
    # girar duas vezes por θ = girar por 2θ; rotate_half duas vezes = −identidade
    assert torch.allclose(ll.rotate_half(ll.rotate_half(x)), -x)


def test_cache_gives_the_same_logits_and_grows_by_the_formula(pair):
    ours, hf, tok = pair
    device = next(hf.parameters()).device
    ids = _ids(tok, "The quick brown fox jumps over the lazy dog near the river bank.", device)
    n = ids.shape[1]
    cache = ll.KVCache(ours.cfg.n_layers)
    with torch.no_grad():
        full = ours(ids)
        parts = [ours(ids[:, :4], cache)] + [ours(ids[:, t:t + 1], cache) for t in range(4, n)]
    assert torch.allclose(torch.cat(parts, 1), full, atol=1e-4)
    assert len(cache) == n
    assert cache.keys[0].shape == (1, 3, n, 64)
    assert cache.nbytes() == kv_cache_bytes(30, 3, 64, n, bytes_per_value=4)


def test_causal_mask_future_does_not_change_the_past(pair):
    ours, hf, tok = pair
    device = next(hf.parameters()).device
    ids = _ids(tok, "Um dois três quatro cinco", device)
    other = ids.clone()
    other[0, -1] = (other[0, -1] + 7) % ours.cfg.vocab_size
    with torch.no_grad():
        a, b = ours(ids), ours(other)
    assert torch.equal(a[:, :-1], b[:, :-1])
    assert not torch.allclose(a[:, -1], b[:, -1])


def _loop(model, ids, steps, use_cache, pick):
    cache = ll.KVCache(model.cfg.n_layers) if use_cache else None
    seq, new, step_input = ids, [], ids
    with torch.no_grad():
        for _ in range(steps):
            logits = model(step_input if use_cache else seq, cache)[0, -1]
            token = pick(logits)
            new.append(token)
            seq = torch.cat([seq, torch.tensor([[token]], device=seq.device)], 1)
            step_input = seq[:, -1:]
    return new


def test_generation_with_cache_equals_without_and_the_library(pair):
    ours, hf, tok = pair
    device = next(hf.parameters()).device
    prompt = "The capital of France is"
    ids = _ids(tok, prompt, device)
    greedy = lambda z: int(z.argmax())  # noqa: E731
    with_cache = _loop(ours, ids, 12, True, greedy)
    assert with_cache == _loop(ours, ids, 12, False, greedy)
    ref = library_generate(hf, tok, prompt, max_new_tokens=12, greedy=True, stop_at_eos=False)
    assert with_cache == ref.new_ids

    gen = torch.Generator().manual_seed(3)
    sample = lambda z: int(torch.multinomial(  # noqa: E731
        sampling_distribution(z.float().cpu(), 0.8, None, 0.9), 1, generator=gen))
    sampled = _loop(ours, ids, 12, True, sample)
    ref = library_generate(hf, tok, prompt, max_new_tokens=12, temperature=0.8, top_p=0.9, seed=3,
                           stop_at_eos=False)
    assert sampled == ref.new_ids


def test_bad_inputs():
    with pytest.raises(ValueError, match="múltiplo"):
        ll.LlamaConfig(vocab_size=10, d_model=10, n_layers=1, n_heads=3, n_kv_heads=1, d_ff=8)
    model = ll.LlamaDecoder(ll.LlamaConfig(vocab_size=11, d_model=8, n_layers=1, n_heads=2,
                                           n_kv_heads=1, d_ff=16))
    with pytest.raises(ValueError, match=r"ids\[None\]"):
        model(torch.tensor([1, 2, 3]))
    assert ll.hf_name("blocks.3.mlp_norm.weight") == "model.layers.3.post_attention_layernorm.weight"
    assert ll.hf_name("norm.weight") == "model.norm.weight"
    assert ll.hf_name("blocks.0.attn.q_proj.weight") == "model.layers.0.self_attn.q_proj.weight"


def test_future_mask_with_a_past_is_the_triangle_shifted_by_the_cache():
    """A query nova i (posição absoluta P + i) vê as keys j ≤ P + i: sem passado, o triângulo de sempre;
    um token novo vê tudo; a regra posição a posição em vários (n, P)."""
    assert torch.equal(ll.future_mask(4, 0), torch.ones(4, 4, dtype=torch.bool).triu(1))
    assert not ll.future_mask(1, 7).any() and ll.future_mask(1, 7).shape == (1, 8)
    for n_new, n_past in [(3, 5), (2, 2), (5, 1)]:
        mask = ll.future_mask(n_new, n_past)
        assert mask.dtype == torch.bool and mask.shape == (n_new, n_past + n_new)
        for i in range(n_new):
            assert mask[i].tolist() == [j > n_past + i for j in range(n_past + n_new)]
