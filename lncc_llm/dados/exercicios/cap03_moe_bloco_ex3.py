moe_top2 = MoELayer(d_model, d_ff, n_experts, k=2, generator=torch.Generator().manual_seed(1)).double()
with torch.no_grad():
    _, routing_top2 = moe_top2(X)
gates_top2 = routing_top2.gates                     # (T, 2): as portas de cada token
counts_top2 = moe_parameter_counts(moe_top2)
ratio = counts_top2["especialistas_total"] / counts_top2["especialistas_ativos"]

print("soma dos gates por token:", rounded(routing_top2.gates.sum(-1), 4))
print(f"carga: {routing_top2.load.tolist()}, soma {routing_top2.load.sum().item()} (2T = {2 * T})")
print(f"especialistas: {counts_top2['especialistas_total']} no total, {counts_top2['especialistas_ativos']} ativos; "
      f"ativos com o roteador: {counts_top2['ativos']}")
print(f"total / ativos nos especialistas: {ratio:.0f} (E/k = {n_experts}/2)")
assert torch.allclose(routing_top2.gates.sum(-1), torch.ones(T, dtype=torch.float64))
assert routing_top2.load.sum().item() == 2 * T
assert (counts_top2["especialistas_total"], counts_top2["especialistas_ativos"], counts_top2["ativos"]) == (592, 296, 312)
assert ratio == n_experts / 2 == 2
