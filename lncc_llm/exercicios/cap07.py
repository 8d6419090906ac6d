"""Exercícios conferíveis do Capítulo 7, primeira parte (o piso do posto 1 e a faixa da quantização)."""
from __future__ import annotations

import numpy as np

from .comparar import Incorreto, como_array
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio

NOTEBOOK = "cap07_treinamento_otimizacao"
_CONFIGURACAO = ("4bd5df88", "f7f479f8")          # setup_notebook e o modelo de três classes (torch, F, check)


# ---------------------------------------------------------------- exercício 1: o piso do posto 1
def _valores_singulares(alvo: np.ndarray) -> np.ndarray:
    return np.linalg.svd(alvo, compute_uv=False)


def _posto_2(sv: np.ndarray) -> bool:
    return bool(sv[1] > 1e-8 * sv[0])


def _alvo(ns) -> np.ndarray:
    """O alvo do leitor, se ele for uma matriz 3 × 2 de posto 2; senão os erros comuns não se aplicam (com um
    alvo de posto 1, o piso certo é zero) e a conferência diz o que falta."""
    alvo = como_array(ns["target"])
    if alvo is None or alvo.shape != (3, 2) or not _posto_2(_valores_singulares(alvo.astype(np.float64))):
        raise ValueError("o alvo não é uma matriz 3 × 2 de posto 2")
    return alvo.astype(np.float64)


def _conferir_ex1(valores, ns):
    alvo = como_array(valores["target"])
    if alvo is None or alvo.shape != (3, 2):
        raise Incorreto("`target` deveria ser uma matriz 3 × 2, do formato de `D`.")
    alvo = alvo.astype(np.float64)
    d = como_array(ns.get("D"))
    if d is not None and d.shape == alvo.shape and np.allclose(alvo, d):
        raise Incorreto("`target` é o próprio `D` da seção 7.4.8: escolha outra matriz de posto 2.")
    sv = _valores_singulares(alvo)
    if not _posto_2(sv):
        raise Incorreto("`target` tem posto 1 (ou 0): nesta parte, o alvo precisa de posto 2, com colunas que não "
                        "sejam proporcionais; o alvo de posto 1 fica para o fim do exercício.")
    gap = como_array(valores["gap"])
    if gap is None or gap.size != 1:
        raise Incorreto("`gap` deveria ser um número: ‖BA − target‖² no fim da descida.")
    gap, piso = float(gap.item()), float(sv[1] ** 2)
    norma2 = float((alvo ** 2).sum())
    if piso < 1e-3 * norma2:
        raise Incorreto("as colunas do seu `target` são quase proporcionais (σ₂² é menos de 0,1 % de "
                        "‖target‖²): escolha um alvo de posto 2 bem definido.")
    if abs(gap - piso) > 1e-4 * norma2:
        if gap > piso:
            raise Incorreto("`gap` ficou acima de σ₂² do seu alvo: a descida ainda não chegou ao piso "
                            "(dê mais passos ou confira a taxa).")
        raise Incorreto("`gap` ficou abaixo de σ₂² do seu alvo, e nenhum produto BA de posto 1 chega lá: "
                        "confira se `B` tem uma coluna e `A` uma linha.")


def _gap_zero(ns) -> dict:
    _alvo(ns)
    return {"gap": 0.0}


ex1 = Exercicio(
    "cap07.ex1", "o piso do posto 1 para um alvo à sua escolha", ("target", "gap"),
    dicas=(
        "Reaproveite o laço da seção 7.4.8 com o seu alvo no lugar de `D`, mantendo o adaptador de posto 1: "
        "`B` com uma coluna (3 × 1) e `A` com uma linha (1 × 2).",
        "Uma matriz 3 × 2 tem posto 2 quando as suas duas colunas não são proporcionais "
        "(`torch.linalg.matrix_rank` confere). Guarde em `gap` o `((B @ A - target) ** 2).sum().item()` do "
        "fim da descida.",
        "Compare com `torch.linalg.svdvals(target)[1] ** 2`; se o seu `gap` ficou acima, dê mais passos. No fim, "
        "um alvo de posto 1 (`torch.outer(u, v)`) leva o piso a zero.",
    ),
    conferir=_conferir_ex1,
    erros_comuns=(
        ErroComum("o erro chegou a zero, o que um adaptador de posto 1 não consegue com um alvo de posto 2: "
                  "`B` e `A` ficaram com posto 2? `B` é 3 × 1 e `A` é 1 × 2.", _gap_zero),
        ErroComum("esse é ‖target‖², o erro com `B` = 0, antes do primeiro passo: guarde o `gap` do fim da descida.",
                  lambda ns: {"gap": float((_alvo(ns) ** 2).sum())}),
        ErroComum("esse é ‖BA − target‖, sem o quadrado: o piso σ₂² vale para a soma dos quadrados.",
                  lambda ns: {"gap": float(_valores_singulares(_alvo(ns))[1])}),
    ),
    inicio="""
target = ____       # a sua matriz 3 × 2 de posto 2 (um tensor float64)
gap = ____          # ‖BA − target‖² no fim da descida, com B 3 × 1 e A 1 × 2 (um número)
""",
    contexto=celulas_do_notebook(NOTEBOOK, _CONFIGURACAO),
)


# ---------------------------------------------------------------- exercício 2: quantização e faixa
FAIXAS = (0.15, 0.20, 0.30)


def _quantizar(w, c: float, niveis: float = 7, cortar: bool = True):
    passo = c / niveis
    return passo * np.round((np.clip(w, -c, c) if cortar else w) / passo)


def _medias(ns, niveis: float = 7, cortar: bool = True, absoluto: bool = True) -> list[float]:
    w = como_array(ns["W_new"]).astype(np.float64)
    medias = []
    for c in FAIXAS:
        erro = _quantizar(w, c, niveis, cortar) - w
        medias.append(float((np.abs(erro) if absoluto else erro).mean()))
    return medias


def _esperado_ex2(ns):
    medias = _medias(ns)
    return {"mean_errors": medias, "best_c": FAIXAS[int(np.argmin(medias))],
            "q_outside": float(_quantizar(0.25, 0.20))}


ex2 = Exercicio(
    "cap07.ex2", "o erro médio da quantização em três faixas", ("mean_errors", "best_c", "q_outside"),
    dicas=(
        "Escreva uma função `Q(w, c)` com a grade da seção 7.4.9: passo Δ = c/7 e os níveis −7…7, e o peso "
        "levado ao nível mais próximo.",
        "O erro de cada peso é `(Q(W_new, c) - W_new).abs()`; a média dos 6 valores dá um número por faixa, na "
        "ordem c = 0,15, 0,20 e 0,30.",
        "A grade não tem nível além de ±c: um peso de fora é cortado em [−c, c] (`clamp`) antes do "
        "arredondamento, e o erro dele deixa de ser limitado por Δ/2.",
    ),
    esperado=_esperado_ex2,
    erros_comuns=(
        ErroComum("sem o corte em [−c, c], com c = 0,15 os pesos 0,163 e 0,20 caem em níveis além de 7, que a "
                  "grade de 4 bits não tem: use `clamp(-c, c)` antes de arredondar.",
                  lambda ns: {"mean_errors": _medias(ns, cortar=False)}),
        ErroComum("sem o corte em [−c, c], o peso 0,25 cai num nível além de 7, que a grade de 4 bits não tem: "
                  "com c = 0,20 ele vira 0,20, o nível mais alto.",
                  lambda ns: {"q_outside": float(_quantizar(0.25, 0.20, cortar=False))}),
        ErroComum("o passo ficou em 2c/15 (16 níveis espalhados pela faixa); a grade da seção 7.4.9 tem os 15 "
                  "níveis −7…7, com Δ = c/7.",
                  lambda ns: {"mean_errors": _medias(ns, niveis=7.5)}),
        ErroComum("faltou o valor absoluto: na média de ε com sinal, erros para cima e para baixo se cancelam.",
                  lambda ns: {"mean_errors": _medias(ns, absoluto=False)}),
    ),
    inicio="""
mean_errors = ____  # a média de |ε| nos 6 pesos de W_new, para c = 0,15, 0,20 e 0,30 (uma lista de 3 números)
best_c = ____       # a faixa c que erra menos em média (um número)
q_outside = ____    # Q(0,25) com c = 0,20: o peso de fora da faixa, quantizado (um número)
""",
    contexto=celulas_do_notebook(NOTEBOOK, _CONFIGURACAO + ("5e6e659e", "ac653a5d")),
)
