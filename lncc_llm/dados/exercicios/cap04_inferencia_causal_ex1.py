def my_min_p(logits, min_p):
    probs = torch.softmax(logits, dim=-1)                       # o limiar é sobre probabilidades
    threshold = min_p * probs.max()                             # relativo ao token mais provável
    return logits.masked_fill(probs < threshold, float("-inf"))


cut = my_min_p(z, 0.1)
print(f"min-p 0,1 no prompt da seção 4.8: {int(torch.isfinite(cut).sum())} candidatos")
