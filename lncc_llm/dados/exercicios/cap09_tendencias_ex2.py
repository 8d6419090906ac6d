def choose_threshold(conf, right, target=0.75):
    # o menor limiar (uma das confianças) com acurácia ≥ target entre as questões de confiança ≥ limiar;
    # None se nenhum limiar chega lá
    for limit in sorted(set(conf)):                      # do menor ao maior: o primeiro que cumpre a meta
        answered = [ok for c, ok in zip(conf, right) if c >= limit]
        if sum(answered) / len(answered) >= target:
            return limit
    return None


def held_out_accuracy(conf, right, pick, test, target=0.75):
    # o limiar escolhido só com as questões de índices `pick`; a acurácia nas de `test` com confiança ≥ limiar
    # (NaN se nenhuma é respondida)
    limit = choose_threshold([conf[i] for i in pick], [right[i] for i in pick], target)
    kept = [right[i] for i in test if limit is not None and conf[i] >= limit]
    return sum(kept) / len(kept) if kept else float("nan")


conf, right = probe.confidences(), probe.correct()
threshold = choose_threshold(conf, right)
answered = sum(c >= threshold for c in conf)
print(f"todas as 48: limiar {threshold:.3f} responde {answered}")
even, odd = list(range(0, len(items), 2)), list(range(1, len(items), 2))
chosen = choose_threshold([conf[i] for i in even], [right[i] for i in even])
acc_odd = held_out_accuracy(conf, right, even, odd)
n_odd = sum(conf[i] >= chosen for i in odd)
print(f"limiar escolhido nas pares: {chosen:.3f} → nas ímpares responde {n_odd} de {len(odd)}, "
      f"acurácia {acc_odd:.3f}")
# uma divisão só é pouco: 500 divisões ao acaso, metade escolhe o limiar e a outra metade o mede
import numpy as np  # noqa: E402

rng = np.random.default_rng(0)
held_out, in_sample = [], []
for _ in range(500):
    order = rng.permutation(len(items))
    pick, test = order[: len(items) // 2].tolist(), order[len(items) // 2:].tolist()
    acc_test = held_out_accuracy(conf, right, pick, test)
    if acc_test == acc_test:                             # NaN: nenhuma questão de `test` respondida
        held_out.append(acc_test)
        in_sample.append(held_out_accuracy(conf, right, pick, pick))
held_out = np.array(held_out)
print(f"500 divisões ao acaso ({len(held_out)} com alguma resposta na outra metade): acurácia média "
      f"na metade que escolheu o limiar {np.mean(in_sample):.3f}; na outra {held_out.mean():.3f}, "
      f"abaixo de 0,75 em {(held_out < 0.75).mean():.0%} das divisões")
