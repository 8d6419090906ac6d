def my_causal_weights(q, k):
    n = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    future = torch.ones(n, n, dtype=torch.bool).triu(1)        # j > i: o que a query i não vê
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)


g_att = torch.Generator().manual_seed(2)
q_t, k_t = torch.randn(2, 4, 8, generator=g_att), torch.randn(2, 4, 8, generator=g_att)
print("cabeça 0, 4 posições:", rounded(my_causal_weights(q_t, k_t)[0], 3))
