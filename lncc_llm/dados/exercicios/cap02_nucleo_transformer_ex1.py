def bpe_encode(text, merges):
    ids = []
    for piece in GPT2_SPLIT.findall(text):
        chunk = list(piece.encode("utf-8"))
        while len(chunk) > 1:                    # a junção aprendida primeiro (id menor) vai primeiro
            pair = min(zip(chunk, chunk[1:]), key=lambda p: merges.get(p, float("inf")))
            if pair not in merges:
                break
            chunk = merge_ids(chunk, pair, merges[pair])
        ids.extend(chunk)
    return ids


def bpe_decode(ids, merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), new_id in merges.items():        # em ordem: cada lado já existe quando é usado
        vocab[new_id] = vocab[a] + vocab[b]
    return b"".join(vocab[i] for i in ids).decode("utf-8")         # todos os bytes, e só então o UTF-8


s_ex = "Atenção: o ç e o ã"
print(s_ex, "→", bpe_encode(s_ex, merges))
check("bpe_decode(bpe_encode(s)) = s no texto do treino", bpe_decode(bpe_encode(pt_text, merges), merges), pt_text)
