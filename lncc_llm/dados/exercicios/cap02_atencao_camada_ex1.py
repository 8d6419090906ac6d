def head_attention(X, query, key, value, h, n_heads):
    d_k = query.weight.shape[0] // n_heads                    # 384 / 12 = 32
    cols = slice(h * d_k, (h + 1) * d_k)                      # as colunas da cabeça h, seguidas
    q = (X @ query.weight.T + query.bias)[:, cols]           # (n, d_k)
    k = (X @ key.weight.T + key.bias)[:, cols]
    return torch.softmax(q @ k.T / d_k**0.5, dim=-1)         # (n, n): cada linha soma 1


sa0 = model.encoder.layer[0].attention.self
with torch.no_grad():
    A_10 = head_attention(outputs.hidden_states[0][0], sa0.query, sa0.key, sa0.value, 10, 12)
print("cabeça 10 da camada 0:", tuple(A_10.shape), "| somas das linhas:", rounded(A_10.sum(-1), 4)[:3], "…")
check("head_attention = outputs.attentions[0] na cabeça 10", A_10, outputs.attentions[0][0, 10], atol=1e-5)
