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

import math
from dataclasses import dataclass

import numpy as np

from .formatting import fmt_int

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
      ``(idênticos)``; ``atol`` e ``rtol`` não se aplicam a eles.

    Aceita tensores do PyTorch (em qualquer dispositivo e tipo, inclusive bf16), arrays do NumPy,
    números, textos, e listas, tuplas e dicionários deles, conferidos parte a parte (a linha mostra
    o maior desvio de todas as partes). As formas têm de ser iguais (não há *broadcasting*: um
    escalar não confere com um vetor); booleanos não conferem com números, nem textos com números;
    ``NaN`` nunca confere; infinitos conferem só com o mesmo infinito; dois valores vazios da mesma
    forma conferem, e a linha diz ``(os dois vazios)``. Não devolve nada, para não imprimir um
    valor a mais no fim de uma célula.
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
        _check_tolerances(atol, rtol)
        result = _compare(actual, expected, atol, rtol)
        passed, detail = result.passed, result.summary()
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


def _check_tolerances(atol, rtol) -> None:
    for name, value in (("atol", atol), ("rtol", rtol)):
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not is_number or not math.isfinite(value) or value < 0:
            raise ValueError(
                f"{name} deve ser um número finito e não negativo, como 1e-5; recebi {value!r}."
            )


@dataclass
class _Result:
    """O resultado de uma comparação: confere?, o motivo da falha, o maior desvio, se vazia."""

    passed: bool
    reason: str = ""
    delta: float | None = None  # maior |Δ| das partes de ponto flutuante; None se exata
    empty: bool = False

    def summary(self) -> str:
        if not self.passed:
            return self.reason
        if self.delta is not None:
            return f"máx |Δ| {_one_digit(self.delta)}"
        return "os dois vazios" if self.empty else "idênticos"


def _is_tensor(value) -> bool:
    return hasattr(value, "detach") and hasattr(value, "numel") and hasattr(value, "dtype")


def _tensor_to_numpy(tensor) -> np.ndarray:
    """NumPy de um tensor de qualquer dispositivo; bf16 e fp16 viram float64 (sem bf16 no NumPy)."""
    tensor = tensor.detach().cpu()
    if tensor.is_complex():
        return tensor.resolve_conj().numpy().astype(np.complex128)
    if tensor.is_floating_point():
        tensor = tensor.double()
    return tensor.numpy()


_PLAIN = (bool, int, float, complex, str, bytes, np.generic, type(None))


def _leaf(value) -> np.ndarray | None:
    """Um array do NumPy se ``value`` é um valor simples (número, texto, tensor, array, ou lista
    deles sem partes compostas); ``None`` se for preciso comparar parte a parte."""
    if _is_tensor(value):
        return _tensor_to_numpy(value)
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, _PLAIN):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        kinds = set()
        if not _collect_plain_kinds(value, kinds):
            return None
        try:
            if "texto" in kinds and len(kinds) > 1:  # ["a", 1]: o NumPy viraria tudo texto
                return np.array(value, dtype=object)
            return np.asarray(value)
        except ValueError:  # listas irregulares: parte a parte
            return None
    return np.asarray(value, dtype=object)  # outro objeto: a igualdade dele


def _collect_plain_kinds(value, kinds: set) -> bool:
    for item in value:
        if isinstance(item, (list, tuple)):
            if not _collect_plain_kinds(item, kinds):
                return False
        elif isinstance(item, (str, bytes, np.str_)):
            kinds.add("texto")
        elif isinstance(item, _PLAIN):
            kinds.add("outro")
        else:  # tensor, array, dicionário, objeto: parte a parte
            return False
    return True


def _parts(value) -> list | None:
    """As partes ao longo do primeiro eixo, para comparar uma lista de tensores com um tensor."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if (_is_tensor(value) or isinstance(value, np.ndarray)) and value.ndim >= 1:
        return list(value)
    return None


def _compare(actual, expected, atol: float, rtol: float) -> _Result:
    for value in (actual, expected):
        if hasattr(value, "__next__"):
            raise TypeError(
                "check não compara geradores nem iteradores (eles se esgotam ao serem lidos); "
                "passe uma lista: check('…', list(valores), referência)."
            )
    if isinstance(actual, dict) or isinstance(expected, dict):
        if not (isinstance(actual, dict) and isinstance(expected, dict)):
            return _Result(False, f"tipos diferentes: {type(actual).__name__} e "
                                  f"{type(expected).__name__}")
        if set(actual) != set(expected):
            return _Result(False, f"chaves diferentes: {_clip(sorted(map(repr, actual)))} e "
                                  f"{_clip(sorted(map(repr, expected)))}")
        return _combine([(f"[{key!r}]", _compare(actual[key], expected[key], atol, rtol))
                         for key in expected])
    a, b = _leaf(actual), _leaf(expected)
    if a is not None and b is not None:
        return _compare_arrays(a, b, atol, rtol)
    parts_a, parts_b = _parts(actual), _parts(expected)
    if parts_a is None or parts_b is None:
        raise TypeError(
            f"check não sabe comparar {type(actual).__name__} com {type(expected).__name__}; "
            "confira cada parte separadamente."
        )
    if len(parts_a) != len(parts_b):
        return _Result(False, f"comprimentos diferentes: {len(parts_a)} e {len(parts_b)}")
    return _combine([(f"[{i}]", _compare(x, y, atol, rtol))
                     for i, (x, y) in enumerate(zip(parts_a, parts_b))])


def _combine(labelled: list[tuple[str, _Result]]) -> _Result:
    """Junta as partes: a primeira falha, com o caminho dela; senão o maior desvio de todas."""
    for label, result in labelled:
        if not result.passed:
            reason = result.reason
            return _Result(False, label + (reason if reason.startswith("[") else f": {reason}"))
    deltas = [r.delta for _, r in labelled if r.delta is not None]
    return _Result(True, delta=max(deltas) if deltas else None,
                   empty=bool(labelled) and all(r.empty for _, r in labelled))


def _compare_arrays(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> _Result:
    if a.shape != b.shape:
        return _Result(False, f"formas diferentes: {a.shape} e {b.shape}")
    if a.size == 0:
        return _Result(True, empty=True)
    ka, kb = a.dtype.kind, b.dtype.kind
    numbers, texts = set("iufc"), set("US")
    if (ka == "b") != (kb == "b") and {ka, kb} - {"b"} <= numbers:
        return _Result(False, "tipos diferentes: booleanos e números")
    if (ka in texts and kb in numbers | {"b"}) or (kb in texts and ka in numbers | {"b"}):
        return _Result(False, "tipos diferentes: textos e números")
    if ka in "biu" and kb in "biu":
        return _compare_integers(a, b)
    if ka in numbers and kb in numbers:
        return _compare_close(a, b, atol, rtol)
    return _compare_objects(a, b)


def _compare_close(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> _Result:
    dtype = np.complex128 if "c" in a.dtype.kind + b.dtype.kind else np.float64
    a, b = a.astype(dtype), b.astype(dtype)
    if np.isnan(a).any() or np.isnan(b).any():
        return _Result(False, "NaN nos valores")
    with np.errstate(invalid="ignore"):
        delta = np.where(a == b, 0.0, np.abs(a - b))  # o mesmo infinito dos dois lados: Δ = 0
    worst = float(delta.max())
    scale = np.where(np.isfinite(b), np.abs(b), 0.0)  # um infinito não alarga a tolerância
    if bool(np.all(delta <= atol + rtol * scale)):
        return _Result(True, delta=worst)
    limit = f"atol {atol:g}" + (f" + rtol {rtol:g}·|ref|" if rtol else "")
    return _Result(False, f"máx |Δ| {_two_digits(worst)} > {limit}")


def _compare_integers(a: np.ndarray, b: np.ndarray) -> _Result:
    if a.ndim == 0:  # np.argwhere de um escalar não diz nada: compara direto
        if a.item() == b.item():
            return _Result(True)
        return _Result(False, f"{_number(a.item())} ≠ {_number(b.item())}")
    different = np.argwhere(a != b)
    if len(different) == 0:
        return _Result(True)
    first = tuple(int(i) for i in different[0])
    return _Result(False, (
        f"diferem em {fmt_int(len(different))} de {fmt_int(a.size)} valores; na posição {first}: "
        f"{_number(a[first].item())} ≠ {_number(b[first].item())}"
    ))


def _compare_objects(a: np.ndarray, b: np.ndarray) -> _Result:
    try:
        equal = a == b
        equal = bool(np.all(equal))
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"check não conseguiu comparar esses valores ({err}); confira cada parte separadamente."
        ) from None
    if equal:
        return _Result(True)
    shown_a = a.item() if a.ndim == 0 else a.tolist()
    shown_b = b.item() if b.ndim == 0 else b.tolist()
    return _Result(False, f"{_clip(shown_a)} ≠ {_clip(shown_b)}")


def _number(value) -> str:
    return fmt_int(value) if isinstance(value, int) and not isinstance(value, bool) else repr(value)


def _one_digit(x: float) -> str:
    """Um algarismo significativo, para a linha de ✓: 2e-07; zero vira 0."""
    return "0" if x == 0 else f"{x:.0e}"


def _two_digits(x: float) -> str:
    """Dois algarismos, para a linha de ✗: 1.0e-05 > atol 1e-05 não parece contradição."""
    return "inf" if not np.isfinite(x) else f"{x:.1e}"


def _clip(value) -> str:
    text = repr(value)
    return text if len(text) <= _SHOW else text[: _SHOW - 1] + "…"
