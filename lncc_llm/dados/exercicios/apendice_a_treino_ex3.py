def previous_char_hits(model, ids):
    block = model.blocks[0]
    with torch.no_grad():
        w = block.attn.attention_weights(block.attn_norm(model.embed(ids)))[0]     # (H, n, n)
    n = w.shape[-1]
    return [int((w[h, 1:].argmax(-1) == torch.arange(n - 1)).sum()) for h in range(w.shape[0])]


s = "MARCIUS.\nHail, noble Romans!"
ids = torch.tensor([char_tokenizer.encode(s)])
print(f"em {s!r} ({ids.shape[1] - 1} posições depois da primeira):", previous_char_hits(long_model, ids))
block = long_model.blocks[0]
with torch.no_grad():
    w = block.attn.attention_weights(block.attn_norm(long_model.embed(ids)))[0]
labels = [c if c != "\n" else "\\n" for c in s]
fig, axes = plt.subplots(1, 2, figsize=(14, 6))
for h in range(2):
    plot_attention(w[h], labels, ax=axes[h], title=f"camada 0, cabeça {h} (modelo treinado por mais tempo)")
plt.show()
