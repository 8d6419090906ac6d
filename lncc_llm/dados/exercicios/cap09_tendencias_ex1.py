from gguf import GGMLQuantizationType, quants


def dequantize_q4_0(raw, shape):
    blocks = np.ascontiguousarray(raw).view(np.uint8).reshape(-1, 18)
    d = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    packed = blocks[:, 2:]
    q = np.concatenate([packed & 0x0F, packed >> 4], axis=1).astype(np.float32)
    return (d * (q - 8)).reshape(shape)


bits_q4_0 = 8 * 18 / 32          # 18 bytes por bloco de 32 pesos
rng = np.random.default_rng(0)
weights = rng.standard_normal((4, 64)).astype(np.float32)
positive = np.abs(weights)
for name, w in (("pesos ~ N(0, 1)", weights), ("pesos todos positivos", positive)):
    raw0 = quants.quantize(w, GGMLQuantizationType.Q4_0)
    mine = dequantize_q4_0(raw0, w.shape)
    check(f"Q4_0 nosso = gguf-py ({name})",
          bool(np.array_equal(mine, quants.dequantize(raw0, GGMLQuantizationType.Q4_0))))
    q41 = gguf_blocks.dequantize_q4_1(quants.quantize(w, GGMLQuantizationType.Q4_1), w.shape)
    print(f"  erro médio |Δ|: Q4_0 {np.abs(mine - w).mean():.3f} | Q4_1 {np.abs(q41 - w).mean():.3f}")
print(f"Q4_0: {bits_q4_0} bits por peso")
