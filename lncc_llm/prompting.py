"""Ferramentas do Capítulo 5: rótulos por log-probabilidade, leitura de respostas, voto e janela de
contexto.

* ``label_logprob`` / ``score_labels`` / ``classify``: pontuam cada rótulo candidato
  pela soma das log-probabilidades dos seus tokens, dado o prompt (uma passagem
  para frente por par prompt–rótulo), sem depender do que o modelo *gera*;
* ``parse_label`` e ``majority_vote``: transformam textos gerados em rótulos e
  decidem por maioria (autoconsistência), com ``"INDETERMINADO"`` quando nada
  pode ser lido ou quando há empate;
* ``truncate_ids``, ``truncate_text`` e ``simulated_window``: cortam uma entrada
  longa para caber numa janela de contexto e simulam uma janela menor.

O conjunto rotulado do capítulo (48 frases de avaliação e 16 de exemplo, em inglês e em português)
fica em ``lncc_llm/dados/icl.json`` e é lido por ``lncc_llm.icl``.
"""
from __future__ import annotations

import re
from collections import Counter
from contextlib import contextmanager
from typing import NamedTuple

import torch

from .likelihood import prompt_ids, sequence_logprob  # noqa: F401  (prompt_ids: reexportado)

UNDECIDED = "INDETERMINADO"

# Grafias aceitas ao ler uma resposta livre: o modelo às vezes troca de idioma ou de gênero.
SENTIMENT_ALIASES = {
    "POSITIVO": ("positivo", "positiva", "positive"),
    "NEGATIVO": ("negativo", "negativa", "negative"),
}


# -------------------------------------------------------------------- rótulos por log-probabilidade


def label_logprob(model, tokenizer, prompt, label: str, chat: bool = False) -> float:
    """log p(rótulo | prompt): ``likelihood.sequence_logprob`` com o rótulo como continuação.

    ``prompt`` é um texto, uma lista de mensagens (com ``chat=True``) ou uma lista de ids.
    O rótulo é tokenizado sozinho (sem tokens especiais) e colado depois dos ids do
    prompt. Rótulos com mais tokens somam mais termos negativos: compare rótulos de
    tamanhos parecidos ou olhe também a média por token.
    Ver Capítulo 5, seção 5.3.
    """
    if not isinstance(label, str) or not label:
        raise ValueError(f"O rótulo deve ser um texto não vazio; recebi {label!r}.")
    return sequence_logprob(model, tokenizer, prompt, label, chat=chat)


def score_labels(model, tokenizer, prompt, labels, chat: bool = False) -> dict[str, float]:
    """``{rótulo: log p(rótulo | prompt)}`` para cada rótulo candidato (uma passagem por rótulo).

    Ver Capítulo 5, seção 5.3.
    """
    labels = list(labels)
    if len(labels) < 2:
        raise ValueError("Dê pelo menos dois rótulos candidatos para comparar.")
    return {label: label_logprob(model, tokenizer, prompt, label, chat=chat) for label in labels}


def classify(model, tokenizer, prompt, labels, chat: bool = False) -> tuple[str, dict[str, float]]:
    """O rótulo de maior log-probabilidade e o dicionário de escores.

    Ver Capítulo 5, seção 5.3.
    """
    scores = score_labels(model, tokenizer, prompt, labels, chat=chat)
    return max(scores, key=scores.get), scores


# ---------------------------------------------------------------------- leitura de respostas e voto


def parse_label(text: str, aliases: dict[str, tuple[str, ...]] | None = None) -> str | None:
    """Lê o rótulo de uma resposta livre; ``None`` se nenhum aparece ou se aparecem rótulos
    diferentes.

    Procura cada grafia de ``aliases`` (padrão: ``SENTIMENT_ALIASES``) como palavra
    inteira, sem diferenciar maiúsculas. "NEGATIVO." vira ``"NEGATIVO"``; "POSITIVO
    ou NEGATIVO" é ambígua e vira ``None``, assim como um texto sem rótulo. Ele procura palavras e
    não entende a frase: "não é POSITIVO" vira ``"POSITIVO"``.
    Ver Capítulo 5, seção 5.3.
    """
    aliases = SENTIMENT_ALIASES if aliases is None else aliases
    found = set()
    for label, spellings in aliases.items():
        for spelling in spellings:
            if re.search(rf"(?<!\w){re.escape(spelling)}(?!\w)", text or "", flags=re.IGNORECASE):
                found.add(label)
    return found.pop() if len(found) == 1 else None


class Vote(NamedTuple):
    """Resultado de ``majority_vote``: o rótulo vencedor, a contagem dos válidos, quantos valeram e
    o total.

    Ver Capítulo 5.
    """

    label: str
    counts: dict[str, int]
    valid: int
    total: int


def majority_vote(labels, undecided: str = UNDECIDED, tie_break=None) -> Vote:
    """Voto da maioria entre rótulos já lidos (``None`` = resposta não interpretável, não vota).

    Sem ``tie_break``, devolve ``undecided`` quando nenhum rótulo é válido ou quando os mais
    votados empatam. Com ``tie_break`` (um ``random.Random`` semeado), um empate é decidido por
    sorteio entre os empatados, em ordem crescente (``tie_break.choice(sorted(empatados))``): é o
    voto por pluralidade usual, e a mesma semente dá a mesma escolha.
    Ver Capítulo 5, seção 5.6.
    """
    labels = list(labels)
    counts = Counter(label for label in labels if label is not None)
    valid = sum(counts.values())
    if not counts:
        return Vote(undecided, {}, 0, len(labels))
    top = max(counts.values())
    tied = sorted(label for label, c in counts.items() if c == top)
    if len(tied) == 1:
        winner = tied[0]
    elif tie_break is None:
        winner = undecided
    elif hasattr(tie_break, "choice"):
        winner = tie_break.choice(tied)
    else:
        raise TypeError("tie_break deve ser um random.Random semeado (ou None, empate = sem voto); "
                        f"recebi {type(tie_break).__name__}.")
    return Vote(winner, dict(sorted(counts.items())), valid, len(labels))


def read_sum(text: str, a: int, b: int, bare: bool = False) -> int | None:
    """O número que ``text`` dá como resultado de ``a + b``, ou ``None`` se ele não disser.

    Aceita, nesta ordem, "final answer: N" ou "answer is N" (pulando a conta repetida, como em "the
    final answer is 27 + 58 = 85") e o resultado escrito logo depois da própria conta ("27 + 58 =
    N", "27 + 58 equals N", "27 + 58 is N"). Com ``bare=True`` (a resposta pedida é só o número),
    aceita por fim um texto que **começa** pelo número, sem uma conta depois dele ("85", "85.").
    Vírgulas de milhar são ignoradas.
    Ver Capítulo 5, seção 5.6.
    """
    if not isinstance(text, str):
        raise TypeError(f"read_sum lê um texto (str); recebi {type(text).__name__}.")
    text = text.replace(",", "")
    equation = rf"{a}\s*\+\s*{b}\s*=\s*"
    stated = re.search(rf"(?:final answer|answer is)\W*(?:{equation})?(-?\d+)", text,
                       flags=re.IGNORECASE)
    if stated:
        return int(stated.group(1))
    worked = re.search(rf"\b{a}\s*\+\s*{b}\s*(?:=|equals|is)\s*(-?\d+)", text, flags=re.IGNORECASE)
    if worked:
        return int(worked.group(1))
    if bare:                                  # a resposta começa pelo número, não por uma conta
        first = re.match(r"\s*(-?\d+)(?!\d|\s*[-+*/x×=])", text)
        return int(first.group(1)) if first else None
    return None


def arithmetic_items(family: str, n: int, seed: int = 0) -> list[tuple[int, int]]:
    """``n`` somas ``(a, b)`` diferentes, sorteadas sem reposição com ``random.Random(seed)``:
    ``"duas casas"`` (a e b de 10 a 99), ``"uma casa"`` (de 1 a 9, 81 somas possíveis) ou ``"uma e
    duas casas"`` (a de 1 a 9, b de 10 a 99). As respostas são conhecidas: ``a + b``.
    Ver Capítulo 5, seção 5.6.1.
    """
    import random

    ranges = {"duas casas": ((10, 99), (10, 99)), "uma casa": ((1, 9), (1, 9)),
              "uma e duas casas": ((1, 9), (10, 99))}
    if family not in ranges:
        raise ValueError(f"família {family!r} desconhecida; use uma de {sorted(ranges)}.")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n deve ser um inteiro ≥ 1; recebi {n!r}.")
    (a_low, a_high), (b_low, b_high) = ranges[family]
    pairs = [(a, b) for a in range(a_low, a_high + 1) for b in range(b_low, b_high + 1)]
    if n > len(pairs):
        raise ValueError(f"a família {family!r} tem só {len(pairs)} somas diferentes; "
                         f"recebi n = {n}.")
    return random.Random(seed).sample(pairs, n)           # sem reposição: n somas diferentes


def arithmetic_results() -> dict:
    """As respostas do SmolLM2 às somas de ``arithmetic_items`` (direta, passo a passo e voto de 5
    cadeias), gravadas por ``scripts/cot_contas.py`` em ``lncc_llm/dados/cot_contas.json``.
    Ver Capítulo 5, seção 5.6.1.
    """
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent / "dados" / "cot_contas.json"
    return json.loads(path.read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- janela de contexto


def self_consistency_results() -> dict:
    """A seleção e o teste da autoconsistência gravados por ``scripts/autoconsistencia.py`` em
    ``lncc_llm/dados/autoconsistencia.json``: 20 somas de seleção por família (cadeia gulosa e 5
    sorteadas), o critério, a família escolhida e as somas de teste (direta, gulosa e 10 cadeias).
    Ver Capítulo 5, seção 5.6.2.
    """
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent / "dados" / "autoconsistencia.json"
    return json.loads(path.read_text(encoding="utf-8"))


def truncate_ids(ids, budget: int, keep: str = "last"):
    """Corta uma sequência de ids para no máximo ``budget`` tokens, guardando o fim (``"last"``) ou
    o início.

    Aceita lista ou tensor (corta a última dimensão). ``keep="last"`` é o que um chat
    faz com o histórico: o mais antigo sai primeiro.
    Ver Capítulo 5, seção 5.7.
    """
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise ValueError(f"budget deve ser um inteiro ≥ 1; recebi {budget!r}.")
    if keep not in ("last", "first"):
        raise ValueError(f"keep deve ser 'last' ou 'first'; recebi {keep!r}.")
    n = ids.shape[-1] if isinstance(ids, torch.Tensor) else len(ids)
    if n <= budget:
        return ids
    if isinstance(ids, torch.Tensor):
        return ids[..., n - budget :] if keep == "last" else ids[..., :budget]
    return list(ids[n - budget :]) if keep == "last" else list(ids[:budget])


def _encode(tokenizer, text: str) -> list[int]:
    if hasattr(tokenizer, "encode_ordinary"):  # tiktoken.Encoding
        return tokenizer.encode_ordinary(text)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


class Truncated(NamedTuple):
    """Resultado de ``truncate_text``: os ids guardados, o texto correspondente e quantos tokens
    saíram.

    Ver Capítulo 5.
    """

    ids: list[int]
    text: str
    dropped: int


def truncate_text(text: str, tokenizer, budget: int, keep: str = "last") -> Truncated:
    """Tokeniza ``text`` e guarda no máximo ``budget`` tokens (o fim, por padrão).

    Funciona com um tokenizador do ``transformers`` ou com um ``tiktoken.Encoding``
    (o BPE do GPT-2 de ``gpt2_tokenizer()``). O corte é feito nos ids, não nos
    caracteres: é o número de tokens que a janela limita.
    Ver Capítulo 5, seção 5.7.
    """
    ids = _encode(tokenizer, text)
    kept = truncate_ids(ids, budget, keep=keep)
    return Truncated(list(kept), tokenizer.decode(list(kept)), len(ids) - len(kept))


_WINDOW_FIELDS = ("max_position_embeddings", "n_positions", "n_ctx")


@contextmanager
def simulated_window(model, n_tokens: int):
    """Finge, dentro do bloco ``with``, que a janela do modelo tem ``n_tokens`` (e a restaura na
    saída).

    Troca o campo da configuração que ``context_window`` lê; os pesos não mudam. Serve
    para ver o corte de ``generate(..., on_overflow=...)`` com prompts curtos, sem pagar
    passagens de milhares de tokens na CPU. Não aumenta a janela real: só a diminui.
    Ver Capítulo 5, seção 5.7.
    """
    cfg = model.config
    name = next((f for f in _WINDOW_FIELDS if isinstance(getattr(cfg, f, None), int)), None)
    if name is None:
        raise ValueError("Não encontrei a janela de contexto na configuração do modelo.")
    original = getattr(cfg, name)
    if (not isinstance(n_tokens, int) or isinstance(n_tokens, bool)
            or not (1 <= n_tokens <= original)):
        raise ValueError(f"n_tokens deve ser um inteiro entre 1 e a janela real ({original}); "
                         f"recebi {n_tokens!r}.")
    setattr(cfg, name, n_tokens)
    try:
        yield model
    finally:
        setattr(cfg, name, original)
