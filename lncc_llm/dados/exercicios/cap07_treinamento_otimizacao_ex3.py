def quantize_uniform(values, c, levels=7):
    step = c / levels
    return step * torch.round(values.clamp(-c, c) / step)

ranges = (0.15, 0.20, 0.30)
mean_errors = []
for c_range in ranges:
    err = (quantize_uniform(W_new, c_range) - W_new).abs()
    mean_errors.append(err.mean().item())
    print(f"c = {c_range:.2f}: média {err.mean().item():.4f} | |ε| por peso = {rounded(err.flatten(), 4)}")
best_c = ranges[mean_errors.index(min(mean_errors))]
outside = torch.tensor(0.25, dtype=torch.float64)
q_outside = quantize_uniform(outside, 0.20).item()
print(f"a faixa que erra menos em média: c = {best_c:.2f}")
print(f"peso 0.25 com c = 0.20: Q = {q_outside:.4f} (erro {abs(q_outside - 0.25):.4f})")
