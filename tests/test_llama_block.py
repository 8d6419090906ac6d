"""Testes de lncc_llm.llama_block: RMSNorm, SwiGLU, GQA e o KV cache, contra uma camada real do SmolLM2."""
import pytest
import torch

from lncc_llm import llama_block as lb


def _layer_inputs(model, tok, layer_idx=4):
    """Entrada e saída da norma, da FFN e do bloco de atenção de uma camada, capturadas com hooks."""
    layer = model.model.layers[layer_idx]
    seen = {}

    def keep(name):
        def hook(module, args, kwargs, output):
            seen[name] = (args[0] if args else kwargs["hidden_states"], output)
        return hook

    hooks = [layer.input_layernorm.register_forward_hook(keep("norm"), with_kwargs=True),
             layer.mlp.register_forward_hook(keep("mlp"), with_kwargs=True)]
    with torch.no_grad():
        model(**tok("The teddy bear reads a book about grouped-query attention.", return_tensors="pt"))
    for h in hooks:
        h.remove()
    return layer, seen


def test_rms_norm_is_the_model_norm_and_not_a_layer_norm(decoder):
    model, tok = decoder
    layer, seen = _layer_inputs(model, tok)
    x, out = seen["norm"]
    eps = model.config.rms_norm_eps
    ours = lb.rms_norm(x, layer.input_layernorm.weight, eps)
    assert torch.allclose(ours, out, atol=1e-6)
    # a LayerNorm subtrai a média: com um deslocamento constante, as duas divergem
    shifted = x + 3.0
    ln = torch.nn.functional.layer_norm(shifted, (x.shape[-1],), layer.input_layernorm.weight, None, eps)
    assert not torch.allclose(lb.rms_norm(shifted, layer.input_layernorm.weight, eps), ln, atol=1e-2)
    # invariante: a raiz da média dos quadrados sai 1 com ganho 1
    unit = lb.rms_norm(torch.randn(4, 8) * 7, torch.ones(8), eps=0.0)
    assert torch.allclose(unit.pow(2).mean(-1), torch.ones(4), atol=1e-5)
    with pytest.raises(ValueError, match="ganho"):
        lb.rms_norm(x, torch.ones(3))
    # um ganho (d, d) para d = 8 não pode virar um tensor (8, 8) para um token só
    with pytest.raises(ValueError, match=r"forma \(d,\)"):
        lb.rms_norm(torch.randn(8), torch.ones(8, 8))


def test_swiglu_is_the_model_mlp(decoder):
    model, tok = decoder
    layer, seen = _layer_inputs(model, tok)
    x, out = seen["mlp"]
    mlp = layer.mlp
    ours = lb.swiglu(x, mlp.gate_proj.weight, mlp.up_proj.weight, mlp.down_proj.weight)
    assert torch.allclose(ours, out, atol=1e-5)
    # sem a porta (só up e down), a saída é outra: a porta importa
    no_gate = (x @ mlp.up_proj.weight.T) @ mlp.down_proj.weight.T
    assert not torch.allclose(no_gate, out, atol=1e-2)
    with pytest.raises(ValueError, match="Formas"):
        lb.swiglu(x, mlp.gate_proj.weight, mlp.up_proj.weight, mlp.gate_proj.weight)


def test_repeat_kv_matches_transformers_and_groups_heads_in_order():
    from transformers.models.llama.modeling_llama import repeat_kv as hf_repeat_kv

    kv = torch.randn(2, 3, 5, 4)
    ours = lb.repeat_kv(kv, 3)
    assert torch.equal(ours, hf_repeat_kv(kv, 3))
    assert ours.shape == (2, 9, 5, 4)
    assert torch.equal(ours[:, 3], kv[:, 1]) and torch.equal(ours[:, 5], kv[:, 1])  # 3, 4, 5 ← 1
    with pytest.raises(ValueError, match="n_rep"):
        lb.repeat_kv(kv, 0)


def test_kv_cache_bytes_known_numbers(decoder):
    model, _ = decoder
    cfg = model.config
    gqa = lb.kv_cache_bytes(cfg.num_hidden_layers, cfg.num_key_value_heads, cfg.head_dim, 8192)
    mha = lb.kv_cache_bytes(cfg.num_hidden_layers, cfg.num_attention_heads, cfg.head_dim, 8192)
    assert gqa == 2 * 30 * 3 * 64 * 8192 * 2 == 188_743_680        # 180 MiB em bf16
    assert mha == 3 * gqa
    # o cache real do transformers, depois de uma passagem de 7 tokens, tem exatamente essa conta (fp32)
    ids = torch.arange(7)[None] + 100
    with torch.no_grad():
        cache = model(input_ids=ids, use_cache=True).past_key_values
    real = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    assert real == lb.kv_cache_bytes(cfg.num_hidden_layers, cfg.num_key_value_heads, cfg.head_dim, 7,
                                     bytes_per_value=4)
    with pytest.raises(ValueError, match="inteiros"):
        lb.kv_cache_bytes(30, 3, 64, 0)
