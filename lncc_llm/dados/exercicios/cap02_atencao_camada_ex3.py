gen = torch.Generator().manual_seed(0)
dots, raw_vars, scaled_vars = [], [], []
print(" d_k   var(q·k)   var(q·k / √d_k)")
for d in (2, 32, 512):
    q_s = torch.randn(20000, d, generator=gen)
    k_s = torch.randn(20000, d, generator=gen)
    dots_d = (q_s * k_s).sum(dim=-1)                  # os N produtos q·k, um por par
    dots.append(dots_d)
    raw_var, scaled_var = dots_d.var().item(), (dots_d / d**0.5).var().item()
    raw_vars.append(raw_var)
    scaled_vars.append(scaled_var)
    print(f"{d:>4}  {raw_var:9.1f}  {scaled_var:15.2f}")
    assert abs(raw_var / d - 1) < 0.05 and abs(scaled_var - 1) < 0.05
