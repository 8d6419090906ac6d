X_ex = X.clone()
X_ex[2] = torch.tensor([1.0, -1.0, 0.0, 0.0], dtype=torch.float64)    # o novo vetor de reads
X_ex_rot = rope_rotate(X_ex, positions)
L_ex_plain = logits(X_ex, X_ex)
L_ex_rope = logits(X_ex_rot, X_ex_rot)
print("sem RoPE:", rounded(L_ex_plain, 4))
print("com RoPE:", rounded(L_ex_rope, 4))

closed_forms = {
    "teddy–reads = (cos 2 + sin 2)/2": (L_ex_rope[0, 2].item(), (math.cos(2) + math.sin(2)) / 2),
    "bear–reads  = sin 1": (L_ex_rope[1, 2].item(), math.sin(1)),
    "teddy–bear  = igual ao exemplo mínimo": (L_ex_rope[0, 1].item(), L_rope[0, 1].item()),
}
for name, (got, formula) in closed_forms.items():
    print(f"{name:<42} {got:.4f} | fórmula {formula:.4f}")
check("as três entradas = as formas fechadas", [g for g, _ in closed_forms.values()],
      [f for _, f in closed_forms.values()], atol=1e-12)
assert rounded(L_ex_plain, 4) == [[1.0, 0.5, 0.5], [0.5, 1.5, 0.0], [0.5, 0.0, 1.0]]
assert rounded(L_ex_rope, 4) == [[1.0, -0.1556, 0.2466], [-0.1556, 1.5, 0.8415], [0.2466, 0.8415, 1.0]]
assert torch.allclose(L_ex_plain.diagonal(), L_ex_rope.diagonal())

fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
for ax, M, title in [(axes[0], L_ex_plain, "sem RoPE"), (axes[1], L_ex_rope, "com RoPE")]:
    plot_attention(M, tokens, ax=ax, vmin=-1.5, vmax=1.5, cmap="RdBu_r", colorbar_label="logit", title=title)
plt.tight_layout()
plt.show()
