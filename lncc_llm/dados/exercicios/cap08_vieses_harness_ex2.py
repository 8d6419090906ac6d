def min_questions(p, target):
    # o menor número de questões n com erro-padrão √(p(1 − p)/(n − 1)) ≤ target (um int)
    n = 2
    while math.sqrt(p * (1 - p) / (n - 1)) > target:
        n += 1
    return n


p_acc = probe_before.acc
n_items = len(items)
se_48 = math.sqrt(p_acc * (1 - p_acc) / (n_items - 1))
n_needed = min_questions(p_acc, 0.03)
se_needed = math.sqrt(p_acc * (1 - p_acc) / (n_needed - 1))
print(f"acurácia p = {p_acc:.3f}: erro-padrão com {n_items} questões = {se_48:.3f}")
print(f"erro-padrão ≤ 0,03 a partir de n = {n_needed} questões ({n_needed / n_items:.1f}× a sonda; "
      f"com n = {n_needed}: {se_needed:.5f}, com n = {n_needed - 1}: "
      f"{math.sqrt(p_acc * (1 - p_acc) / (n_needed - 2)):.5f})")
se_diff = math.sqrt(2) * se_needed
print(f"duas acurácias independentes com esse n: erro-padrão da diferença ≈ {se_diff:.3f}, "
      f"e 0,05 = {0.05 / se_diff:.1f} desses erros-padrão")
check("com uma questão a menos, o erro-padrão passa de 0,03",
      math.sqrt(p_acc * (1 - p_acc) / (n_needed - 2)) > 0.03 >= se_needed)
