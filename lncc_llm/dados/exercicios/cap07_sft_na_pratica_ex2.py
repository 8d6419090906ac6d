import math


def lr_at(step, peak, warmup, total):
    # a taxa de aprendizado no passo `step` (0, 1, …, total − 1) da agenda com aquecimento linear de `warmup`
    # passos até `peak` e cosseno até zero no passo `total`; devolve um float
    if step < warmup:
        return peak * step / warmup                            # o passo 0 usa taxa zero
    progress = (step - warmup) / max(1, total - warmup)
    return peak * 0.5 * (1 + math.cos(math.pi * progress))


rates = [lr_at(step, 2e-3, 3, 12) for step in range(12)]
print("taxa por passo:", [f"{r:.2e}" for r in rates])
