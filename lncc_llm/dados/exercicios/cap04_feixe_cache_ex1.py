def my_penalty(logits, context_ids, theta):
    seen = torch.tensor(sorted(set(context_ids)))               # cada id uma vez, por mais que se repita
    out = logits.clone()
    out[seen] = torch.where(out[seen] > 0, out[seen] / theta, out[seen] * theta)
    return out


ctx = prompt_ids["input_ids"][0].tolist() + greedy_ids         # o prompt e os 20 tokens gulosos
top = int(z.argmax())
print(f"{tokenizer.decode([top])!r} (no contexto: {top in ctx}): logit {z[top].item():.2f} -> "
      f"{my_penalty(z, ctx, 1.3)[top].item():.2f} com θ = 1,3")
