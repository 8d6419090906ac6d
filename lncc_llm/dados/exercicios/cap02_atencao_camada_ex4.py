with torch.no_grad():
    att_batch = model(**batch, output_attentions=True).attentions
is_pad = batch["attention_mask"][1] == 0
pad_max = torch.stack([layer_att[1][..., is_pad].abs().amax(dim=(-2, -1)) for layer_att in att_batch])
worst = pad_max.max().item()
print(f"{len(att_batch)} camadas × {att_batch[0].shape[1]} cabeças, {int(is_pad.sum())} posições de [PAD]")
print("maior peso que a frase curta dá a um [PAD]:", worst)
assert worst == 0.0

with torch.no_grad():                 # o contraste: o mesmo lote sem a attention_mask
    att_no_mask = model(input_ids=batch["input_ids"], output_attentions=True).attentions
pad_max_no_mask = torch.stack([layer_att[1][..., is_pad].abs().amax(dim=(-2, -1)) for layer_att in att_no_mask])
print(f"sem a attention_mask, o maior peso num [PAD]: {pad_max_no_mask.max().item():.2f}")
assert pad_max_no_mask.max().item() > 0.1
