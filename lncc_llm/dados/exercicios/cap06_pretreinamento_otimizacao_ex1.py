double, _ = load_decoder_quantized("nf4", double_quant=True)
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
