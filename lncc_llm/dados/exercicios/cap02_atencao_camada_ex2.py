X_bs = E_toy[[vocab["bear"], vocab["sleeps"]]]          # Q = K = V = X, como na seção 2.8
A_bs_hand = torch.softmax(X_bs @ X_bs.T / 2**0.5, dim=-1)
Z_bs_hand = A_bs_hand @ X_bs
Z_bs, A_bs = scaled_dot_product_attention(X_bs, X_bs, X_bs)

print("XXᵀ =", rounded(X_bs @ X_bs.T))
print("A   =", rounded(A_bs, 2))
print("Z   =", rounded(Z_bs, 2))
check("XXᵀ de 'bear sleeps' = QKᵀ de 'teddy reads'", X_bs @ X_bs.T, QKt, atol=0)
check("A e Z à mão = scaled_dot_product_attention", [A_bs_hand, Z_bs_hand], [A_bs, Z_bs])
