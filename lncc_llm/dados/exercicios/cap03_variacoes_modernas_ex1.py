def rope_tables(positions, head_dim, base):
    omega = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=positions.device)
                          / head_dim)                               # ω_j
    angles = positions.float()[:, None] * omega[None, :]          # (n, d/2): p·ω_j
    angles = torch.cat([angles, angles], dim=-1)                   # o mesmo ângulo em j e em j + d/2
    return angles.cos(), angles.sin()


def rotate_half(x):
    x_a, x_b = x.chunk(2, dim=-1)
    return torch.cat([-x_b, x_a], dim=-1)


cos_r, sin_r = rope_tables(pos, cfg.head_dim, rope_base)
q_mine, k_mine = q * cos_r + rotate_half(q) * sin_r, k * cos_r + rotate_half(k) * sin_r
check("a sua RoPE de metades = apply_rotary_pos_emb na camada 5 do SmolLM2, em q e k", [q_mine, k_mine], [q_hf, k_hf])
