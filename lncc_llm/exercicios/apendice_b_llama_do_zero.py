"""Exercícios conferíveis do Apêndice B (um Llama escrito por você): a máscara causal com um passado
guardado e a conta de posições com e sem *KV cache*.

O exercício 3 (a RoPE com a base errada) é de observação: fica sem verificador.
"""
from __future__ import annotations

from .comparar import Incorreto
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "apendice_b_llama_do_zero"
_contexto = celulas_do_notebook(NOTEBOOK, ("2be10e22", "67fa6750"))


# ---------------------------------------------------------------- exercício 1: a máscara com passado
def _mascara_float(n_new, n_past):
    import torch

    return torch.ones(n_new, n_past + n_new).triu(n_past + 1)


def _mascara(n_new, n_past, deslocamento=None, invertida=False):
    """A máscara pela definição, posição a posição: a consulta i (absoluta n_past + i) não vê a chave j
    quando j > n_past + i. ``deslocamento`` troca o n_past da regra (para os erros comuns)."""
    import torch

    d = n_past if deslocamento is None else deslocamento
    m = torch.tensor([[j > d + i for j in range(n_past + n_new)] for i in range(n_new)], dtype=torch.bool)
    return ~m if invertida else m


def _casos_ex1(ns):
    return [(1, 0), (4, 0), (3, 5), (1, 7), (2, 2)]


ex1 = Exercicio(
    "apendice_b_llama_do_zero.ex1", "a máscara causal com um passado guardado", ("future_mask",),
    dicas=(
        "A forma é (n_new, n_past + n_new): uma linha por consulta nova, uma coluna por chave, guardada ou "
        "nova.",
        "A consulta nova i está na posição absoluta n_past + i; ela pode ver as chaves j ≤ n_past + i e mais "
        "nenhuma.",
        "`torch.ones(linhas, colunas, dtype=torch.bool).triu(d)` marca com True as casas com j − i ≥ d; "
        "escolha d pela dica 2.",
    ),
    esperado=lambda ns: {"future_mask": lambda n_new, n_past: _mascara(n_new, n_past)},
    entradas=_casos_ex1,
    erros_comuns=(
        ErroComum("a máscara é de números (float), não de booleanos: `masked_fill` (e a `Attention` da "
                  "seção) precisa de um tensor `dtype=torch.bool`, com True onde a consulta não pode olhar.",
                  lambda ns: {"future_mask": _mascara_float},
                  dica="Crie a matriz já booleana: `torch.ones(linhas, colunas, dtype=torch.bool)` antes do "
                       "`.triu(...)` (ou converta no fim com `.bool()`)."),
        ErroComum("a máscara ignora o passado: é o triângulo de quem lê o texto inteiro de uma vez, e esconde "
                  "chaves guardadas que a consulta nova pode ver. Com P posições guardadas, a consulta i está "
                  "na posição P + i.",
                  lambda ns: {"future_mask": lambda n_new, n_past: _mascara(n_new, n_past, deslocamento=0)}),
        ErroComum("cada consulta ficou sem ver a si mesma: a chave da própria posição (j = P + i) é permitida; "
                  "só as posições depois dela ficam de fora.",
                  lambda ns: {"future_mask": lambda n_new, n_past: _mascara(n_new, n_past, n_past - 1)}),
        ErroComum("a máscara está invertida: True deve marcar o que a consulta NÃO pode ver (o que vai para "
                  "−∞ antes do softmax), não o que ela vê.",
                  lambda ns: {"future_mask": lambda n_new, n_past: _mascara(n_new, n_past, invertida=True)}),
    ),
    inicio="""
def future_mask(n_new, n_past):
    # n_new consultas novas; n_past posições já guardadas no cache
    return ____     # tensor bool (n_new, n_past + n_new): True onde a consulta não pode olhar
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: posições com e sem cache
def _sem_cache(P, N):
    return sum(P + t for t in range(N))          # o passo t relê P + t posições


def _com_cache(P, N):
    return P + (N - 1) if N > 0 else 0           # o prompt uma vez, depois um token por passo


def _tem_laco(funcao) -> bool:
    """Se o código de ``funcao`` percorre algo (um ``for``, uma compreensão, um ``while`` ou ``range``)."""
    import dis

    codigo = getattr(funcao, "__code__", None)
    if codigo is None:
        return False
    pilha = [codigo]
    while pilha:
        c = pilha.pop()
        if "range" in c.co_names:
            return True
        for instrucao in dis.get_instructions(c):
            if instrucao.opname in ("FOR_ITER", "JUMP_BACKWARD", "JUMP_ABSOLUTE"):
                return True
        pilha += [k for k in c.co_consts if hasattr(k, "co_code")]
    return False


def _conferir_ex2(valores, ns):
    from .comparar import comparar

    for nome, certa in (("positions_without", _sem_cache), ("positions_with", _com_cache)):
        for i, (args, obtido) in enumerate(zip(_casos_ex2(ns), valores[nome]), start=1):
            comparar(obtido, certa(*args), nome=f"a saída de `{nome}` na chamada de teste {i} de 5")
    if _tem_laco(ns.get("positions_without")):
        raise Incorreto("os números batem, mas `positions_without` soma com um laço (como a célula da seção B.8): "
                        "o exercício pede a fórmula fechada. Some P + t de t = 0 a N − 1 no papel.")


def _casos_ex2(ns):
    return [(45, 30), (1, 1), (10, 5), (100, 1), (7, 64)]


ex2 = Exercicio(
    "apendice_b_llama_do_zero.ex2", "posições processadas com e sem KV cache", ("positions_without", "positions_with"),
    dicas=(
        "Sem cache, o passo t (t = 0, 1, …, N − 1) relê o texto inteiro até ali: P + t posições.",
        "Some P + t de t = 0 a N − 1: N·P mais 0 + 1 + … + (N − 1).",
        "Com cache, o primeiro passo lê as P posições do prompt e cada um dos N − 1 seguintes lê uma só.",
    ),
    esperado=lambda ns: {"positions_without": _sem_cache, "positions_with": _com_cache},
    conferir=_conferir_ex2,
    entradas=_casos_ex2,
    atalhos=(
        ErroComum("os números batem, mas `positions_without` soma com um laço (como a célula da seção B.8): "
                  "o exercício pede a fórmula fechada. Some P + t de t = 0 a N − 1 no papel.",
                  lambda ns: {"positions_without": _sem_cache}, dica=2),
    ),
    erros_comuns=(
        ErroComum("sem cache, o primeiro passo lê só as P posições do prompt (o token novo ainda não existe): "
                  "a soma vai de P a P + N − 1, não de P + 1 a P + N.",
                  lambda ns: {"positions_without": lambda P, N: _sem_cache(P, N) + N}),
        ErroComum("com cache, o último token escolhido nunca passa pelo modelo: são P + N − 1 posições, não "
                  "P + N.",
                  lambda ns: {"positions_with": lambda P, N: P + N}),
        ErroComum("essa conta supõe que todo passo relê o texto final inteiro (N·(P + N)); o texto cresce um "
                  "token por passo.",
                  lambda ns: {"positions_without": lambda P, N: N * (P + N)}),
    ),
    inicio="""
def positions_without(P, N):
    return ____     # int: posições processadas sem cache, numa fórmula fechada


def positions_with(P, N):
    return ____     # int: posições processadas com cache
""",
    contexto=_contexto,
)
