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
