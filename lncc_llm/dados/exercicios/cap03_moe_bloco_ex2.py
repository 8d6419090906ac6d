def switch_balance_loss(probs, indices):
    T, E = probs.shape
    k = indices.shape[-1]
    load = torch.bincount(indices.reshape(-1), minlength=E)   # escolhas por especialista (soma T·k)
    f = load.to(probs.dtype) / (T * k)                          # sem gradiente: vem de contagens
    P = probs.mean(dim=0)                                       # com gradiente
    return E * (f * P).sum()


print(f"nos 3 tokens da lição: {switch_balance_loss(routing.probs, routing.indices).item():.4f}")
check("switch_balance_loss = balance_loss de lncc_llm.moe (3 tokens)",
      switch_balance_loss(routing.probs, routing.indices), balance_loss(routing.probs, routing.indices), atol=1e-12)
