from transformers import LlamaConfig


def kv_cache_bytes(config, n_tokens, bytes_per_number=2):
    kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return 2 * config.num_hidden_layers * kv_heads * head_dim * n_tokens * bytes_per_number


check("kv_cache_bytes(SmolLM2) = o cache real medido na seção 4.14", kv_cache_bytes(dc, n_prompt, 4), real)
seven_b = {"atenção multi-cabeça (32 KV)": LlamaConfig(num_hidden_layers=32, num_attention_heads=32,
                                                        num_key_value_heads=32, hidden_size=4096),
           "GQA (8 KV)": LlamaConfig(num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                                     hidden_size=4096)}
gib_mha, gib_gqa = (kv_cache_bytes(cfg, 8192) / 2**30 for cfg in seven_b.values())
seqs_mha, seqs_gqa = int((24 - 13.5) // gib_mha), int((24 - 13.5) // gib_gqa)
for name, gib, seqs in zip(seven_b, (gib_mha, gib_gqa), (seqs_mha, seqs_gqa)):
    print(f"{name:<30} {gib:.1f} GiB por sequência de 8 192 tokens -> {seqs} sequências em 24 GiB")
