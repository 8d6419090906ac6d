"""Uma tarefa verificável para o GRPO: somas de dois algarismos, conferidas por código.

* ``sum_prompts``: as 81 somas ``a + b`` (a, b de 1 a 9), separadas em treino e reservadas;
* ``extract_answer``: o número que uma resposta dá (a regra de extração, como no GSM8K);
* ``correctness_reward`` e ``format_reward``: as duas recompensas, 1 ou 0 por resposta;
* ``sum_reward``: a recompensa do treino, acerto + 0,5 × formato.
"""
from __future__ import annotations

import random
import re

#: O enunciado de cada prompt.
SUM_TEMPLATE = "What is {a} + {b}? Answer with just the number."
#: Quantos dos 45 pares {a, b} ficam reservados (nunca vistos no treino, em nenhuma ordem).
HELDOUT_PAIRS = 13
#: O peso da recompensa de formato em ``sum_reward``.
FORMAT_WEIGHT = 0.5

_NUMBER = re.compile(r"-?\d+")
_SUM_EXPRESSION = re.compile(r"-?\d+\s*\+\s*-?\d+")
_ONLY_NUMBER = re.compile(r"\s*-?\d+\s*\.?\s*")


def sum_prompts(split: str = "treino") -> list[dict]:
    """As somas ``a + b`` (a, b de 1 a 9) como linhas ``{"prompt", "answer"}``, no formato do
    ``trl``.

    A divisão é por par **sem ordem**: os 45 pares {a, b} são embaralhados com a semente 0, e os
    13 primeiros, nas duas ordens (``3 + 7`` e ``7 + 3``), são as ``"reservadas"`` (a medida antes
    e depois, 24 somas); os outros 32, também nas duas ordens, são o ``"treino"`` (57 somas). Assim
    nenhuma soma reservada tem a sua gêmea comutada no treino. ``prompt`` é uma conversa com uma
    mensagem do usuário; ``answer`` é a soma, que a função de recompensa recebe do ``trl`` como
    coluna extra.
    Ver Capítulo 8, seção 8.3.4.
    """
    if split not in ("treino", "reservadas"):
        raise ValueError(f"split deve ser 'treino' ou 'reservadas'; recebi {split!r}.")
    pairs = [(a, b) for a in range(1, 10) for b in range(a, 10)]
    random.Random(0).shuffle(pairs)
    chosen = pairs[:HELDOUT_PAIRS] if split == "reservadas" else pairs[HELDOUT_PAIRS:]
    ordered = [(a, b) for a, b in chosen] + [(b, a) for a, b in chosen if a != b]
    return [{"prompt": [{"role": "user", "content": SUM_TEMPLATE.format(a=a, b=b)}],
             "answer": a + b} for a, b in ordered]


def extract_answer(text: str) -> int | None:
    """O número que a resposta dá: o primeiro inteiro que não faz parte de uma conta ``a + b``
    (a pergunta repetida); ``None`` se não há um.

    ``"3 + 7 = 10"`` → 10; ``"1 + 2 equals 3."`` → 3; ``"The answer is 12."`` → 12;
    ``"I don't know"`` → ``None``. Regras assim são como os benchmarks de respostas numéricas
    pontuam (no GSM8K, o número depois de ``####``); elas têm falhas, e o treino as explora se
    puder.
    Ver Capítulo 8, seção 8.3.4.
    """
    if not isinstance(text, str):
        raise TypeError(f"extract_answer recebe o texto da resposta; recebi {type(text).__name__}.")
    match = _NUMBER.search(_SUM_EXPRESSION.sub(" ", text))
    return int(match.group()) if match else None


def correctness_reward(completions, completion_ids, answer) -> list[float]:
    """1 se o número extraído (``extract_answer``) é a soma certa, 0 se não.

    Ver Capítulo 8, seção 8.3.4.
    """
    if len(completions) != len(answer):
        raise ValueError(f"Uma resposta certa por resposta: {len(completions)} respostas, "
                         f"{len(answer)} gabaritos.")
    return [float(extract_answer(text) == int(a)) for text, a in zip(completions, answer)]


def format_reward(completions, completion_ids, answer=None, end_token_id: int = 2) -> list[float]:
    """1 se a resposta é só um número e termina (emite o token de fim, ``end_token_id``; no SmolLM2,
    ``<|im_end|>`` = 2) dentro do limite; 0 se não. Não olha se o número está certo.

    Ver Capítulo 8, seção 8.3.4.
    """
    return [float(end_token_id in list(ids) and _ONLY_NUMBER.fullmatch(text) is not None)
            for text, ids in zip(completions, completion_ids)]


def sum_reward(completions, completion_ids, answer) -> list[float]:
    """A recompensa do treino: ``correctness_reward + FORMAT_WEIGHT × format_reward``.

    Ver Capítulo 8, seção 8.3.4.
    """
    right = correctness_reward(completions, completion_ids, answer)
    shape = format_reward(completions, completion_ids, answer)
    return [r + FORMAT_WEIGHT * f for r, f in zip(right, shape)]
