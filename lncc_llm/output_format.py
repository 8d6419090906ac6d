"""O formato da resposta: validadores que dizem se uma resposta obedeceu à instrução de formato, e a
margem entre dois rótulos no primeiro token da resposta.

Um validador confere a **forma**, não o conteúdo: ``"positive"`` passa no validador de uma palavra
mesmo quando a crítica é negativa. Por isso o Capítulo 5 mede as duas coisas, a taxa de respostas
válidas e o acerto, e olha também a distribuição do primeiro token, que mostra se o conteúdo ainda
está no modelo quando a resposta gerada o esconde.
Ver Capítulo 5, seção 5.5.
"""
from __future__ import annotations

import json
import re

import torch


def _check_labels(labels) -> tuple[str, ...]:
    labels = tuple(labels)
    if len(labels) < 2 or not all(isinstance(x, str) and x for x in labels):
        raise ValueError("Passe ao menos dois rótulos não vazios, por exemplo "
                         f"('negative', 'positive'); recebi {labels!r}.")
    return labels


def one_word_label(text: str, labels) -> str | None:
    """O rótulo, se a resposta for **só** um dos ``labels`` (sem diferenciar maiúsculas, com espaços
    e um ponto final tolerados); ``None`` em qualquer outro caso ("The review is negative." não
    passa).

    Ver Capítulo 5, seção 5.5.2.
    """
    labels = _check_labels(labels)
    word = re.sub(r"\.\s*$", "", (text or "").strip()).strip().lower()
    found = [x for x in labels if x.lower() == word]
    return found[0] if found else None


def json_label(text: str, key: str, labels) -> str | None:
    """O rótulo, se a resposta for um objeto JSON com exatamente a chave ``key`` e um dos ``labels``
    como valor (grafia exata); ``None`` se o texto não for JSON, tiver outras chaves ou outro valor.

    Ver Capítulo 5, seção 5.5.2.
    """
    labels = _check_labels(labels)
    try:
        obj = json.loads((text or "").strip())
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or set(obj) != {key}:
        return None
    return obj[key] if obj[key] in labels else None


def first_token_margins(model, tokenizer, conversations, labels) -> torch.Tensor:
    """Para cada conversa, ``log p(labels[1]) − log p(labels[0])`` no primeiro token da resposta do
    assistente (um lote só, preenchido à esquerda).

    Cada rótulo precisa ser **um** token do tokenizador (no SmolLM2, "positive" e "negative" são). A
    margem mostra para que lado o modelo pende mesmo quando a resposta gulosa é sempre a mesma.
    Ver Capítulo 5, seção 5.5.2.
    """
    labels = _check_labels(labels)
    if len(labels) != 2:
        raise ValueError(f"A margem compara dois rótulos; recebi {len(labels)}: {labels!r}.")
    conversations = list(conversations)
    if not conversations:
        raise ValueError("A lista de conversas está vazia: passe ao menos uma lista de mensagens.")
    from .judge import label_token_ids
    from .likelihood import last_token_logits

    ids = label_token_ids(tokenizer, labels)   # erro em pt-BR se um rótulo tiver vários tokens
    texts = [tokenizer.apply_chat_template(list(m), add_generation_prompt=True, tokenize=False)
             for m in conversations]
    logp = torch.log_softmax(last_token_logits(model, tokenizer, texts), dim=-1)
    return logp[:, ids[1]] - logp[:, ids[0]]
