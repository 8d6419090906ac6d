def switch_moe(x, router_weight, experts):
    probs = torch.softmax(x @ router_weight.T, dim=-1)    # p(x) = softmax(x W_g), sobre os especialistas
    gate, chosen = probs.max(dim=-1)                       # a porta p_e* e o escolhido e* de cada token
    y = torch.zeros_like(x)
    for e, expert in enumerate(experts):
        mask = chosen == e                                 # os tokens que escolheram e
        if mask.any():                                     # um especialista sem tokens nem roda
            y[mask] = gate[mask, None] * expert(x[mask])
    return y


with torch.no_grad():
    y_reader = switch_moe(X, moe.router.weight, list(moe.experts))
check("switch_moe = a MoELayer nos 3 tokens da lição", y_reader, y_moe, atol=1e-12)
