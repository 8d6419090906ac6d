"""Exercícios conferíveis do Capítulo 7, primeira parte: o gradiente de uma camada linear com softmax (núcleo),
o piso do posto 1 e a faixa da quantização."""
from __future__ import annotations

import numpy as np

from .comparar import Incorreto, como_array
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap07_treinamento_otimizacao"
_CONFIGURACAO = ("4bd5df88", "f7f479f8")          # setup_notebook e o modelo de três classes (torch, F, check)


# ---------------------------------------------------------------- exercício 1 (núcleo): ∇W = (p − e_y)xᵀ
def _entradas_ex1(ns):
    """Camadas e entradas sorteadas que o notebook não mostra: um exemplo só (3 × 2 e 7 × 5), um lote de 6 e um
    de 16 (a perda é a média), e um exemplo com logits da ordem de 1 000, em que `exp` estoura até em float64
    (a softmax precisa ser a estável, que subtrai o maior logit)."""
    import torch

    g = torch.Generator().manual_seed(7_45)

    def sorteio(d, k, n=None, escala=1.0):
        W = escala * torch.randn(d, k, generator=g, dtype=torch.float64)
        if n is None:
            return W, torch.randn(k, generator=g, dtype=torch.float64), int(torch.randint(0, d, (1,), generator=g))
        return W, torch.randn(n, k, generator=g, dtype=torch.float64), torch.randint(0, d, (n,), generator=g)
    return [sorteio(3, 2), sorteio(7, 5), sorteio(4, 3, n=6), sorteio(10, 8, n=16), sorteio(5, 4, escala=400.0)]


def _grad_autograd(W, x, y):
    """A referência: o autograd do PyTorch sobre ``F.cross_entropy`` (média no lote)."""
    import torch
    import torch.nn.functional as F

    W = W.detach().clone().requires_grad_(True)
    X, Y = (x[None], torch.tensor([y])) if x.ndim == 1 else (x, torch.as_tensor(y))
    with torch.enable_grad():
        F.cross_entropy(X @ W.T, Y).backward()
    return W.grad


def _grad_errado(tipo):
    def gradiente(W, x, y):
        import torch

        X, Y = (x[None], torch.tensor([y])) if x.ndim == 1 else (x, torch.as_tensor(y))
        P = torch.softmax(X @ W.T, dim=-1)
        E = torch.nn.functional.one_hot(Y, W.shape[0]).to(W.dtype)
        if tipo == "sinal":
            return (E - P).T @ X / len(Y)
        if tipo == "sem e_y":
            return P.T @ X / len(Y)
        if tipo == "soma":
            return (P - E).T @ X
        return (P - E).T @ X / len(Y)
    return gradiente


ex1 = Exercicio(
    "cap07_treinamento_otimizacao.ex1", "o gradiente de uma camada linear com softmax", ("my_linear_ce_grad",),
    dicas=(
        "Comece pelas probabilidades: `p = torch.softmax(W @ x, dim=0)` para um exemplo. A derivada da perda em "
        "relação a cada logit é `p - e_y`, com `e_y` o vetor com 1 na classe certa (`F.one_hot`, ou uma cópia "
        "de `p` com 1 subtraído na posição `y`).",
        "O gradiente em `W` é o produto externo de `p - e_y` (d) com `x` (k): `torch.outer(p - e_y, x)`, uma "
        "matriz d × k, do formato de `W`.",
        "Para um lote `x` (n, k), `y` (n,): `P = torch.softmax(x @ W.T, dim=-1)` dá uma linha por exemplo, e "
        "`(P - E).T @ x` soma os n produtos externos; divida por n, porque o `F.cross_entropy` tira a média.",
    ),
    esperado=lambda ns: {"my_linear_ce_grad": _grad_autograd},
    entradas=_entradas_ex1,
    erros_comuns=(
        ErroComum("o sinal está trocado: a derivada da perda em relação ao logit é `p − e_y` (a classe certa tem "
                  "derivada negativa, e o passo −η∇ a faz subir).",
                  lambda ns: {"my_linear_ce_grad": _grad_errado("sinal")}),
        ErroComum("faltou o `− e_y`: a derivada de −log p_y em relação aos logits é `p − e_y`, não `p`.",
                  lambda ns: {"my_linear_ce_grad": _grad_errado("sem e_y")}),
        ErroComum("no lote, os produtos externos foram somados: o `F.cross_entropy` tira a média da perda, e o "
                  "gradiente também se divide por n.",
                  lambda ns: {"my_linear_ce_grad": _grad_errado("soma")}),
    ),
    proibidas=("torch.autograd.grad", "torch.autograd.backward", "torch.Tensor.backward", "torch.func.grad",
               "torch.func.vjp", "torch.func.jacrev", "torch.func.jacfwd", "torch.autograd.functional.jacobian",
               "torch.autograd.functional.vjp", "torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss",
               "lncc_llm.softmax_grad.linear_cross_entropy_grad"),
    tipo="nucleo",
    inicio="""
def my_linear_ce_grad(W, x, y):
    \"\"\"∇W da entropia cruzada de z = W x (seção 7.4.5): x (k,) com y inteiro, ou um lote x (n, k) com y (n,),
    e então a média dos gradientes, como no F.cross_entropy. Devolve uma matriz do formato de W.\"\"\"
    return ____
""",
    seguir="linear_cross_entropy_grad = my_linear_ce_grad",
    contexto=celulas_do_notebook(NOTEBOOK, _CONFIGURACAO),
)


# ---------------------------------------------------------------- exercício 2: o piso do posto 1
def _entradas_ex2(ns):
    """Alvos sorteados com semente própria, que o notebook nunca mostra: um 3 × 2 de posto 2, um 3 × 2 de
    posto 1 (o piso vai a zero) e um 4 × 3 (o piso é σ₂² + σ₃², e uma função presa a 3 × 2 falha), cada um
    com um número de passos diferente do padrão; e, por fim, o 3 × 2 com só 3 passos, que não chegam ao
    piso (uma função que pula para a resposta, sem descer, falha aí)."""
    import torch

    gen = torch.Generator().manual_seed(7_2026)
    posto2 = 0.05 * torch.randn(3, 2, generator=gen, dtype=torch.float64)
    posto1 = torch.outer(0.05 * torch.randn(3, generator=gen, dtype=torch.float64),
                         torch.randn(2, generator=gen, dtype=torch.float64))
    maior = 0.05 * torch.randn(4, 3, generator=gen, dtype=torch.float64)
    return [(posto2, 2000), (posto1, 2500), (maior, 3000), (posto2, _PASSOS_CURTOS)]


_PASSOS_CURTOS = 3


def _piso(alvo: np.ndarray) -> float:
    """Eckart–Young: o menor ‖BA − alvo‖² com BA de posto 1 é a soma dos σᵢ² depois do primeiro."""
    sv = np.linalg.svd(alvo, compute_uv=False)
    return float((sv[1:] ** 2).sum())


def _matriz(valor, nome, forma):
    arr = como_array(valor)
    if arr is None or arr.shape != forma:
        raise Incorreto(f"`{nome}` deveria ser uma matriz {forma[0]} × {forma[1]} (com o alvo m × n do teste, "
                        f"{'B é m × 1' if nome == 'B' else 'A é 1 × n'}; aqui m = "
                        f"{forma[0] if nome == 'B' else '…'} e n = {forma[1] if nome == 'A' else '…'}).")
    return arr.astype(np.float64)


def _conferir_ex2(valores, ns):
    saidas = valores["fit_rank1"]
    for (alvo_t, passos), saida in zip(_entradas_ex2(ns), saidas):
        alvo = alvo_t.numpy()
        m, n = alvo.shape
        if not isinstance(saida, (tuple, list)) or len(saida) != 3:
            raise Incorreto("`fit_rank1` deveria devolver três coisas: `(B, A, gaps)`.")
        b, a, gaps = saida
        if como_array(b) is not None and como_array(b).shape == (m, 2):
            raise Incorreto("`B` tem duas colunas: o adaptador deste exercício tem posto 1, `B` (m × 1) e "
                            "`A` (1 × n).")
        b, a = _matriz(b, "B", (m, 1)), _matriz(a, "A", (1, n))
        if isinstance(gaps, (list, tuple)) and any(getattr(g, "requires_grad", False) for g in gaps):
            raise Incorreto("`gaps` guarda tensores que ainda carregam o grafo do gradiente: guarde o número, "
                            "`gap.item()`, de cada passo.")
        curva = como_array(gaps)
        if curva is None or curva.ndim != 1:
            raise Incorreto("`gaps` deveria ser a lista de ‖BA − alvo‖² de cada passo da descida, um número "
                            "por passo.")
        if curva.size != passos:
            raise Incorreto(f"com `steps={passos}`, `gaps` tem {curva.size} valores: dê exatamente `steps` "
                            "passos (use o argumento `steps` no laço) e guarde um valor por passo.")
        norma2, piso = float((alvo ** 2).sum()), _piso(alvo)
        if abs(curva[0] - norma2) > 1e-6 * max(norma2, 1e-12):
            if abs(curva[0] ** 2 - norma2) < 1e-6 * norma2:
                raise Incorreto("`gaps` guarda ‖BA − alvo‖, sem o quadrado: o piso σ₂² vale para a soma dos "
                                "quadrados.")
            raise Incorreto("o primeiro valor de `gaps` deveria ser ‖alvo‖²: `B` começa em zero, como no LoRA, e "
                            "o primeiro passo mede o erro antes de qualquer atualização.")
        final = float(((b @ a - alvo) ** 2).sum())
        tolerancia = 1e-4 * norma2
        if final < piso - tolerancia:
            raise Incorreto("o seu BA chegou abaixo do piso de Eckart–Young, o que nenhum produto de posto 1 "
                            "consegue: confira o formato de `B` e `A`.")
        if passos == _PASSOS_CURTOS:
            if final < piso + 0.2 * norma2:
                raise Incorreto(f"com só `steps={passos}`, o seu BA já está no piso: {passos} passos do Adam com "
                                "lr=0,01, partindo de B = 0, não chegam lá. A função deve descer o gradiente "
                                "passo a passo, sem calcular a resposta de outro jeito.")
            continue
        if final > piso + tolerancia:
            raise Incorreto(f"com `steps={passos}`, a descida ainda não chegou ao piso em um dos alvos de teste: "
                            "confira a taxa do Adam (lr=0,01) e a inicialização (A pequeno, B em zero).")
        if abs(curva[-1] - final) > 0.05 * norma2:
            raise Incorreto("o último valor de `gaps` não é o erro do `B` e do `A` devolvidos: guarde o erro de "
                            "cada passo da mesma descida.")


ex2 = Exercicio(
    "cap07_treinamento_otimizacao.ex2", "a descida de um adaptador de posto 1 até o piso", ("fit_rank1",),
    dicas=(
        "Copie o laço da seção 7.4.8 para dentro da função, com `rank = 1` e `target` no lugar de `D`: "
        "`A_fit` (1 × n) começa pequeno e aleatório, `B_fit` (m × 1) começa em zero, e o Adam anda `steps` "
        "passos com `lr=0.01`.",
        "Tire m e n de `target.shape` (o verificador usa alvos de outros formatos), ande exatamente `steps` "
        "passos (ele pede 3, 2000, 2500 e 3000) e guarde em `gaps` o `gap.item()` de cada passo, antes do "
        "`optimizer.step()`.",
        "Devolva `B_fit.detach(), A_fit.detach(), gaps`. O piso para onde a descida vai é a soma dos σᵢ² "
        "depois do primeiro (σ₂², num alvo 3 × 2); o verificador o calcula para comparar, mas a sua função "
        "tem de chegar lá descendo o gradiente.",
    ),
    conferir=_conferir_ex2,
    entradas=_entradas_ex2,
    erros_comuns=(),
    atalhos=(),
    proibidas=("torch.linalg.svd", "torch.linalg.svdvals", "torch.svd", "torch.svd_lowrank", "torch.pca_lowrank",
               "torch.linalg.eig", "torch.linalg.eigh", "torch.linalg.eigvals", "torch.linalg.eigvalsh",
               "torch.lobpcg", "numpy.linalg.svd", "numpy.linalg.eig", "numpy.linalg.eigh",
               "numpy.linalg.eigvals", "numpy.linalg.eigvalsh", "scipy.linalg.svd", "scipy.linalg.svdvals",
               "scipy.linalg.eig", "scipy.linalg.eigh", "scipy.sparse.linalg.svds"),
    gradiente=True,
    inicio='''
def fit_rank1(target, steps=3000):
    """Desce o gradiente num adaptador de posto 1, B (m × 1) e A (1 × n), até BA ≈ target (m × n, float64).
    Devolve (B, A, gaps): as duas matrizes no fim e a lista de ‖BA − target‖² de cada passo."""
    return ____
''',
    contexto=celulas_do_notebook(NOTEBOOK, _CONFIGURACAO),
)


# ---------------------------------------------------------------- exercício 3: quantização e faixa
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


def _esperado_ex3(ns):
    medias = _medias(ns)
    return {"mean_errors": medias, "best_c": FAIXAS[int(np.argmin(medias))],
            "q_outside": float(_quantizar(0.25, 0.20))}


ex3 = Exercicio(
    "cap07_treinamento_otimizacao.ex3", "o erro médio da quantização em três faixas", ("mean_errors", "best_c", "q_outside"),
    dicas=(
        "Escreva uma função `Q(w, c)` com a grade da seção 7.4.9: passo Δ = c/7 e os níveis −7…7, e o peso "
        "levado ao nível mais próximo.",
        "O erro de cada peso é `(Q(W_new, c) - W_new).abs()`; a média dos 6 valores dá um número por faixa, na "
        "ordem c = 0,15, 0,20 e 0,30.",
        "A grade não tem nível além de ±c: um peso de fora é cortado em [−c, c] (`clamp`) antes do "
        "arredondamento, e o erro dele deixa de ser limitado por Δ/2.",
    ),
    esperado=_esperado_ex3,
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
