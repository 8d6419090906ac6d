sizes = {"medium": (1024, 16, 24), "large": (1280, 20, 36), "XL": (1600, 25, 48)}
counts_untied, counts_tied, mib_untied = {}, {}, {}
print(f"{'':<7} {'sem amarrar':>13} {'amarrado':>13} {'float32 (sem amarrar)':>22}   amarrado + viés QKV = transformers")
for name, (d, heads, layers) in sizes.items():
    cfg = GPT_CONFIG_124M.replace(d_model=d, n_heads=heads, n_layers=layers)
    with torch.device("meta"):
        untied = count_parameters(GPTModel(cfg))
        tied = count_parameters(GPTModel(cfg.replace(tie_weights=True)))
        hf = count_parameters(GPT2LMHeadModel(GPT2Config(n_embd=d, n_head=heads, n_layer=layers)))
    counts_untied[name], counts_tied[name] = untied, tied
    mib_untied[name] = untied * 4 / 2**20                # 4 bytes por parâmetro; 1 MiB = 2**20 bytes
    matches = hf == tied + layers * 3 * d
    print(f"{name:<7} {fmt_int(untied):>13} {fmt_int(tied):>13} {mib_untied[name]:>18.1f} MiB   "
          f"{'✓' if matches else '✗'}")
    assert matches   # a contagem amarrada + 3d por camada = a do GPT2LMHeadModel
with torch.device("meta"):
    small_untied = count_parameters(GPTModel(GPT_CONFIG_124M))     # o pequeno sem amarração (seção A.8)
share = {"pequeno": 50257 * 768 / small_untied, "XL": 50257 * 1600 / counts_untied["XL"]}
print("a parte que a amarração economiza:", ", ".join(f"{k} {v:.0%}" for k, v in share.items()))
