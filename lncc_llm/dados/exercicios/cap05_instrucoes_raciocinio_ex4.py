# Quantos tokens do fim os dois prompts têm em comum: enquanto a janela não passa disso, eles são iguais.
common = max(k for k in range(1, len(ids_without) + 1) if ids_with[-k:] == ids_without[-k:])
n_question = len(tokenizer(vault_question)["input_ids"])
print(f"sufixo comum: {common} tokens (de {len(ids_with)} com o fato, {len(ids_without)} sem) | a pergunta: ~{n_question} tokens")
for window in (8, 16, 48, common, common + 1, common + 3, common + 6, common + 9, len(ids_with)):
    x_with, x_without = truncate_ids(ids_with, window), truncate_ids(ids_without, window)
    lp = label_logprob(model, tokenizer, x_with, " 4821")
    print(f"janela {window:>3}: mesmos ids com e sem o fato: {x_with == x_without!s:<5} | "
          f"log p(' 4821') com o fato = {lp:8.3f} | começa em {tokenizer.decode(x_with[:5])!r}")
