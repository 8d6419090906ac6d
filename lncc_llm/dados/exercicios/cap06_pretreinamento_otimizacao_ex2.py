def my_double_quant(absmax, code):
    offset = absmax.mean()                                       # um número para a camada inteira
    centered = absmax - offset
    out = torch.empty_like(centered)
    for start in range(0, len(centered), 256):                  # o último bloco pode ser menor
        block = centered[start:start + 256]
        scale = block.abs().max()                               # o absmax do absmax: 1 float32 a cada 256
        index = ((block / scale)[:, None] - code).abs().argmin(dim=-1)   # 8 bits por absmax
        out[start:start + 256] = code[index] * scale
    return out + offset


double, _ = load_decoder_quantized("nf4", double_quant=True)
single_state = models["nf4"].model.layers[0].self_attn.q_proj.weight.quant_state
double_state = double.model.layers[0].self_attn.q_proj.weight.quant_state
rebuilt = my_double_quant(single_state.absmax, bnb.functional.create_dynamic_map())
from_bnb = bnb.functional.dequantize_blockwise(double_state.absmax, double_state.state2) + double_state.offset
relative = (rebuilt - single_state.absmax).abs() / single_state.absmax
print(f"q_proj da camada 0: {len(rebuilt)} absmax; erro relativo da ida e volta: médio {relative.mean():.2%}, "
      f"maior {relative.max():.2%}")
print(f"iguais aos do bitsandbytes: {int((rebuilt - from_bnb).abs().le(1e-6).sum())} de {len(rebuilt)}")

single_mib, double_mib = mib(model_bytes(models["nf4"])), mib(model_bytes(double))
absmax_mib = mib(sum(m.weight.quant_state.absmax.numel() * m.weight.quant_state.absmax.element_size()
                     for m in models["nf4"].modules() if isinstance(m, bnb.nn.Linear4bit)))
saved = single_mib - double_mib
print(f"nf4: {single_mib:.1f} MiB | nf4 + quantização dupla: {double_mib:.1f} MiB | economia {saved:.1f} MiB "
      f"dos {absmax_mib:.1f} MiB de absmax ({saved / absmax_mib:.0%})")
d = compare_to_reference(double, stored_reference, passages)
single = stats["nf4"]
print(f"nf4 simples:          top-1 igual {single.top1_agreement:.3f} ± {single.top1_se:.3f} | "
      f"KL {single.mean_kl:.4f} ± {single.kl_se:.4f}")
print(f"com quantização dupla: top-1 igual {d.top1_agreement:.3f} ± {d.top1_se:.3f} | KL {d.mean_kl:.4f} ± {d.kl_se:.4f}")
