def my_quantize_4bit(w, levels, blocksize=64):
    blocks = w.float().reshape(-1, blocksize)                    # pesos seguidos, um bloco por linha
    absmax = blocks.abs().amax(dim=1, keepdim=True)              # um float32 por bloco
    index = ((blocks / absmax)[..., None] - levels).abs().argmin(dim=-1)   # 4 bits por peso
    return (levels[index] * absmax).reshape(w.shape)


k_proj = reference.model.layers[2].self_attn.k_proj.weight.detach()
fp4_levels = models["fp4"].model.layers[0].self_attn.q_proj.weight.quant_state.code
for name, levels in (("NF4", nf4_levels), ("FP4", fp4_levels)):
    error = (my_quantize_4bit(k_proj, levels) - k_proj).abs().mean() / k_proj.abs().mean()
    print(f"k_proj da camada 2 em {name}: erro médio |w − ŵ| = {error:.1%} do |w| médio")
