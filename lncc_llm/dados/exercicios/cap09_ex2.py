ok = [(t, c, a) for t, c, a in curve if a >= 0.75]
threshold, coverage, accuracy = min(ok, key=lambda p: p[0])
answered = round(coverage * len(items))
print(f"todas as 48: limiar {threshold:.3f} responde {answered} (acurácia {accuracy:.3f})")
conf, right = probe.confidences(), probe.correct()
even, odd = range(0, len(items), 2), range(1, len(items), 2)
curve_even = abstention_curve([conf[i] for i in even], [right[i] for i in even])
chosen = min((t for t, _, a in curve_even if a >= 0.75), default=None)
kept = [right[i] for i in odd if conf[i] >= chosen] if chosen is not None else []
acc_odd = sum(kept) / len(kept) if kept else float("nan")
if kept:
    print(f"limiar escolhido nas pares: {chosen:.3f} → nas ímpares responde {len(kept)} "
          f"de {len(odd)}, acurácia {acc_odd:.3f}")
else:
    print("nenhum limiar atinge 0,75 nas pares, ou nenhuma ímpar passa dele")
# uma divisão só é pouco: 500 divisões ao acaso, metade escolhe o limiar e a outra metade o mede
import numpy as np  # noqa: E402

rng = np.random.default_rng(0)
held_out, in_sample = [], []
for _ in range(500):
    order = rng.permutation(len(items))
    pick, test = order[: len(items) // 2], order[len(items) // 2:]
    curve_pick = abstention_curve([conf[i] for i in pick], [right[i] for i in pick])
    limit = min((t for t, _, a in curve_pick if a >= 0.75), default=None)
    kept_test = [right[i] for i in test if limit is not None and conf[i] >= limit]
    if kept_test:
        held_out.append(sum(kept_test) / len(kept_test))
        kept_pick = [right[i] for i in pick if conf[i] >= limit]
        in_sample.append(sum(kept_pick) / len(kept_pick))
held_out = np.array(held_out)
print(f"500 divisões ao acaso ({len(held_out)} com alguma resposta na outra metade): acurácia média "
      f"na metade que escolheu o limiar {np.mean(in_sample):.3f}; na outra {held_out.mean():.3f}, "
      f"abaixo de 0,75 em {(held_out < 0.75).mean():.0%} das divisões")
