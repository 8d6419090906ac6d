def my_penalty(logits, context_ids, theta):
    seen = torch.tensor(sorted(set(context_ids)))
    out = logits.clone()
    out[seen] = torch.where(out[seen] > 0, out[seen] / theta, out[seen] * theta)
    return out


check("my_penalty(θ = 1,3) = RepetitionPenaltyLogitsProcessor", my_penalty(z, context, 1.3),
      RepetitionPenaltyLogitsProcessor(penalty=1.3)(torch.tensor([context]), z[None].clone())[0], atol=0)
penalized = generate(model, tokenizer, looping, max_new_tokens=50, seed=0, stop_at_eos=False,
                     temperature=0.7, top_p=0.3, repetition_penalty=1.3)
before = repeated_trigrams(looping_runs["τ = 0,7, p = 0,3"].new_ids)
print(f"[τ = 0,7, p = 0,3, θ = 1,3] trigramas repetidos = {repeated_trigrams(penalized.new_ids):.2f} "
      f"(sem penalidade: {before:.2f})\n{penalized.text!r}")
