budget = 0.7 * 24e9                     # 30 % da placa ficam para as ativações
largest = {}
for method in ("lora", "qlora"):
    largest[method] = max(b for b in range(1, 200) if training_memory(b * 1e9, method)["total"] <= budget)
    used = training_memory(largest[method] * 1e9, method)
    print(f"{methods[method]:<6} até {largest[method]}B parâmetros ({used['total'] / 1e9:.1f} GB de {budget / 1e9:.1f} GB; "
          f"base {(used['pesos'] - used['gradientes']) / 1e9:.1f} GB, adaptadores com gradiente e Adam "
          f"{(used['total'] - used['pesos'] + used['gradientes']) / 1e9:.1f} GB)")
