"""Como o livro escreve números inteiros: milhares separados por um espaço fino, no estilo do SI.

``124,439,808`` se lê, no Brasil, como um número decimal; ``124.439.808`` se lê como milhares, mas
confunde quem lê em inglês. O SI resolve os dois: grupos de três algarismos separados por um espaço
fino, ``124 439 808``. As saídas de código mantêm o ponto decimal dos números de ponto flutuante.

Ver Introdução, seção "Como ler as saídas".
"""
from __future__ import annotations

import operator

THIN_SPACE = "\u202f"  # espaço fino inseparável: um número nunca se quebra no fim da linha


def fmt_int(value, sep: str = THIN_SPACE) -> str:
    """Um inteiro com milhares separados por espaço fino: ``fmt_int(124439808)`` → ``124 439 808``.

    Usa o espaço fino inseparável (U+202F), o do SI: no livro, um número nunca se quebra entre duas
    linhas, e no texto corrido o espaço é mais estreito que o de uma palavra. Agrupa a partir de
    quatro algarismos (``1 024``), para que as colunas de uma tabela fiquem alinhadas. Aceita
    ``int``, inteiros do NumPy e tensores inteiros de um elemento; recusa ``bool`` e números de
    ponto flutuante (arredonde antes, com ``round(x)``, se o valor for mesmo inteiro).
    Ver Introdução, seção "Como ler as saídas".
    """
    if isinstance(value, bool) or str(getattr(value, "dtype", "")) in {"bool", "torch.bool"}:
        raise TypeError(
            f"fmt_int formata inteiros; recebi o booleano {value!r}. Para contar verdadeiros, "
            "some antes: fmt_int(int(mascara.sum()))."
        )
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(
            f"fmt_int formata inteiros; recebi {value!r} ({type(value).__name__}). "
            "Para um valor inteiro guardado como float, use fmt_int(round(x)); para um "
            "número com casas decimais, use um f-string, por exemplo f'{x:.3f}'."
        ) from None
    if not isinstance(sep, str):
        raise TypeError(f"O separador deve ser um texto, por exemplo ' '; recebi {sep!r}.")
    sign = "-" if number < 0 else ""
    return sign + f"{abs(number):,}".replace(",", sep)
