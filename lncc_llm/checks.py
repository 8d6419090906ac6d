"""Conferir uma conta feita à mão contra a referência, com um veredito de uma linha.

Toda conta à mão do livro é conferida contra a biblioteca ou o modelo. ``check`` faz a
conferência (o ``assert``) e imprime uma linha curta por conceito, em vez de uma parede de
``True``::

    ✓ atenção da camada 0 = a do modelo (máx |Δ| 2e-07)

Se a conta não confere, nada é impresso: ``check`` levanta ``AssertionError`` com a mesma linha,
marcada com ✗ e com o motivo.

Ver Introdução, seção "Como ler as saídas".
"""
from __future__ import annotations

import numpy as np

PASS_MARK = "✓"
FAIL_MARK = "✗"
_NO_REFERENCE = object()  # sentinela: distingue "sem referência" de uma referência None
_SHOW = 60  # caracteres de cada valor mostrados quando uma comparação exata falha


def check(claim: str, actual, expected=_NO_REFERENCE, *, atol: float = 1e-5, rtol: float = 0.0):
    """Confere ``actual`` contra ``expected`` e imprime uma linha de veredito (✓), ou falha (✗).

    Três usos:

    - ``check("linhas somam 1", bool(...))``: sem referência, ``actual`` deve ser um booleano
      (``bool``, ``numpy.bool_`` ou um tensor booleano de um elemento) e é o próprio veredito.
    - ``check("Z à mão = a da biblioteca", z, z_ref)`` com números de ponto flutuante: confere
      ``|actual − expected| ≤ atol + rtol·|expected|`` elemento a elemento (como ``torch.allclose``)
      e mostra o maior desvio, ``(máx |Δ| 2e-07)``.
    - Inteiros, booleanos ou textos dos dois lados (ids de tokens, rótulos): igualdade exata,
      ``(idênticos)``.

    Aceita tensores do PyTorch (em qualquer dispositivo e tipo, inclusive bf16), arrays do NumPy,
    listas e números. As formas têm de ser iguais (não há *broadcasting*: um escalar não confere
    com um vetor); ``NaN`` nunca confere; infinitos conferem só com o mesmo infinito. Não devolve
    nada, para não imprimir um valor a mais no fim de uma célula.
    Ver Introdução, seção "Como ler as saídas".
    """
    if not isinstance(claim, str) or not claim.strip():
        raise TypeError(
            "check precisa de uma descrição em texto do que é conferido, por exemplo "
            f"check('Z à mão = Z do modelo', z, z_ref); recebi {claim!r}."
        )
    if expected is _NO_REFERENCE:
        passed, detail = _as_verdict(actual), ""
    else:
        passed, detail = _compare(actual, expected, atol=atol, rtol=rtol)
    mark = PASS_MARK if passed else FAIL_MARK
    line = f"{mark} {claim.strip()}" + (f" ({detail})" if detail else "")
    if not passed:
        raise AssertionError(line)
    print(line)


def _as_verdict(value) -> bool:
    """O booleano de um veredito; recusa o que não é claramente verdadeiro ou falso."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.ndarray) and value.dtype == np.bool_ and value.size == 1:
        return bool(value.item())
    if _is_tensor(value) and str(value.dtype) == "torch.bool" and value.numel() == 1:
        return bool(value.item())
    raise TypeError(
        "Sem referência, check espera um booleano (True ou False); recebi "
        f"{type(value).__name__}. Para comparar valores, passe a referência: "
        "check('descrição', valor, referência)."
    )


def _is_tensor(value) -> bool:
    return hasattr(value, "detach") and hasattr(value, "numel") and hasattr(value, "dtype")


def _to_array(value) -> np.ndarray:
    """NumPy de ``value``; tensores vão para a CPU e, se de ponto flutuante, para float64."""
    if _is_tensor(value):
        tensor = value.detach().cpu()
        if tensor.is_floating_point():
            tensor = tensor.double()  # bf16 e fp16 não têm tipo no NumPy
        return tensor.numpy()
    if isinstance(value, (list, tuple)) and any(_is_tensor(v) for v in value):
        return np.asarray([_to_array(v) for v in value])
    return np.asarray(value)


def _compare(actual, expected, *, atol: float, rtol: float) -> tuple[bool, str]:
    """(confere?, detalhe entre parênteses) de uma comparação com referência."""
    if atol < 0 or rtol < 0:
        raise ValueError(
            f"As tolerâncias não podem ser negativas; recebi atol={atol}, rtol={rtol}."
        )
    try:
        a, b = _to_array(actual), _to_array(expected)
    except ValueError:  # listas irregulares: só a igualdade do Python faz sentido
        return _verdict_equal(actual == expected, actual, expected)
    if a.shape != b.shape:
        return False, f"formas diferentes: {a.shape} e {b.shape}"
    if a.size == 0:
        raise ValueError(
            "Nada a comparar: os dois valores estão vazios. Confira se a conta produziu "
            "algum elemento antes de chamar check."
        )
    kinds = a.dtype.kind + b.dtype.kind
    if set(kinds) <= set("biu"):
        return _compare_integers(a, b)
    if set(kinds) <= set("biufc"):
        return _compare_close(a, b, atol=atol, rtol=rtol)
    if "O" in kinds:  # objetos do Python (dicionários, misturas): a igualdade deles
        return _verdict_equal(actual == expected, actual, expected)
    return _verdict_equal(np.array_equal(a, b), actual, expected)  # textos


def _compare_close(a: np.ndarray, b: np.ndarray, *, atol: float, rtol: float) -> tuple[bool, str]:
    if np.isnan(a).any() or np.isnan(b).any():
        return False, "NaN nos valores"
    with np.errstate(invalid="ignore"):
        delta = np.where(a == b, 0.0, np.abs(a - b))  # o mesmo infinito dos dois lados: Δ = 0
    worst = float(delta.max())
    scale = np.where(np.isfinite(b), np.abs(b), 0.0)  # um infinito não alarga a tolerância
    if bool(np.all(delta <= atol + rtol * scale)):
        return True, f"máx |Δ| {_short(worst)}"
    limit = f"atol {_short(atol)}" + (f" + rtol {_short(rtol)}·|ref|" if rtol else "")
    return False, f"máx |Δ| {_short(worst)} > {limit}"


def _compare_integers(a: np.ndarray, b: np.ndarray) -> tuple[bool, str]:
    if a.ndim == 0:  # np.argwhere de um escalar não diz nada: compara direto
        if a.item() == b.item():
            return True, "idênticos"
        return False, f"{a.item()} ≠ {b.item()}"
    different = np.argwhere(a != b)
    if len(different) == 0:
        return True, "idênticos"
    first = tuple(int(i) for i in different[0])
    return False, (
        f"diferem em {len(different)} de {a.size} valores; na posição {first}: "
        f"{a[first].item()} ≠ {b[first].item()}"
    )


def _verdict_equal(equal, actual, expected) -> tuple[bool, str]:
    if isinstance(equal, np.ndarray):
        equal = equal.size > 0 and bool(equal.all())
    if bool(equal):
        return True, "idênticos"
    return False, f"{_clip(actual)} ≠ {_clip(expected)}"


def _short(x: float) -> str:
    """Um algarismo significativo: 2e-07; zero vira 0; infinito, inf."""
    if x == 0:
        return "0"
    if not np.isfinite(x):
        return "inf"
    return f"{x:.0e}"


def _clip(value) -> str:
    text = repr(value)
    return text if len(text) <= _SHOW else text[: _SHOW - 1] + "…"
