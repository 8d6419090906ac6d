class MySeparateHeadsAttention(nn.Module):
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
        q, k, v = (m(x).view(b, n, self.n_heads, self.head_dim).transpose(1, 2)   # (b, H, n, d_h)
                   for m in (self.q, self.k, self.v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~self.visible[:n, :n], float("-inf"))          # o futuro: −∞
        heads = scores.softmax(dim=-1) @ v                                          # (b, H, n, d_h)
        return self.proj(heads.transpose(1, 2).reshape(b, n, d))                   # junta as cabeças
