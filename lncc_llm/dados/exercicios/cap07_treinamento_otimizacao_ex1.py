def my_linear_ce_grad(W, x, y):
    """∇W da entropia cruzada de z = W x (seção 7.4.5): x (k,) com y inteiro, ou um lote x (n, k) com y (n,),
    e então a média dos gradientes, como no F.cross_entropy. Devolve uma matriz do formato de W."""
    X = x[None] if x.ndim == 1 else x                           # um exemplo vira um lote de 1
    Y = torch.as_tensor([y] if x.ndim == 1 else y)
    P = torch.softmax(X @ W.T, dim=-1)                           # (n, d): uma distribuição por exemplo
    E = F.one_hot(Y, W.shape[0]).to(W.dtype)                     # e_y de cada exemplo
    return (P - E).T @ X / len(Y)                                # média dos produtos externos (p − e_y) xᵀ


print("∇W no exemplo do texto-base:")
for row in rounded(my_linear_ce_grad(W, x, y), 4):
    print("   ", row)
