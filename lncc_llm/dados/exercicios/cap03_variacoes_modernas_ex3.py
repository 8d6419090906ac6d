def logit_curve(x, positions, base=10000.0):
    """O logit entre `x` (d,) na posição 0, como query, e `x` girado pela RoPE em cada posição de
    `positions` (P,), como key. Devolve um tensor (P,) float64."""
    keys = rope_rotate(x[None].expand(len(positions), -1), positions, base=base)   # a key em cada p
    return (x[None] * keys).sum(-1) / math.sqrt(x.shape[-1])                       # a query fica em 0


distances_ex = torch.arange(61)
curve_d4 = logit_curve(X[0], distances_ex)                                         # teddy = [1, 0, 1, 0]
formula = (torch.cos(distances_ex.double()) + torch.cos(0.01 * distances_ex.double())) / 2
check("d = 4: logit = (cos p + cos 0,01p)/2 para p = 0..60", curve_d4, formula, atol=1e-12)
print("d = 4, perto de 2π, 4π, 6π, 8π:", {p: round(curve_d4[p].item(), 3) for p in (6, 13, 19, 25)})

x64 = torch.randn(64, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
curve_ex64 = logit_curve(x64, distances_ex, base=100000.0)
curve_ex64 = curve_ex64 / curve_ex64[0]                      # normalizado: 1 na distância 0
tail = curve_ex64[10:60]
print(f"d = 64: p = 10 → {curve_ex64[10]:.2f}; entre p = 10 e 59 fica entre {tail.min():.2f} e {tail.max():.2f}; "
      f"p = 60 → {curve_ex64[60]:.2f}")
assert all(curve_d4[p] > 0.94 for p in (6, 13, 19, 25))

plt.figure(figsize=(7, 3.8))
plt.plot(distances_ex, curve_d4, label="d = 4, base 10000")
plt.plot(distances_ex, curve_ex64, label="d = 64, base 100000 (normalizado)")
plt.xlabel("distância p"); plt.ylabel("logit"); plt.legend()
plt.show()
