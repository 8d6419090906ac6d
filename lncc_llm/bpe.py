"""*Byte-pair encoding* (BPE) aprendido à mão, para conferir com a biblioteca ``tokenizers``.

O BPE começa com um símbolo por caractere e repete um passo: conta, em todo o corpus, os pares de
símbolos vizinhos dentro de cada palavra (cada palavra pesa o número de vezes que aparece), junta o
par mais frequente num símbolo novo e anota essa junção (*merge*) na tabela. A tabela, na ordem em
que foi aprendida, é o tokenizador: para segmentar uma palavra nova, aplicam-se as junções na
mesma ordem.

Quando dois pares empatam na contagem, alguém tem de decidir. Usamos a regra do ``BpeTrainer`` da
``tokenizers``: vence o par cujos símbolos vêm antes na ordem dos identificadores (os caracteres
do alfabeto em ordem de código Unicode, depois os símbolos novos na ordem em que foram criados).
Com a mesma regra, as duas implementações aprendem a mesma tabela, e ``learn_bpe`` registra
quantos pares empataram em cada rodada.

Ver Capítulo 2, seção 2.2.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

DATA_FILE = Path(__file__).with_name("dados") / "tokenizacao.json"


@dataclass
class BPETable:
    """O que ``learn_bpe`` aprendeu: as junções em ordem, a contagem de cada uma e os empates.

    ``merges[r]`` é o par juntado na rodada ``r + 1``; ``counts[r]``, quantas vezes ele aparecia no
    corpus naquela rodada; ``ties[r]``, quantos pares tinham essa mesma contagem (1 = sem empate).
    ``segments`` é a segmentação final de cada palavra do corpus.
    Ver Capítulo 2, seção 2.2.
    """

    merges: list[tuple[str, str]]
    counts: list[int]
    ties: list[int]
    segments: dict[str, list[str]] = field(default_factory=dict)


def _validated_counts(word_counts) -> dict[str, int]:
    if isinstance(word_counts, str):
        raise TypeError("learn_bpe recebe contagens de palavras, não um texto: use "
                        "collections.Counter(texto.split()) ou bpe_corpus().")
    try:
        counts = dict(word_counts)
    except (TypeError, ValueError):
        raise TypeError("learn_bpe recebe um dicionário {palavra: contagem}, por exemplo "
                        f"bpe_corpus(); recebi {type(word_counts).__name__}.") from None
    if not counts:
        raise ValueError("O corpus está vazio: dê ao menos uma palavra com contagem positiva.")
    for word, count in counts.items():
        if not isinstance(word, str) or not word or any(ch.isspace() for ch in word):
            raise ValueError(f"{word!r} não é uma palavra: as chaves devem ser textos não vazios e "
                             "sem espaços (separe o texto em palavras antes, com texto.split()).")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"A contagem de {word!r} é {count!r}: use inteiros positivos.")
    return counts


def _merge_pair(symbols: list[str], a: str, b: str) -> list[str]:
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def learn_bpe(word_counts, n_merges: int) -> BPETable:
    """Aprende até ``n_merges`` junções BPE a partir de ``{palavra: contagem}``.

    Cada rodada conta os pares vizinhos (ponderados pela contagem da palavra), junta o mais
    frequente em todas as palavras e anota a junção; empates seguem a regra do ``BpeTrainer``
    (ver o topo do módulo). Para antes se não sobrar nenhum par.
    Ver Capítulo 2, seção 2.2.
    """
    counts = _validated_counts(word_counts)
    if isinstance(n_merges, bool) or not isinstance(n_merges, int) or n_merges < 1:
        raise ValueError(f"n_merges = {n_merges!r}: peça um número inteiro de junções, 1 ou mais.")
    order = {ch: i for i, ch in enumerate(sorted(set("".join(counts))))}
    segments = {word: list(word) for word in counts}
    table = BPETable(merges=[], counts=[], ties=[])
    for _ in range(n_merges):
        pairs: Counter = Counter()
        for word, count in counts.items():
            symbols = segments[word]
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = max(pairs.values())
        tied = [pair for pair, count in pairs.items() if count == best]
        a, b = min(tied, key=lambda pair: (order[pair[0]], order[pair[1]]))
        order.setdefault(a + b, len(order))
        for word in segments:
            segments[word] = _merge_pair(segments[word], a, b)
        table.merges.append((a, b))
        table.counts.append(best)
        table.ties.append(len(tied))
    table.segments = segments
    return table


def segment(word: str, merges) -> list[str]:
    """Segmenta ``word`` aplicando as junções ``merges`` (a lista ``table.merges`` ou a própria
    ``BPETable``) na ordem em que foram aprendidas.

    Uma palavra que o corpus nunca viu também é segmentada: sobram os pedaços que a tabela conhece
    e, no pior caso, caracteres soltos.
    Ver Capítulo 2, seção 2.2.
    """
    if not isinstance(word, str) or not word or any(ch.isspace() for ch in word):
        raise ValueError(f"segment recebe uma palavra sem espaços; recebi {word!r}.")
    if isinstance(merges, BPETable):
        merges = merges.merges                       # a tabela inteira também serve
    try:
        merges = [tuple(m) for m in merges]
    except TypeError:
        raise TypeError("segment recebe as junções em ordem, por exemplo table.merges (ou a "
                        f"própria BPETable); recebi {type(merges).__name__}.") from None
    if not all(len(m) == 2 and all(isinstance(x, str) for x in m) for m in merges):
        raise TypeError("Cada junção deve ser um par de textos, como ('ç', 'ã'): passe "
                        "table.merges, a lista que learn_bpe devolve.")
    symbols = list(word)
    for a, b in merges:
        symbols = _merge_pair(symbols, a, b)
    return symbols


def library_bpe_merges(word_counts, n_merges: int) -> list[tuple[str, str]]:
    """As junções que o ``BpeTrainer`` da ``tokenizers`` aprende no mesmo corpus.

    O corpus vira um texto com cada palavra repetida ``contagem`` vezes; a pré-segmentação é só por
    espaços (``WhitespaceSplit``), sem bytes nem tokens especiais; o vocabulário pedido é o
    alfabeto mais ``n_merges`` símbolos.
    Ver Capítulo 2, seção 2.2.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    counts = _validated_counts(word_counts)
    if isinstance(n_merges, bool) or not isinstance(n_merges, int) or n_merges < 1:
        raise ValueError(f"n_merges = {n_merges!r}: peça um número inteiro de junções, 1 ou mais.")
    alphabet = set("".join(counts))
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(vocab_size=len(alphabet) + n_merges, min_frequency=0,
                                  show_progress=False, special_tokens=[])
    text = " ".join(word for word, count in counts.items() for _ in range(count))
    tokenizer.train_from_iterator([text], trainer=trainer)
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in merges]


def _data() -> dict:
    with open(DATA_FILE, encoding="utf-8") as f:
        return json.load(f)


def bpe_corpus() -> dict[str, int]:
    """O corpus mínimo do curso para aprender BPE à mão: ``{palavra: contagem}``.

    Advérbios em "-mente" e substantivos em "-ção", escritos para o curso
    (``lncc_llm/dados/tokenizacao.json``).
    Ver Capítulo 2, seção 2.2.
    """
    return dict(_data()["bpe_corpus"])


def parallel_texts() -> list[dict[str, str]]:
    """Os mesmos parágrafos em português (``"pt"``) e em inglês (``"en"``), escritos para o curso.

    Ver Capítulo 2, seção 2.2.
    """
    return [dict(pair) for pair in _data()["paralelos"]]


def sample_words() -> list[str]:
    """Palavras para comparar tokenizadores: uma rara, um número, uma acentuada, uma inglesa longa.

    Ver Capítulo 2, seção 2.2.
    """
    return list(_data()["palavras_teste"])


def tokens_per_word(encode, text: str) -> float:
    """Tokens por palavra de ``text`` com o tokenizador ``encode`` (texto → lista de ids).

    Palavras são os pedaços separados por espaço (``text.split()``), com a pontuação colada; os
    tokens especiais que alguns tokenizadores acrescentam (``[CLS]``, ``[SEP]``) devem ficar de
    fora, por exemplo com ``add_special_tokens=False``.
    Ver Capítulo 2, seção 2.2.
    """
    if not callable(encode):
        raise TypeError("tokens_per_word recebe uma função texto → ids, por exemplo "
                        "lambda s: tok(s, add_special_tokens=False)['input_ids'].")
    words = text.split() if isinstance(text, str) else []
    if not words:
        raise ValueError("O texto está vazio: não há palavras para dividir os tokens.")
    return len(encode(text)) / len(words)
