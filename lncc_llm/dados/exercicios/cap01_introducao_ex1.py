def perplexity(model, ids):
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0]   # (n + 1, V)
    logp = torch.log_softmax(logits.double(), dim=-1)
    next_logp = logp[:-1].gather(-1, torch.tensor(ids[1:], device=logp.device)[:, None])[:, 0]   # linha t → t + 1
    return math.exp(-next_logp.mean().item())


for sentence in ("o urso lê um livro", "the bear reads a book"):
    print(f"{sentence!r}: perplexidade ≈ {round(perplexity(decoder, sentence_ids(sentence)), -1):.0f}")
