def generate_ids_k(prompt, n_new=20, temperature=1.0, top_k=None, top_p=1.0, seed=0):
    """generate_ids com top-k: só o trecho do sorteio muda."""
    rng = torch.Generator().manual_seed(seed)
    seq = tokenizer(prompt, return_tensors="pt")["input_ids"].to(device)
    new = []
    with torch.no_grad():
        for _ in range(n_new):
            z_t = model(seq).logits[0, -1].double().cpu() / temperature
            if top_k is not None:                                    # o k-ésimo maior é o corte
                z_t = z_t.masked_fill(z_t < torch.topk(z_t, top_k).values[-1], float("-inf"))
            probs = torch.softmax(z_t, dim=-1)
            if top_p < 1.0:
                ranked, order = probs.sort(descending=True)
                keep = order[: int((ranked.cumsum(0) < top_p).sum()) + 1]
                nucleus = torch.zeros_like(probs)
                nucleus[keep] = probs[keep]
                probs = nucleus / nucleus.sum()
            token = int(torch.multinomial(probs, 1, generator=rng))
            new.append(token)
            if token == tokenizer.eos_token_id:
                break
            seq = torch.cat([seq, torch.tensor([[token]], device=device)], dim=1)
    return new


ours_k = generate_ids_k(prompt, n_new=12, temperature=0.8, top_k=20, top_p=0.9, seed=3)
library_k = generate(model, tokenizer, prompt, max_new_tokens=12, temperature=0.8, top_k=20, top_p=0.9, seed=3,
                     use_cache=False)
check("generate_ids_k = generate(top_k=20, top_p=0,9), semente 3", ours_k, library_k.new_ids)
for k in (None, 20):
    text = tokenizer.decode(generate_ids_k(prompt, n_new=20, temperature=1.5, top_k=k, seed=0))
    print(f"[τ = 1,5, top_k = {k}] {text!r}")
