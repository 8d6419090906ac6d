from statistics import median

point = next(p for p in curves["português"] if p.k == 0)
truth_pt = [tasks["português"].labels.index(i["label"]) for i in tasks["português"].eval_items]
threshold = median(point.margins)                       # só as margens entram
acc_median = sum((m > threshold) == bool(t) for m, t in zip(point.margins, truth_pt)) / len(truth_pt)
print(f"limiar 0: acurácia {point.accuracy:.2f} | limiar N/A ({point.bias:+.2f}): {point.calibrated_accuracy:.2f} "
      f"| limiar mediana ({threshold:+.2f}): {acc_median:.2f}")
