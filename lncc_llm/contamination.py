"""Contaminação: quase-duplicatas entre treino e avaliação (TF-IDF de n-gramas de caracteres) e um
detector de pertinência pela própria verossimilhança do modelo (Min-K % prob).

Ver Capítulo 8, seção 8.4.3.
"""
from __future__ import annotations

import torch

from .likelihood import left_padded_batch


def cross_similarities(train, test, ngram_range=(3, 5)):
    """A matriz (avaliação × treino) de similaridades do cosseno entre vetores TF-IDF de n-gramas
    de caracteres (``char_wb``), de 0 a 1.

    O IDF é ajustado na união dos dois conjuntos, então as similaridades dependem também da
    composição do conjunto de avaliação (bom para um detector, não para comparar entre conjuntos).
    A distribuição de todos os pares cruzados é o que justifica um limiar de suspeita.
    Ver Capítulo 8, seção 8.4.
    """
    train, test = list(train), list(test)
    if not train or not test:
        raise ValueError("near_duplicates precisa de textos nos dois conjuntos "
                         "(treino e avaliação).")
    if not all(isinstance(t, str) for t in train + test):
        raise ValueError("near_duplicates compara textos: passe listas de strings.")
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=tuple(ngram_range), lowercase=True)
    matrix = vectorizer.fit_transform(train + test)
    return cosine_similarity(matrix[len(train):], matrix[: len(train)])


def near_duplicates(train, test, ngram_range=(3, 5), threshold: float = 0.5):
    """Para cada texto de ``test``, o texto de ``train`` mais parecido e a similaridade (0 a 1).

    Usa ``cross_similarities`` (TF-IDF de n-gramas de caracteres e cosseno): pega cópias, cópias
    com pequenas edições e trechos reordenados. Devolve ``[(i_teste, j_treino, similaridade,
    suspeito)]``, com ``suspeito`` = similaridade ≥ ``threshold``.
    Ver Capítulo 8, seção 8.4.
    """
    sims = cross_similarities(train, test, ngram_range)
    out = []
    for i, row in enumerate(sims):
        j = int(row.argmax())
        out.append((i, j, float(row[j]), bool(row[j] >= threshold)))
    return out


@torch.no_grad()
def token_logprobs(model, tokenizer, texts) -> list[list[float]]:
    """Para cada texto, log p(token | tokens anteriores) de cada token a partir do segundo.

    Uma passagem em lote, com preenchimento à esquerda e máscara de atenção; o primeiro token não
    tem contexto e fica de fora.
    Ver Capítulo 8, seção 8.4.3.
    """
    texts = list(texts)
    if not texts or not all(isinstance(t, str) and t.strip() for t in texts):
        raise ValueError("Passe uma lista de textos não vazios.")
    batch = left_padded_batch(tokenizer, texts)
    device = next(model.parameters()).device
    mask = batch["attention_mask"]
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=batch["input_ids"].to(device), attention_mask=mask.to(device),
                   position_ids=positions.to(device)).logits.double().cpu()
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    target = batch["input_ids"][:, 1:]
    picked = logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    out = []
    for row, m in zip(picked, mask[:, 1:].bool() & mask[:, :-1].bool()):
        out.append([float(x) for x in row[m]])
    if any(len(r) == 0 for r in out):
        raise ValueError("Cada texto precisa de ao menos dois tokens para ter uma log p.")
    return out


def min_k_prob(model, tokenizer, texts, k: float = 0.2) -> list[float]:
    """Min-K % prob (Shi et al., 2024): a média das log p dos ``k`` × 100 % tokens menos
    prováveis de cada texto.

    Um texto visto no treino tende a não ter tokens muito improváveis, e a média dos piores sobe.
    Quanto maior, mais suspeito; o número só diz algo comparado entre textos parecidos, ou antes e
    depois de um treino. Pelo menos um token entra na média.
    Ver Capítulo 8, seção 8.4.3.
    """
    if not 0 < k <= 1:
        raise ValueError(f"k é a fração de tokens (0 < k ≤ 1, por exemplo 0.2); recebi {k!r}.")
    scores = []
    for row in token_logprobs(model, tokenizer, texts):
        worst = sorted(row)[: max(1, int(len(row) * k))]
        scores.append(sum(worst) / len(worst))
    return scores
