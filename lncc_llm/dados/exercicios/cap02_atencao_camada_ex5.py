parts = {
    "embeddings de tokens": model.embeddings.word_embeddings.weight.numel(),
    "posição + segmento + LayerNorm": sum(p.numel() for name, p in model.embeddings.named_parameters()
                                         if not name.startswith("word_embeddings")),
    "atenção (6 camadas)": sum(p.numel() for blk in model.encoder.layer for p in blk.attention.parameters()),
    "FFN (6 camadas)": sum(p.numel() for blk in model.encoder.layer
                           for p in [*blk.intermediate.parameters(), *blk.output.parameters()]),
    "pooler": sum(p.numel() for p in model.pooler.parameters()) if model.pooler is not None else 0,
}
for name, count in parts.items():
    print(f"{name:<32} {fmt_int(count):>12}  {count / n_params:6.1%}")
check("as partes somam o total do modelo", sum(parts.values()), n_params)
frac_tok = parts["embeddings de tokens"] / n_params
