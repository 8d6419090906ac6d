hit_group, hit_none = [], []
print(f"{'acertos':>8}  {'vantagem de um acerto':>22}  {'de um erro':>11}")
for hits in (1, 2, 4, 6, 7):
    group = [1.0] * hits + [0.0] * (8 - hits)
    scaled = grpo_advantages(group, 8)
    centred = grpo_advantages(group, 8, scale="none")
    hit_group.append(scaled[0].item())
    hit_none.append(centred[0].item())
    print(f"{hits:>5}/8  desvio {scaled[0].item():>+6.2f} | só centro "
          f"{centred[0].item():>+5.2f}  {scaled[-1].item():>+6.2f} | {centred[-1].item():>+5.2f}")
