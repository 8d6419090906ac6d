mix_head = mix["hidden"] // mix["heads"]
mix_gqa = kv_cache_bytes(mix["layers"], mix["kv_heads"], mix_head, 32768, bytes_per_value=2)
mix_mha = kv_cache_bytes(mix["layers"], mix["heads"], mix_head, 32768, bytes_per_value=2)
bytes_gqa = mix_gqa
gib_gqa, gib_mha = mix_gqa / 2**30, mix_mha / 2**30
print(f"d_cabeça = {mix_head}")
print(f"GQA, 8 cabeças de K/V   : {gib_gqa:5.1f} GiB")
print(f"multi-cabeça, 32 cabeças: {gib_mha:5.1f} GiB  ({mix_mha // mix_gqa}× mais)")
check("2 · 32 · 8 · 128 · 32 768 · 2 bytes = 4 GiB", mix_gqa, 4 * 2**30)
weights_gib = published["total"] * 2 / 2**30                 # os 46,7 B de pesos em bf16
print(f"pesos do Mixtral em bf16: {weights_gib:.0f} GiB, ou {weights_gib / gib_mha:.1f} sequências de 32 768 "
      "tokens com multi-cabeça")
