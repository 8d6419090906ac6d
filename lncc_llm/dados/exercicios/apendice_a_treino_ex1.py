class SeparateHeadsAttention(nn.Module):
    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, d_model, bias=False)
        self.v = nn.Linear(d_model, d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model)
        self.register_buffer("visible", torch.ones(max_seq_len, max_seq_len, dtype=torch.bool).tril())

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = (m(x).view(b, n, self.n_heads, self.head_dim).transpose(1, 2) for m in (self.q, self.k, self.v))
        scores = (q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)).masked_fill(~self.visible[:n, :n], float("-inf"))
        return self.proj((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))


mine = SeparateHeadsAttention(6, 2, max_seq_len=5)
with torch.no_grad():
    for layer, rows in zip((mine.q, mine.k, mine.v), mha.qkv.weight.split(6)):
        layer.weight.copy_(rows)                       # linhas 0–5: Q; 6–11: K; 12–17: V
    mine.proj.load_state_dict(mha.proj.state_dict())
    check("três camadas separadas = a qkv única", mine(X), mha(X), atol=1e-6)
params_separate, params_single = count_parameters(mine), count_parameters(mha)
print("parâmetros:", params_separate, "(separadas) e", params_single, "(qkv única)")
