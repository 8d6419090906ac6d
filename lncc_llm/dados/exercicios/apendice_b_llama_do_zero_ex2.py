def future_mask(n_new, n_past):
    # a query i está na posição n_past + i: fica de fora toda key j > n_past + i
    return torch.ones(n_new, n_past + n_new, dtype=torch.bool).triu(n_past + 1)


print(future_mask(2, 3).int())
check("sem passado, a máscara é o triângulo de sempre", future_mask(4, 0),
      torch.ones(4, 4, dtype=torch.bool).triu(1))
check("um token novo vê todo o passado e a si mesmo", not future_mask(1, 7).any())
