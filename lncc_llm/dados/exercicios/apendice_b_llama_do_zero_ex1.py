class MyKVCache:
    def __init__(self, n_layers):
        self.keys = [None] * n_layers                      # um tensor (lote, 3, posições, 64) por camada
        self.values = [None] * n_layers

    def __len__(self):
        return 0 if self.keys[0] is None else self.keys[0].shape[2]

    def append(self, layer, k, v):
        if self.keys[layer] is not None:                   # junta ao fim, na dimensão das posições
            k = torch.cat([self.keys[layer], k], dim=2)
            v = torch.cat([self.values[layer], v], dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v


cache_test = MyKVCache(2)
for n in (4, 1):                                           # um prefill de 4 posições, um passo de 1
    for layer in range(2):
        k_all, v_all = cache_test.append(layer, torch.zeros(1, 3, n, 64), torch.zeros(1, 3, n, 64))
print("depois do prefill e de um passo:", len(cache_test), "posições; keys", tuple(k_all.shape))
