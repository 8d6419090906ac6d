def fit_rank1(target, steps=3000):
    """Desce o gradiente num adaptador de posto 1, B (m × 1) e A (1 × n), até BA ≈ target (m × n, float64).
    Devolve (B, A, gaps): as duas matrizes no fim e a lista de ‖BA − target‖² de cada passo."""
    m, n = target.shape
    gen = torch.Generator().manual_seed(0)
    A_fit = (0.1 * torch.randn(1, n, generator=gen, dtype=torch.float64)).requires_grad_(True)
    B_fit = torch.zeros(m, 1, dtype=torch.float64, requires_grad=True)    # B começa em zero, como no LoRA
    optimizer = torch.optim.Adam([A_fit, B_fit], lr=0.01)
    gaps = []
    for _ in range(steps):
        optimizer.zero_grad()
        gap = ((B_fit @ A_fit - target) ** 2).sum()
        gaps.append(gap.item())
        gap.backward()
        optimizer.step()
    return B_fit.detach(), A_fit.detach(), gaps


target = torch.tensor([[0.05, 0.02], [-0.03, 0.04], [0.01, -0.06]], dtype=torch.float64)
target_rank1 = torch.outer(torch.tensor([0.05, -0.02, 0.03], dtype=torch.float64),
                           torch.tensor([1.0, 0.5], dtype=torch.float64))
for t in (target, target_rank1):
    B, A, gaps = fit_rank1(t)
    sv = torch.linalg.svdvals(t)
    print(f"posto {torch.linalg.matrix_rank(t).item()}: ‖target‖² = {gaps[0]:.6f} → o posto 1 para em "
          f"{gaps[-1]:.6f} | σ₂² = {sv[1].item() ** 2:.6f}")
    check(f"posto {torch.linalg.matrix_rank(t).item()}: a descida para em σ₂²", ((B @ A - t) ** 2).sum().item(),
          sv[1].item() ** 2, atol=1e-6)
