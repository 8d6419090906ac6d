class PostNormBlock(nn.Module):
    """Os pesos de um bloco pré-norm, rearranjados em pós-norm: y = LN(x + F(x))."""

    def __init__(self, pre_norm_block):
        super().__init__()
        self.inner = pre_norm_block

    def forward(self, x):
        b = self.inner
        x = b.attn_norm(x + b.residual_dropout(b.attn(x)))
        return b.ffn_norm(x + b.residual_dropout(b.ffn(x)))


post = PostNormBlock(block).eval()
with torch.no_grad():
    y_post, y_pre = post(x_block), block(x_block)
print("forma:", tuple(y_post.shape), "| maior diferença para a pré-norm:", round((y_post - y_pre).abs().max().item(), 2))
for name, y in [("pós-norm", y_post), ("pré-norm", y_pre)]:
    print(f"{name}, 1º texto: média por token {rounded(y[0].mean(-1), 3)} | desvio por token {rounded(y[0].std(-1, unbiased=False), 3)}")
check("mesma forma, saídas diferentes", y_post.shape == y_pre.shape and not torch.allclose(y_post, y_pre, atol=1e-3))
