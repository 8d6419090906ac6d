"""A regra do livro para comparar uma saída guardada com a mesma saída recalculada.

Outra CPU (outras instruções vetoriais, outro número de *threads*) ou uma GPU somam os mesmos
números em outra ordem; num treino, dezenas de passos do otimizador ampliam essa diferença, e o
último algarismo impresso de uma perda ou de uma perplexidade pode mudar (``25.95`` numa CPU com
AVX2, ``25.96`` numa com AVX-512). Arredondar uma casa a menos só muda a fronteira de lugar.
A regra:

- um número com casas decimais (ou expoente) concorda com o recalculado quando os dois têm o mesmo
  formato (as mesmas casas) e diferem em **no máximo uma unidade da última casa impressa**:
  ``25.95``/``25.96`` e ``9.99``/``10.00`` concordam; ``25.95``/``25.98`` e ``25.95``/``26.95``
  não; ``-0.00`` e ``0.00`` são o mesmo número;
- inteiros (``124 439 808``, ``7/8``, e também ``+304%``, impresso sem casas) e todo o texto são
  comparados exatamente, e um número que aparece ou some é uma diferença; também são exatos os
  números de um algarismo só (``0.2``, ``5e-04``, ``1e-05``), que costumam ser configurações, os
  nomes com hífen (``Llama-3.2-1B``) e a linha de versões de ``setup_notebook``;
- os espaços comuns de alinhamento encostados num número cuja largura mudou (``9.99`` →
  ``10.00``, ``-0.00`` → ``0.00``) não contam; uma tabela que recalcula a largura das colunas
  inteiras (como a do pandas) não é coberta.

O ``conftest.py`` do repositório aplica a regra a toda célula que o nbval compara: se cada texto
de saída concorda com o guardado por essa regra, o texto novo é trocado pelo guardado antes da
comparação do nbval, que então passa; senão, o nbval mostra a diferença como sempre. Nenhum
capítulo precisa de um caso especial.

Ver Introdução, seção "Como ler as saídas".
"""
from __future__ import annotations

import re
from decimal import Decimal

# Um número com casas decimais ou expoente, com sinal opcional (hífen, "+" ou o menos U+2212).
# Não pega pedaços de palavras ou identificadores (fp32, Q4_1), nomes com hífen (Llama-3.2-1B,
# GPT-3.5) nem versões de três partes (2.13.0).
_NUMBER = re.compile(
    r"(?<![\w.])(?<!\w-)"
    r"(?P<sign>[-+\u2212]?)"
    r"(?P<int>\d+)(?:\.(?P<frac>\d+))?(?:[eE](?P<exp>[-+]?\d+))?"
    r"(?!\w|\.\d)"
)


# A linha de versões de setup_notebook ("lncc_llm 0.1.0 | Python 3.11 | torch 2.13.0 | ..."): as
# versões de duas partes parecem números, mas são texto.
_VERSIONS_LINE = re.compile(r"(?m)^lncc_llm \S+ \| Python .*$")


def _floats(text: str) -> tuple[list[str], list[re.Match]]:
    """Os trechos de texto entre os números com casas decimais, e os próprios números."""
    exact = [m.span() for m in _VERSIONS_LINE.finditer(text)]
    pieces, numbers, start = [], [], 0
    for match in _NUMBER.finditer(text):
        if match["frac"] is None and match["exp"] is None:
            continue  # inteiro: fica no texto, comparado exatamente
        if any(lo <= match.start() < hi for lo, hi in exact):
            continue
        pieces.append(text[start:match.start()])
        numbers.append(match)
        start = match.end()
    pieces.append(text[start:])
    return pieces, numbers


def _value_and_unit(match: re.Match) -> tuple[Decimal, Decimal]:
    sign = "-" if match["sign"] in ("-", "\u2212") else ""
    frac = match["frac"] or ""
    exp = int(match["exp"] or 0)
    value = Decimal(f"{sign}{match['int']}.{frac or '0'}e{exp}")
    return value, Decimal(f"1e{exp - len(frac)}")


def _has_two_digits(match: re.Match) -> bool:
    """Dois algarismos significativos ou duas casas (``0.25``, ``4.0``, ``0.05``; não ``0.2``)."""
    frac = match["frac"] or ""
    return len(frac) >= 2 or len((match["int"] + frac).lstrip("0")) >= 2


def _same_number(stored: re.Match, new: re.Match) -> bool:
    if len(stored["frac"] or "") != len(new["frac"] or ""):
        return False  # outro formato: outra casa decimal impressa não é deriva, é mudança
    if (stored["exp"] is None) != (new["exp"] is None):
        return False
    a, unit_a = _value_and_unit(stored)
    b, unit_b = _value_and_unit(new)
    if a == b:
        return True  # -0.00 e 0.00
    if not (_has_two_digits(stored) or _has_two_digits(new)):
        return False  # um algarismo só (0.2, 5e-04, 1e-05) costuma ser configuração: exato
    return abs(a - b) <= min(unit_a, unit_b)


def number_drift(stored: str, new: str) -> list[tuple[str, str]] | None:
    """Os pares de números que mudaram na última casa, ou ``None`` se os textos não concordam.

    ``number_drift("PPL 25.95", "PPL 25.96")`` → ``[("25.95", "25.96")]``; textos iguais → ``[]``;
    ``number_drift("PPL 25.95", "PPL 25.98")`` → ``None``. É a regra do módulo, com o que ela
    tolerou.
    Ver Introdução, seção "Como ler as saídas".
    """
    if stored == new:
        return []
    stored_pieces, stored_numbers = _floats(stored)
    new_pieces, new_numbers = _floats(new)
    if len(stored_numbers) != len(new_numbers):
        return None
    drift = []
    for k, (a, b) in enumerate(zip(stored_numbers, new_numbers)):
        if not _same_number(a, b):
            return None
        if a[0] != b[0]:
            drift.append((a[0], b[0]))
        if len(a[0]) != len(b[0]):  # a largura mudou: os espaços de alinhamento em volta não contam
            for pieces in (stored_pieces, new_pieces):
                pieces[k] = pieces[k].rstrip(" ")
                pieces[k + 1] = pieces[k + 1].lstrip(" ")
    if stored_pieces != new_pieces:
        return None
    return drift


def numbers_agree(stored: str, new: str) -> bool:
    """Diz se o texto ``new`` reproduz o guardado ``stored`` pela regra dos números do livro.

    Números com casas decimais podem diferir em uma unidade da última casa impressa; inteiros e
    texto, não. ``numbers_agree("PPL 25.95", "PPL 25.96")`` é ``True``;
    ``numbers_agree("PPL 25.95", "PPL 26.95")``, ``False``.
    Ver Introdução, seção "Como ler as saídas".
    """
    if not isinstance(stored, str) or not isinstance(new, str):
        raise TypeError(
            f"numbers_agree compara dois textos; recebi {type(stored).__name__} e "
            f"{type(new).__name__}. Para números, use lncc_llm.check."
        )
    return number_drift(stored, new) is not None


def reconcile_outputs(new_outputs, stored_outputs, sanitize=None):
    """As saídas novas de uma célula, com cada texto que concorda com o guardado trocado por ele.

    Compara saída a saída (mesmo tipo, mesma corrente), depois de ``sanitize`` (as regras do
    ``tests/sanitize.cfg``). Devolve as saídas (cópias; as originais não mudam) e a lista dos pares
    de números tolerados. O que não concorda fica como veio, e o nbval mostra a diferença.
    Ver Introdução, seção "Como ler as saídas".
    """
    sanitize = sanitize or (lambda text: text)
    new_outputs = list(new_outputs)
    if len(new_outputs) != len(stored_outputs):
        return new_outputs, []
    reconciled, drift = [], []

    def settle(new_text, stored_text):
        if not (isinstance(new_text, str) and isinstance(stored_text, str)):
            return new_text
        if new_text == stored_text:
            return new_text
        pairs = number_drift(sanitize(stored_text), sanitize(new_text))
        if pairs is None:
            return new_text
        drift.extend(pairs)
        return stored_text

    for new, stored in zip(new_outputs, stored_outputs):
        same_kind = (new.get("output_type") == stored.get("output_type")
                     and new.get("name") == stored.get("name"))
        if not same_kind:
            reconciled.append(new)
            continue
        result = type(new)(new)
        if "text" in new:
            result["text"] = settle(new["text"], stored.get("text"))
        if isinstance(new.get("data"), dict):
            stored_data = stored.get("data") or {}
            result["data"] = type(new["data"])(
                {key: settle(value, stored_data.get(key)) for key, value in new["data"].items()}
            )
        reconciled.append(result)
    return reconciled, drift
