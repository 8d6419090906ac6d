"""Testes de lncc_llm.quantization: bytes contados à mão, estatísticas contra fórmulas, erros em pt-BR."""
import math

import pytest
import torch
import torch.nn.functional as F

from lncc_llm import quantization as q

# Um Llama minúsculo com embedding amarrado: V = 96, d = 64, 2 camadas, FFN 128, 4 cabeças e 2 de K/V.
V, D, FFN, LAYERS, KV = 96, 64, 128, 2, 32
LINEAR_PER_LAYER = D * D + 2 * D * KV + D * D + 3 * D * FFN      # q, k, v, o + gate, up, down
NORMS = (2 * LAYERS + 1) * D
ROPE_BUFFERS = 2 * (D // 4 // 2)                                # inv_freq e original_inv_freq (head_dim 16)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    from transformers import LlamaConfig, LlamaForCausalLM

    q.load_decoder_quantized  # noqa: B018 (importa o módulo antes do transformers)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=V, hidden_size=D, intermediate_size=FFN, num_hidden_layers=LAYERS,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                      max_position_embeddings=64)
    path = tmp_path_factory.mktemp("tiny_llama")
    LlamaForCausalLM(cfg).save_pretrained(path)
    return path


def _load(path, kind):
    from transformers import AutoModelForCausalLM

    if kind == "fp32":
        return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    model = AutoModelForCausalLM.from_pretrained(
        path, dtype=torch.float32, quantization_config=q.quantization_config(kind), device_map="cpu")
    q.use_fused_cpu_kernel(model, False)
    return model.eval()


def test_fp32_bytes_count_the_tied_embedding_once(tiny_dir):
    model = _load(tiny_dir, "fp32")
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    hand = 4 * (V * D + LAYERS * LINEAR_PER_LAYER + NORMS + ROPE_BUFFERS)
    assert q.model_bytes(model) == hand
    assert model.get_memory_footprint() == hand


def test_nf4_bytes_include_the_absmax_outside_parameters(tiny_dir):
    model = _load(tiny_dir, "nf4")
    linear = LAYERS * LINEAR_PER_LAYER
    n_linear_modules = 7 * LAYERS
    hand = (4 * V * D + 4 * (NORMS + ROPE_BUFFERS)          # embedding amarrado e normas ficam em fp32
            + linear // 2                  # dois pesos de 4 bits por byte
            + 4 * (linear // 64)           # um absmax fp32 por bloco de 64 pesos
            + 4 * 16 * n_linear_modules)   # a tabela de 16 valores do NF4, uma por camada linear
    assert q.model_bytes(model) == hand
    # o get_memory_footprint do transformers não vê o quant_state
    assert hand - model.get_memory_footprint() == 4 * (linear // 64) + 4 * 16 * n_linear_modules


def test_int8_bytes_include_the_row_scales(tiny_dir):
    model = _load(tiny_dir, "int8")
    rows = LAYERS * (D + 2 * KV + D + 2 * FFN + D)          # linhas de saída das 7 camadas lineares
    hand = 4 * V * D + 4 * (NORMS + ROPE_BUFFERS) + LAYERS * LINEAR_PER_LAYER + 4 * rows
    assert q.model_bytes(model) == hand
    with torch.no_grad():
        model(input_ids=torch.tensor([[1, 2, 3]]))       # a 1ª passada muda onde a escala fica guardada
    assert q.model_bytes(model) == hand


def test_torchao_bytes_see_inside_the_tensor_subclass(tiny_dir):
    model = _load(tiny_dir, "int8-torchao")
    got = q.model_bytes(model)
    int8_weights = LAYERS * LINEAR_PER_LAYER
    # pesos int8 + uma escala por linha (fp32); o footprint do transformers conta 4 bytes por peso
    assert 4 * V * D + 4 * (NORMS + ROPE_BUFFERS) + int8_weights < got < 4 * V * D + 4 * (NORMS + ROPE_BUFFERS) + int8_weights * 1.1
    assert model.get_memory_footprint() > got * 1.5


def test_compare_to_itself_is_perfect_and_to_other_model_matches_the_formulas(tiny_dir):
    ref = _load(tiny_dir, "fp32")
    ids = torch.arange(3, 40) % V
    same = q.compare_to_reference(ref, ref, ids)
    assert same.top1_agreement == 1.0 and same.max_abs_dlogit == 0.0 and same.mean_kl == 0.0
    assert same.perplexity_model == same.perplexity_reference

    other = _load(tiny_dir, "nf4")
    got = q.compare_to_reference(other, ref, ids)
    with torch.no_grad():
        lr = ref(input_ids=ids[None]).logits[0].double()
        lo = other(input_ids=ids[None]).logits[0].double()
    kl = F.kl_div(F.log_softmax(lo, -1), F.log_softmax(lr, -1), log_target=True, reduction="none").sum(-1).mean()
    assert got.mean_kl == pytest.approx(kl.item(), rel=1e-9) and got.mean_kl > 0
    assert got.max_abs_dlogit == pytest.approx((lo - lr).abs().max().item())
    assert got.top1_agreement == pytest.approx((lo.argmax(-1) == lr.argmax(-1)).double().mean().item())
    ce = F.cross_entropy(lr[:-1], ids[1:])
    assert got.perplexity_reference == pytest.approx(math.exp(ce.item()), rel=1e-9)
    assert got.n_positions == len(ids)
    with pytest.raises(ValueError, match="pelo menos 2 tokens"):
        q.compare_to_reference(ref, ref, [5])


def test_training_memory_counts_the_fp32_master_copy_and_fp32_adapters():
    n = 7e9
    full = q.training_memory(n, "full")                    # bf16: pesos 2 + grad. 2 + mestra 4 + Adam 8
    assert full["total"] == n * 16 == 112e9 and full["mestra"] == 4 * n
    fp32 = q.training_memory(n, "full", weight_bytes=4)    # em fp32 os pesos já são a cópia mestra
    assert fp32["mestra"] == 0 and fp32["total"] == n * 16
    lora = q.training_memory(n, "lora", trainable_fraction=0.01)
    # base bf16 congelada; adaptadores fp32 (o peft os põe em fp32), sem cópia mestra
    assert lora["pesos"] == n * 2 + 7e7 * 4 and lora["gradientes"] == 7e7 * 4
    assert lora["mestra"] == 0 and lora["adam"] == 7e7 * 8
    bf16_adapters = q.training_memory(n, "lora", trainable_fraction=0.01, adapter_bytes=2)
    assert bf16_adapters["mestra"] == 7e7 * 4               # adaptadores em bf16 pedem a cópia mestra
    qlora = q.training_memory(n, "qlora", trainable_fraction=0.01)
    assert q.NF4_DOUBLE_QUANT_BYTES == pytest.approx(4.127 / 8, abs=1e-4)   # 4,127 bits por peso (QLoRA)
    assert qlora["total"] == pytest.approx(n * q.NF4_DOUBLE_QUANT_BYTES + 7e7 * 16)
    kept = q.training_memory(n, "qlora", trainable_fraction=0.01, unquantized_params=1e8)
    assert kept["pesos"] - qlora["pesos"] == pytest.approx(1e8 * (2 - q.NF4_DOUBLE_QUANT_BYTES))
    assert qlora["total"] < lora["total"] < full["total"]
    with pytest.raises(ValueError, match="'full', 'lora', 'qlora'"):
        q.training_memory(n, "adapter")
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        q.training_memory(n, "lora", trainable_fraction=0)
    with pytest.raises(ValueError, match="unquantized_params"):
        q.training_memory(n, "qlora", unquantized_params=2 * n)


def test_compare_over_passages_pools_positions_and_reports_standard_errors(tiny_dir):
    ref, other = _load(tiny_dir, "fp32"), _load(tiny_dir, "nf4")
    a, b = (torch.arange(3, 30) % V).tolist(), (torch.arange(40, 61) % V).tolist()
    both = q.compare_to_reference(other, ref, [a, b])
    one, two = q.compare_to_reference(other, ref, a), q.compare_to_reference(other, ref, b)
    assert both.n_passages == 2 and both.n_positions == len(a) + len(b)
    weighted = (one.top1_agreement * len(a) + two.top1_agreement * len(b)) / (len(a) + len(b))
    assert both.top1_agreement == pytest.approx(weighted)
    assert both.mean_kl == pytest.approx((one.mean_kl * len(a) + two.mean_kl * len(b)) / (len(a) + len(b)))
    assert both.max_abs_dlogit == max(one.max_abs_dlogit, two.max_abs_dlogit)
    p = both.top1_agreement
    assert both.top1_se == pytest.approx(math.sqrt(p * (1 - p) / both.n_positions))
    assert both.kl_se > 0
    with pytest.raises(ValueError, match="pelo menos 2 tokens"):
        q.compare_to_reference(ref, ref, [a, [5]])


def test_fused_kernel_switch_turns_off_and_back_on(tiny_dir):
    import bitsandbytes as bnb

    model = _load(tiny_dir, "nf4")
    layers = [m for m in model.modules() if hasattr(m, "support_avx512bf16_for_cpu")]
    assert layers
    q.use_fused_cpu_kernel(model, False)
    assert not any(m.support_avx512bf16_for_cpu for m in layers)
    q.use_fused_cpu_kernel(model, True)        # religar volta ao que a CPU tem (antes ficava desligado)
    assert all(m.support_avx512bf16_for_cpu == bool(bnb.functional.has_avx512bf16()) for m in layers)


def test_transformers_keeps_the_tied_head_out_of_quantization(tiny_dir):
    from transformers.quantizers.base import get_keys_to_not_convert

    ref, nf4 = _load(tiny_dir, "fp32"), _load(tiny_dir, "nf4")
    assert "lm_head" in get_keys_to_not_convert(ref)
    assert type(nf4.lm_head).__name__ == "Linear"
    assert nf4.lm_head.weight.data_ptr() == nf4.model.embed_tokens.weight.data_ptr()   # continua amarrada


def test_unknown_kind_lists_the_valid_ones():
    with pytest.raises(ValueError, match="desconhecido.*'fp32', 'bf16', 'int8', 'nf4', 'fp4', 'int8-torchao'"):
        q.load_decoder_quantized("int3")
    with pytest.raises(ValueError, match="desconhecido"):
        q.quantization_config(None)


def test_missing_package_says_what_to_install(monkeypatch):
    real = q.importlib.util.find_spec
    monkeypatch.setattr(q.importlib.util, "find_spec", lambda name: None if name == "bitsandbytes" else real(name))
    with pytest.raises(q.QuantizationUnavailableError, match="bitsandbytes.*requirements.txt"):
        q.load_decoder_quantized("nf4")
    assert q.quantization_config("bf16") is None       # bf16 só precisa do torch


def test_fp4_is_what_the_default_config_means():
    from transformers import BitsAndBytesConfig

    assert BitsAndBytesConfig(load_in_4bit=True).bnb_4bit_quant_type == "fp4"
    assert q.quantization_config("nf4").bnb_4bit_quant_type == "nf4"
    assert q.quantization_config("nf4").bnb_4bit_compute_dtype == torch.float32


def test_course_decoder_bytes_and_error_ranking(decoder):
    ref, tokenizer = q.load_decoder_quantized("fp32")
    nf4, _ = q.load_decoder_quantized("nf4")
    assert q.load_decoder_quantized("nf4")[0] is nf4                  # cache na sessão
    assert round(q.mib(q.model_bytes(ref)), 1) == 513.1
    assert round(q.mib(q.model_bytes(nf4)), 1) == 165.1              # 158,8 do footprint + 6,3 de absmax
    assert not any(getattr(m, "support_avx512bf16_for_cpu", False) for m in nf4.modules())
    double = q.load_decoder_quantized("nf4", double_quant=True)[0]
    assert double is not nf4 and round(q.mib(q.model_bytes(double)), 1) == 160.6   # absmax em 8 bits
    ids = tokenizer("A capital do Brasil é Brasília, e a língua oficial do país é o português.")["input_ids"]
    kl = {kind: q.compare_to_reference(q.load_decoder_quantized(kind)[0], ref, ids).mean_kl
          for kind in ("int8", "nf4", "fp4")}
    assert 0 < kl["int8"] < kl["nf4"] < kl["fp4"]                     # mais bits, menos erro; NF4 melhor que FP4
