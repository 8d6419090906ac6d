"""O BPE de bytes do GPT-2: ``encode`` e ``decode`` com uma tabela de junções, e as junções do GPT-2
recuperadas dos seus postos.

Uma tabela de junções é um ``dict`` ``(a, b) → id novo``: os ids 0 a 255 são os bytes, e cada
junção cria um id acima deles; o id menor foi aprendido antes e, no ``encode``, é aplicado antes.
É a cópia do ``lncc_llm`` que a lição usa depois do exercício núcleo do Capítulo 2 (o leitor
escreve a sua).
"""
from __future__ import annotations

import functools

from .tokenization import R50K_PATTERN


@functools.lru_cache(maxsize=1)
def _divisor():
    import regex

    return regex.compile(R50K_PATTERN)


def merge_pair(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Troca, da esquerda para a direita, cada ocorrência de ``pair`` em ``ids`` por ``new_id``.

    Ver Capítulo 2, seção 2.2.
    """
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _aplicar(chunk: list[int], merges: dict) -> list[int]:
    while len(chunk) > 1:           # a junção aprendida primeiro (id menor) vai primeiro
        pair = min(zip(chunk, chunk[1:]), key=lambda p: merges.get(p, float("inf")))
        if pair not in merges:
            break
        chunk = merge_pair(chunk, pair, merges[pair])
    return chunk


def _conferir_tabela(merges) -> None:
    if not isinstance(merges, dict) or not all(
            isinstance(k, tuple) and len(k) == 2 and isinstance(v, int) for k, v in merges.items()):
        raise TypeError("`merges` deve ser um dict (a, b) → id novo, como o de `train_byte_bpe`; "
                        f"recebi {type(merges).__name__}.")


def byte_bpe_encode(text: str, merges: dict, special: dict[str, int] | None = None) -> list[int]:
    """Texto → ids: o texto é cortado pela expressão do GPT-2, cada pedaço vira os seus bytes
    UTF-8 e, em cada pedaço, a junção de menor id entre os pares vizinhos é aplicada enquanto
    houver.

    Os tokens de ``special`` (``{"<|endoftext|>": id}``) saem antes de tudo, com o seu id, e nenhuma
    junção os produz. Ver Capítulo 2, seção 2.2.
    """
    import regex

    if not isinstance(text, str):
        raise TypeError(f"`text` deve ser um str; recebi {type(text).__name__}.")
    _conferir_tabela(merges)
    special = special or {}
    partes = (regex.split("(" + "|".join(regex.escape(s) for s in special) + ")", text) if special
              else [text])
    ids: list[int] = []
    for parte in partes:
        if parte in special:
            ids.append(special[parte])
            continue
        for pedaco in _divisor().findall(parte):
            ids.extend(_aplicar(list(pedaco.encode("utf-8")), merges))
    return ids


def byte_bpe_vocab(merges: dict) -> dict[int, bytes]:
    """Os bytes de cada id: os 256 bytes e, na ordem das junções, a concatenação dos dois lados.

    Ver Capítulo 2, seção 2.2.
    """
    _conferir_tabela(merges)
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), novo in sorted(merges.items(), key=lambda item: item[1]):
        vocab[novo] = vocab[a] + vocab[b]
    return vocab


def byte_bpe_decode(ids: list[int], merges: dict, special: dict[str, int] | None = None) -> str:
    """ids → texto: os bytes de todos os ids, juntados, e só então decodificados em UTF-8 (um
    caractere pode estar dividido entre dois tokens). Ver Capítulo 2, seção 2.2.
    """
    especiais = {i: s.encode("utf-8") for s, i in (special or {}).items()}
    vocab = {**byte_bpe_vocab(merges), **especiais}
    faltam = [i for i in ids if i not in vocab]
    if faltam:
        raise ValueError(f"ids fora do vocabulário desta tabela: {faltam[:5]}; confira se os ids "
                         "vieram do `encode` com as mesmas junções.")
    return b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")


def recover_merges(ranks: dict[bytes, int]) -> dict[tuple[int, int], int]:
    """As junções de um tokenizador do ``tiktoken``, recuperadas dos postos ``bytes → posto``.

    O ``tiktoken`` guarda só os tokens e os seus postos; a junção que criou um token é o par em
    que o BPE, limitado aos postos menores que o dele, o deixa. Os ids da tabela devolvida são os
    bytes crus (0 a 255) e, acima deles, os postos do tokenizador: com ela,
    :func:`byte_bpe_encode` dá os ids do tokenizador depois de trocar cada byte cru pelo seu
    posto. Ver Capítulo 2, seção 2.2.
    """
    def parts(token: bytes, limit: int) -> list[bytes]:
        pieces = [bytes([b]) for b in token]
        while True:
            best = None
            for i, pair in enumerate(zip(pieces, pieces[1:])):
                rank = ranks.get(pair[0] + pair[1])
                if rank is not None and rank < limit and (best is None or rank < best[1]):
                    best = (i, rank)
            if best is None:
                return pieces
            i = best[0]
            pieces = pieces[:i] + [pieces[i] + pieces[i + 1]] + pieces[i + 2:]

    def token_id(token: bytes) -> int:
        return token[0] if len(token) == 1 else ranks[token]

    merges = {}
    for token, rank in ranks.items():
        if len(token) < 2:
            continue
        left, right = parts(token, rank)
        merges[token_id(left), token_id(right)] = rank
    return merges
