prediction = "menos"        # τ = 0,5 concentra a massa nos primeiros tokens: menos tokens somam 0,6


def nucleus_size(logits, p, tau):
    probs = torch.softmax(logits.double() / tau, dim=-1)
    cumulative = probs.sort(descending=True).values.cumsum(0)
    return int((cumulative < p).sum()) + 1                      # o token que cruza p entra


print(f"núcleo de p = 0,6: {nucleus_size(z, 0.6, 1.0)} tokens com τ = 1, {nucleus_size(z, 0.6, 0.5)} com τ = 0,5")
