def my_lora_forward(x, weight, A, B, alpha, r, bias=None):
    """A saída de uma linear com adaptador LoRA (seção 7.10): a base congelada W (d × k), com o viés, mais o
    desvio B A x (A é r × k, B é d × r) multiplicado por alpha / r. x tem a última dimensão k."""
    frozen = x @ weight.T if bias is None else x @ weight.T + bias   # a base, que não treina
    return frozen + (alpha / r) * (x @ A.T) @ B.T                     # x → r dimensões (A) → d dimensões (B)


h = torch.randn(2, 4, base.config.hidden_size, generator=torch.Generator().manual_seed(1))
W_q = base.model.layers[0].self_attn.q_proj.weight
A0, B0 = torch.randn(8, W_q.shape[1]) * 0.01, torch.zeros(W_q.shape[0], 8)          # B = 0: o início do treino
check("com B = 0, a camada adaptada é a base", my_lora_forward(h, W_q, A0, B0, 16, 8), h @ W_q.T, atol=1e-6)
print("formato da saída:", tuple(my_lora_forward(h, W_q, A0, B0, 16, 8).shape))
