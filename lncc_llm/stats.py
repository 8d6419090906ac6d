"""As contas de incerteza que o livro usa: intervalo de Wilson, AUROC com erro-padrão, intervalo
*bootstrap* e valor-p de permutação, e a curva de cobertura e acurácia quando o modelo pode se
abster.

Ver Capítulo 8, seção 8.3.5, e Capítulo 9, seção 9.3.
"""
from __future__ import annotations


def abstention_curve(confidences, correct) -> list[tuple[float, float, float]]:
    """Cobertura e acurácia quando o modelo só responde com confiança ≥ limiar.

    Para cada limiar (as próprias confianças, da maior para a menor), responde às questões com
    confiança ≥ limiar e se abstém nas outras. Devolve ``[(limiar, cobertura, acurácia)]``:
    cobertura é a fração respondida e acurácia, a fração certa entre as respondidas. O último ponto
    (cobertura 1) é a acurácia sem abstenção.
    Ver Capítulo 9, seção 9.3.
    """
    confidences, correct = list(confidences), list(correct)
    pairs = list(zip(confidences, correct))
    if not pairs or len(pairs) != len(confidences) or len(pairs) != len(correct):
        raise ValueError("Dê uma confiança e um acerto para cada questão "
                         "(listas não vazias, do mesmo tamanho).")
    out = []
    for threshold in sorted({c for c, _ in pairs}, reverse=True):
        answered = [ok for c, ok in pairs if c >= threshold]
        out.append((threshold, len(answered) / len(pairs), sum(answered) / len(answered)))
    return out


def auroc(scores, labels) -> float:
    """Área sob a curva ROC: a chance de uma questão certa ter confiança maior que uma errada.

    A estatística de Mann–Whitney, com empates contando meio: 0,5 é o acaso, 1 separa tudo.
    ``labels`` são acertos (booleanos); precisa de ao menos um certo e um errado.
    Ver Capítulo 9, seção 9.3.
    """
    import numpy as np

    s = np.asarray(list(scores), dtype=float)
    y = np.asarray(list(labels), dtype=bool)
    if s.shape != y.shape or s.ndim != 1:
        raise ValueError("Dê uma confiança e um acerto por questão (listas do mesmo tamanho).")
    pos, neg = s[y], s[~y]
    if len(pos) == 0 or len(neg) == 0:
        raise ValueError("A AUROC precisa de ao menos uma questão certa e uma errada; recebi "
                         f"{len(pos)} certas e {len(neg)} erradas.")
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


def auroc_interval(scores, labels, *, n_boot: int = 2000, level: float = 0.95,
                   seed: int = 0) -> tuple[float, float, float]:
    """A AUROC e um intervalo *bootstrap* de percentis: ``(auroc, baixo, alto)``.

    Sorteia as questões com reposição ``n_boot`` vezes (gerador do NumPy com ``seed``); amostras
    sem uma certa ou sem uma errada são descartadas. Com poucas questões o intervalo é largo, e é
    isso que ele deve mostrar.
    Ver Capítulo 9, seção 9.3.
    """
    import numpy as np

    s = np.asarray(list(scores), dtype=float)
    y = np.asarray(list(labels), dtype=bool)
    point = auroc(s, y)
    if not 0 < level < 1:
        raise ValueError(f"level deve estar entre 0 e 1 (por exemplo 0.95); recebi {level!r}.")
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(s), len(s))
        if y[idx].all() or not y[idx].any():
            continue
        values.append(auroc(s[idx], y[idx]))
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return point, float(low), float(high)


def auroc_permutation_p(scores, labels, *, n_perm: int = 2000, seed: int = 0) -> float:
    """Valor-p de permutação: a chance de uma AUROC tão longe de 0,5 quanto a medida se a
    confiança não tivesse relação com o acerto (rótulos embaralhados ``n_perm`` vezes).

    Ver Capítulo 9, seção 9.3.
    """
    import numpy as np

    s = np.asarray(list(scores), dtype=float)
    y = np.asarray(list(labels), dtype=bool)
    observed = abs(auroc(s, y) - 0.5)
    rng = np.random.default_rng(seed)
    hits = sum(abs(auroc(s, rng.permutation(y)) - 0.5) >= observed - 1e-12 for _ in range(n_perm))
    return (hits + 1) / (n_perm + 1)


def auroc_se(auc: float, n_pos: int, n_neg: int) -> float:
    """Erro-padrão de uma AUC pela fórmula fechada de Hanley e McNeil (1982).

    Depende só da AUC e de quantos positivos e negativos há: com 24 + 24 itens, ≈ 0,08 perto de
    0,5 e menor perto de 1. É a aproximação usual para dizer se duas AUCs diferem mais que o ruído.
    Ver Capítulo 5, seção 5.3.2.
    """
    if not (isinstance(n_pos, int) and isinstance(n_neg, int) and n_pos >= 1 and n_neg >= 1):
        raise ValueError(f"Dê inteiros n_pos ≥ 1 e n_neg ≥ 1; recebi {n_pos!r} e {n_neg!r}.")
    if not 0.0 <= auc <= 1.0:
        raise ValueError(f"A AUC fica entre 0 e 1; recebi {auc!r}.")
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    var = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc)
           + (n_neg - 1) * (q2 - auc * auc)) / (n_pos * n_neg)
    return max(var, 0.0) ** 0.5


def wilson_interval(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Intervalo de Wilson (95 % com z = 1,96) para uma taxa de ``hits`` acertos em ``n``.

    Ao contrário de p ± z·EP, não sai de [0, 1] e não encolhe a zero quando p = 0 ou 1: com 8 de 8,
    o intervalo ainda vai de 0,68 a 1. São os p cujo teste de escore não rejeita a taxa medida.
    Ver Capítulo 8, seção 8.3.5.
    """
    if not (isinstance(n, int) and n >= 1 and isinstance(hits, int) and 0 <= hits <= n):
        raise ValueError(f"Dê inteiros 0 ≤ hits ≤ n, com n ≥ 1; recebi hits={hits!r}, n={n!r}.")
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return max(0.0, centre - half), min(1.0, centre + half)
