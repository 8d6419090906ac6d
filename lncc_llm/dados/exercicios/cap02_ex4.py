with torch.no_grad():
    att_batch = model(**batch, output_attentions=True).attentions
is_pad = batch["attention_mask"][1] == 0
pad_max = torch.stack([layer_att[1][..., is_pad].abs().amax(dim=(-2, -1)) for layer_att in att_batch])
worst = pad_max.max().item()
print(f"{len(att_batch)} camadas × {att_batch[0].shape[1]} cabeças, {int(is_pad.sum())} posições de [PAD]")
print("maior peso que a frase curta dá a um [PAD]:", worst)
assert worst == 0.0
