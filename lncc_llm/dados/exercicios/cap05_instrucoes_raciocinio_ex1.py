def my_first_token_margin(conversation):
    text = tokenizer.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
    ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"].to(device)
    with torch.no_grad():                                       # uma passagem; nada é gerado
        logp = torch.log_softmax(model(ids).logits[0, -1].float(), dim=-1)
    return (logp[positive_id] - logp[negative_id]).item()


example = conversations(TASK + "\n\nAnswer with one word: positive or negative.")[0]
print(f"margem da 1ª crítica: {my_first_token_margin(example):+.3f}")
