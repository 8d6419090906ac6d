def my_bytes_moved(layer):
    """Os bytes de uma chamada de `layer` (uma bnb.nn.Linear4bit, nf4 ou fp4 simples): "quantizado" (índices
    de 4 bits e absmax float32, que a dequantize_4bit lê) e "copia" (a matriz float32 que ela escreve)."""
    n = layer.in_features * layer.out_features
    indices = n // 2                                   # 4 bits: dois índices por byte
    absmax = 4 * (n // 64)                             # um float32 por bloco de 64 pesos
    return {"quantizado": indices + absmax, "copia": 4 * n}


q_proj = models["nf4"].model.layers[0].self_attn.q_proj
print(f"q_proj da camada 0: {my_bytes_moved(q_proj)}")
check("índices de 4 bits: o tensor uint8 da camada tem n/2 bytes",
      q_proj.weight.data.numel(), q_proj.in_features * q_proj.out_features // 2)
