def my_future_mask(n_new, n_past):
    # a query nova i está na posição n_past + i: fica de fora toda key j > n_past + i
    return torch.ones(n_new, n_past + n_new, dtype=torch.bool).triu(n_past + 1)


print(my_future_mask(2, 3).int())
