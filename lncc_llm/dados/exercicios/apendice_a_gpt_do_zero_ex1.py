def my_layer_norm(x, gamma, beta, eps):
    mu = x.mean(-1, keepdim=True)
    sigma2 = x.var(-1, unbiased=False, keepdim=True)       # populacional: divide por d
    return gamma * (x - mu) / torch.sqrt(sigma2 + eps) + beta


g_ln = torch.Generator().manual_seed(1)
gamma_t, beta_t = torch.randn(5, generator=g_ln), torch.randn(5, generator=g_ln)
check("my_layer_norm = torch.nn.functional.layer_norm nos dois exemplos da seção",
      my_layer_norm(examples, gamma_t, beta_t, 1e-5), F.layer_norm(examples, (5,), gamma_t, beta_t, 1e-5))
