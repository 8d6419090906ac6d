"""Contaminação: quase-duplicatas entre treino e avaliação (TF-IDF de n-gramas de caracteres) e um
detector de pertinência pela própria verossimilhança do modelo (Min-K % prob).

Ver Capítulo 8, seção 8.4.3.
"""
from __future__ import annotations

from .likelihood import token_logprobs


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
