import math

peak, warmup, total = 2e-3, 3, 12


def factor(step):
    if step < warmup:
        return step / warmup                                   # o passo 0 usa taxa zero
    progress = (step - warmup) / (total - warmup)
    return 0.5 * (1 + math.cos(math.pi * progress))


rates = [peak * factor(step) for step in range(total)]
print("taxa por passo:", [f"{r:.2e}" for r in rates])
