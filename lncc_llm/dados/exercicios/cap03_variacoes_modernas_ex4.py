lo, hi = 0.05, 2.0                  # H(0,05) ≈ 0 < 0,5 < H(2) ≈ 1,06
for _ in range(60):
    mid = (lo + hi) / 2
    if entropy(torch.softmax(row / mid, dim=-1)) < 0.5:
        lo = mid                    # concentrada demais: τ precisa crescer
    else:
        hi = mid
tau_half = (lo + hi) / 2
p_half = torch.softmax(row / tau_half, dim=-1)
H_half = entropy(p_half).item()
print(f"τ = {tau_half:.4f}  H = {H_half:.4f} nat  p = {rounded(p_half, 4)}")
print(f"escala equivalente 1/τ = {1 / tau_half:.2f}")
check("a escala equivalente fica entre 2 e 4", 2 < 1 / tau_half < 4)
assert abs(H_half - 0.5) < 1e-9
assert 2 < 1 / tau_half < 4 and round(tau_half, 4) == 0.3187 and rounded(p_half, 4) == [0.8215, 0.1711, 0.0074]
