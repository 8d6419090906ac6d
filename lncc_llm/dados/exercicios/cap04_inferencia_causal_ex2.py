import math

a, b = torch.topk(z.double(), 2).indices.tolist()               # ' can' e ' take'
tau_ratio_2 = (z[a] - z[b]).item() / math.log(2)                # exp(Δ/τ) = 2  =>  τ = Δ / ln 2

p_half = torch.softmax(z.double() / 0.5, dim=-1)                # τ = 0,5
cumulative = p_half.sort(descending=True).values.cumsum(0)
nucleus_size = int((cumulative < 0.6).sum()) + 1                # o token que cruza 0,6 entra
print(f"τ = {tau_ratio_2:.3f}; núcleo de p = 0,6 com τ = 0,5: {nucleus_size} tokens")
