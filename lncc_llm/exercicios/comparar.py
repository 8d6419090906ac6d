"""Comparação de respostas e diagnóstico dos erros genéricos, sem importar o torch.

Um tensor é reconhecido pelo jeito (tem ``detach`` e ``cpu``) e vira ``numpy``; números, listas,
tuplas e dicionários também. A mensagem de uma resposta errada descreve a resposta do leitor (formato,
fator, transposição, log no lugar de probabilidade), nunca o valor esperado.
"""
from __future__ import annotations

import math

import numpy as np


class Incorreto(Exception):
    """A resposta foi avaliada e está errada; a mensagem é o diagnóstico para o leitor."""


def como_array(valor):
    """Converte tensor, número, lista ou tupla num ``np.ndarray`` (``None`` se não der)."""
    if hasattr(valor, "detach") and hasattr(valor, "cpu"):
        valor = valor.detach().cpu()
        if str(getattr(valor, "dtype", "")) in ("torch.bfloat16", "torch.float16"):
            valor = valor.float()
        valor = valor.numpy()
    if isinstance(valor, (bool, int, float, np.number, np.ndarray, list, tuple)):
        try:
            arr = np.asarray(valor)
        except (ValueError, TypeError):
            return None
        return arr if arr.dtype != object else None
    return None


def _descricao_tipo(valor) -> str:
    if valor is None:
        return "None"
    nome = type(valor).__name__
    return "tensor" if nome == "Tensor" else nome


def comparar(obtido, esperado, *, rtol: float = 1e-4, atol: float = 1e-6, nome: str = "a resposta") -> None:
    """Não faz nada se ``obtido`` concorda com ``esperado``; senão levanta :class:`Incorreto` com o diagnóstico.

    Ver Introdução, "Exercícios que conferem a sua resposta".
    """
    if obtido is None and esperado is not None:
        raise Incorreto(f"{nome} é None: faltou um `return`, ou a variável não recebeu valor?")
    if isinstance(esperado, dict):
        if not isinstance(obtido, dict):
            raise Incorreto(f"{nome} deveria ser um dicionário, e é {_descricao_tipo(obtido)}.")
        faltam = [k for k in esperado if k not in obtido]
        if faltam:
            raise Incorreto(f"{nome}: faltam as chaves {', '.join(map(repr, faltam))}.")
        for chave in esperado:
            comparar(obtido[chave], esperado[chave], rtol=rtol, atol=atol, nome=f"{nome}[{chave!r}]")
        return
    if isinstance(esperado, str):
        if not isinstance(obtido, str):
            raise Incorreto(f"{nome} deveria ser um texto (str), e é {_descricao_tipo(obtido)}.")
        if obtido.strip() != esperado.strip():
            raise Incorreto(f"{nome} não é o texto esperado.")
        return
    if isinstance(esperado, (list, tuple)) and (any(isinstance(x, (str, dict)) for x in esperado)
                                                or como_array(esperado) is None):   # ou partes de formatos diferentes
        if not isinstance(obtido, (list, tuple)) or len(obtido) != len(esperado):
            raise Incorreto(f"{nome} deveria ser uma lista com {len(esperado)} itens.")
        for i, (a, b) in enumerate(zip(obtido, esperado)):
            comparar(a, b, rtol=rtol, atol=atol, nome=f"{nome}[{i}]")
        return
    b = como_array(esperado)
    a = como_array(obtido)
    if b is None:
        if obtido != esperado:
            raise Incorreto(f"{nome} não é o esperado.")
        return
    if a is None:
        raise Incorreto(f"{nome} deveria ser um número ou um tensor, e é {_descricao_tipo(obtido)}.")
    if b.dtype.kind == "b" and a.dtype.kind != "b" and hasattr(obtido, "detach"):
        # uma máscara de floats: `masked_fill` e `torch.where` pedem booleanos (o erro clássico das máscaras)
        raise Incorreto(f"{nome} é um tensor de {str(obtido.dtype).removeprefix('torch.')}, e deveria ser "
                        "booleano (`dtype=torch.bool`): uma máscara de True/False.")
    if a.shape != b.shape:
        if a.ndim == 2 and a.shape == b.shape[::-1] and _perto(a.T, b, rtol, atol):
            raise Incorreto(f"{nome} está transposta: formato {a.shape} no lugar de {b.shape}.")
        raise Incorreto(f"{nome} tem formato {tuple(a.shape)}, e o esperado é {tuple(b.shape)}.")
    if b.dtype.kind in "biu" and a.dtype.kind in "biu":
        if not np.array_equal(a, b):
            raise Incorreto(_quanto_errou(a, b, nome, rtol, atol, inteiro=True))
        return
    if a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
        raise Incorreto(f"{nome} deveria ser numérica.")
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    if np.isnan(a).any() and not np.isnan(b).any():
        raise Incorreto(f"{nome} tem NaN: alguma conta dividiu zero por zero ou tirou log de um número negativo.")
    if _perto(a, b, rtol, atol):
        return
    raise Incorreto(_diagnostico(a, b, rtol, atol, nome))


def _perto(a, b, rtol, atol) -> bool:
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def _diagnostico(a, b, rtol, atol, nome) -> str:
    if a.size == 1:                      # um número: um "fator" ou um "log" entregariam a resposta
        return _quanto_errou(a, b, nome, rtol, atol)
    if a.ndim == 2 and a.shape[0] == a.shape[1] and _perto(a.T, b, rtol, atol):
        return f"{nome} está transposta (linhas no lugar das colunas)."
    with np.errstate(all="ignore"):
        if (b > 0).all() and _perto(np.exp(a), b, rtol, atol):
            return f"{nome} parece estar em log: aplique exp para voltar à probabilidade."
        if (a > 0).all() and _perto(np.log(a), b, rtol, atol):
            return f"{nome} parece ser uma probabilidade onde se pedia o log (ou o contrário)."
        nz = np.abs(b) > atol
        if nz.any() and (np.abs(a[nz]) > 0).all():
            razao = a[nz] / b[nz]
            r = float(np.median(razao))
            if (abs(r - 1) > 1e-3 and np.allclose(razao, r, rtol=1e-3)
                    and np.allclose(a[~nz], 0, atol=atol * max(1.0, abs(r)))):
                return f"{nome} difere da resposta certa por um fator constante de {_fmt(r)}."
    return _quanto_errou(a, b, nome, rtol, atol)


def _quanto_errou(a, b, nome, rtol, atol, inteiro=False) -> str:
    if a.size == 1:
        return f"{nome} ({_fmt(a.item())}) não é o valor esperado."
    errados = int((a != b).sum()) if inteiro else int((~np.isclose(a, b, rtol=rtol, atol=atol)).sum())
    return f"{nome}: {errados} de {a.size} elementos diferem do esperado."


def _fmt(x: float) -> str:
    if isinstance(x, (int, np.integer)) or (float(x).is_integer() and abs(x) < 1e12):
        return str(int(x))
    if x == 0 or not math.isfinite(x):
        return str(x)
    return f"{x:.4g}"
