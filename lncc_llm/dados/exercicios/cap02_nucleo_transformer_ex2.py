sentence = "The teddy bear likes the teddy."
enc_ex = tokenizer(sentence, return_tensors="pt").to(device)
pieces_ex = tokenizer.convert_ids_to_tokens(enc_ex["input_ids"][0].tolist())
first, second = [pos for pos, piece in enumerate(pieces_ex) if piece == "teddy"]
with torch.no_grad():
    out_ex = model(**enc_ex, output_hidden_states=True)
    rows_ex = model.embeddings.word_embeddings.weight[enc_ex["input_ids"][0]]

same_row = torch.equal(rows_ex[first], rows_ex[second])
same_input = torch.allclose(out_ex.hidden_states[0][0, first], out_ex.hidden_states[0][0, second])
cosine = torch.nn.functional.cosine_similarity(
    out_ex.last_hidden_state[0, first], out_ex.last_hidden_state[0, second], dim=0).item()
print("tokens:", pieces_ex)
print(f"'teddy' nas posições {first} e {second}")
check("as duas leem a mesma linha lexical de E", same_row)
check("as duas entram diferentes na camada 0 (hidden_states[0])", not same_input)
print(f"cosseno entre as duas na última camada: {cosine:.3f}")
check("na última camada, vetores diferentes (cosseno < 0,99)", cosine < 0.99)
