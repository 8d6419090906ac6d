import math

a, b = torch.topk(z.double(), 2).indices.tolist()               # ' can' e ' take'
tau_ratio_2 = (z[a] - z[b]).item() / math.log(2)                # exp(Δ/τ) = 2  =>  τ = Δ / ln 2


def nucleus_size(logits, p, tau):
    probs = torch.softmax(logits.double() / tau, dim=-1)
    cumulative = probs.sort(descending=True).values.cumsum(0)
    return int((cumulative < p).sum()) + 1                      # o token que cruza p entra


print(f"τ = {tau_ratio_2:.3f}; núcleo de p = 0,6: {nucleus_size(z, 0.6, 1.0)} tokens com τ = 1, "
      f"{nucleus_size(z, 0.6, 0.5)} com τ = 0,5")
