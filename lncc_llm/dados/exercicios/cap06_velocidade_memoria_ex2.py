reserve = activation_model(architectures["Llama-2-7B"], 1024, bytes_per_value=2, trainable_norms=False)["total"]
budget = 24e9 - reserve                 # o que sobra da placa depois das ativações
largest, used_bytes = {}, {}
for method in ("lora", "qlora"):
    largest[method] = max(b for b in range(1, 200) if training_memory(b * 1e9, method)["total"] <= budget)
    used = training_memory(largest[method] * 1e9, method)
    used_bytes[method] = used["total"]
    print(f"{methods[method]:<6} até {largest[method]}B parâmetros ({used['total'] / 1e9:.1f} GB de {budget / 1e9:.1f} GB; "
          f"base {(used['pesos'] - used['gradientes']) / 1e9:.1f} GB, adaptadores com gradiente e Adam "
          f"{(used['total'] - used['pesos'] + used['gradientes']) / 1e9:.1f} GB)")
print(f"reserva para as ativações: {reserve / 1e9:.2f} GB ({reserve / 24e9:.0%} da placa)")
