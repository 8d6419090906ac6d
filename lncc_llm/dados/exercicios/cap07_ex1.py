def fit_rank1(target, steps=3000):
    """Desce o gradiente em B (3 × 1) e A (1 × 2), como na seção 7.4.8, e devolve ‖BA − alvo‖²."""
    gen = torch.Generator().manual_seed(0)
    A_fit = (0.1 * torch.randn(1, 2, generator=gen, dtype=torch.float64)).requires_grad_(True)
    B_fit = torch.zeros(3, 1, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([A_fit, B_fit], lr=0.01)
    for _ in range(steps):
        optimizer.zero_grad()
        gap = ((B_fit @ A_fit - target) ** 2).sum()
        gap.backward()
        optimizer.step()
    return gap.item()


target = torch.tensor([[0.05, 0.02], [-0.03, 0.04], [0.01, -0.06]], dtype=torch.float64)
gap = fit_rank1(target)
target_rank1 = torch.outer(torch.tensor([0.05, -0.02, 0.03], dtype=torch.float64),
                           torch.tensor([1.0, 0.5], dtype=torch.float64))
gap_rank1 = fit_rank1(target_rank1)
for t, g in ((target, gap), (target_rank1, gap_rank1)):
    sv = torch.linalg.svdvals(t)
    print(f"posto {torch.linalg.matrix_rank(t).item()}: posto 1 para em {g:.6f} | σ₂² = {sv[1].item() ** 2:.6f}")
check("alvo de posto 2: o posto 1 para em σ₂²", gap, torch.linalg.svdvals(target)[1].item() ** 2, atol=1e-6)
check("alvo de posto 1: o piso vai a zero", gap_rank1, 0.0, atol=1e-6)
