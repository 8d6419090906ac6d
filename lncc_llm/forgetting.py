"""O esquecimento medido trecho a trecho: a mudança pareada da perplexidade, com o seu erro-padrão.

Um modelo ajustado e a sua base são medidos nos **mesmos** trechos; a unidade é o trecho. Para cada
um, o logaritmo da razão das perplexidades; a média desses logaritmos, de volta à escala da razão, é
a mudança típica (a média geométrica das razões, menos 1), e o erro-padrão (EP) da média dos
logaritmos é a resolução da medida: uma mudança menor que uns 3 EP não se distingue de zero com
esses trechos.
"""
from __future__ import annotations

import math

__all__ = ["paired_change"]


def paired_change(values, reference) -> tuple[float, float]:
    """``(mudança, ep)``: a mudança média (geométrica) de ``values`` contra ``reference``, trecho a
    trecho, e o erro-padrão da média do log da razão (desvio-padrão amostral, n − 1, sobre √n).

    As duas listas são perplexidades (positivas) dos mesmos trechos, na mesma ordem. Capítulo 7,
    segunda parte (continuação), "O que cada método mudou, custou e estragou".
    """
    values, reference = list(values), list(reference)
    if len(values) != len(reference) or len(values) < 2:
        raise ValueError(f"As duas listas precisam ter o mesmo número de trechos, pelo menos 2; "
                         f"vieram {len(values)} e {len(reference)}. A comparação é pareada: o "
                         "trecho i de uma com o trecho i da outra.")
    if any(not v > 0 for v in values + reference):
        raise ValueError("Perplexidades são positivas: confira se as listas não trazem perdas "
                         "(log) ou zeros.")
    logs = [math.log(v / r) for v, r in zip(values, reference)]
    mean = sum(logs) / len(logs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    return math.expm1(mean), sd / math.sqrt(len(logs))
