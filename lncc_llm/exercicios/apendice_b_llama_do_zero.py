"""Exercícios conferíveis do Apêndice B (um Llama escrito por você). Os dois primeiros são núcleo, na
seção B.8: o *KV cache* e a máscara causal com um passado guardado, que a ``Attention`` da lição passa a
usar; o 3 conta as posições com e sem *KV cache*.

O exercício 4 (a RoPE com a base errada) é de observação: fica sem verificador.
"""
from __future__ import annotations

from .comparar import Incorreto
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "apendice_b_llama_do_zero"
_contexto = celulas_do_notebook(NOTEBOOK, ("2be10e22", "67fa6750"))


# ---------------------------------------------------------------- exercício 1 (núcleo): o KV cache
_contexto_modelo = celulas_do_notebook(NOTEBOOK, (
    "2be10e22", "67fa6750", "79144a25", "b4ffa988", "a1b7c147", "b725dba9", "1f519cb4", "115398b7",
    "085b2efc"), definicoes=("b4ffa988", "a1b7c147", "b725dba9", "1f519cb4", "115398b7"))
_CENARIOS_EX1 = ((2, (5, 1, 1, 1)), (3, (1, 1)), (1, (4,)), (4, (3, 2, 1)))   # (camadas, posições por passo)
_TEXTO_EX1 = "O farol da ilha acende quando a maré sobe, e os barcos"


class _Referencia:
    """O cache pela definição: uma lista de keys e uma de values por camada; ``len`` = posições."""

    def __init__(self, n_layers):
        self.k, self.v = [[] for _ in range(n_layers)], [[] for _ in range(n_layers)]

    def __len__(self):
        return sum(t.shape[2] for t in self.k[0])

    def append(self, layer, k, v):
        import torch

        self.k[layer].append(k)
        self.v[layer].append(v)
        return torch.cat(self.k[layer], dim=2), torch.cat(self.v[layer], dim=2)


def _registro(classe, n_layers, passos, semente):
    """O que o cache devolve numa sequência de ``append`` (todas as camadas a cada passo) e os ``len``."""
    import torch

    g = torch.Generator().manual_seed(semente)
    cache = classe(n_layers)
    saida = [("len", len(cache))]
    for n in passos:
        for camada in range(n_layers):
            k = torch.randn(1, 3, n, 4, generator=g)
            v = torch.randn(1, 3, n, 4, generator=g)
            devolvido = cache.append(camada, k, v)
            if not (isinstance(devolvido, tuple) and len(devolvido) == 2):
                saida.append(("devolveu", type(devolvido).__name__))
                return saida
            saida.append(("kv", devolvido[0].clone(), devolvido[1].clone()))
        saida.append(("len", len(cache)))
    return saida


def _iguais(a, b) -> bool:
    import torch

    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x[0] != y[0]:
            return False
        if x[0] == "kv":
            if x[1].shape != y[1].shape or not (torch.equal(x[1], y[1]) and torch.equal(x[2], y[2])):
                return False
        elif x[1] != y[1]:
            return False
    return True


class _SoAsNovas(_Referencia):
    def append(self, layer, k, v):
        super().append(layer, k, v)
        return k, v


class _DimensaoErrada(_Referencia):
    def append(self, layer, k, v):
        import torch

        self.k[layer].append(k)
        self.v[layer].append(v)
        return torch.cat(self.k[layer], dim=1), torch.cat(self.v[layer], dim=1)


class _ContaChamadas(_Referencia):
    def __len__(self):
        return len(self.k[0])


class _SomaCamadas(_Referencia):
    def __len__(self):
        return sum(t.shape[2] for camada in self.k for t in camada)


class _SempreZero(_Referencia):
    def __len__(self):
        return 0


class _UmaListaSo(_Referencia):
    def append(self, layer, k, v):
        return super().append(0, k, v)


_ERROS_EX1 = (
    ("`append` devolveu só as posições novas: a atenção do passo precisa de todas, as guardadas e as "
     "novas, juntadas na dimensão das posições.", _SoAsNovas),
    ("as posições foram juntadas na dimensão 1, a das cabeças; num tensor (lote, cabeças, posições, "
     "d_cabeça), as posições são a dimensão 2.", _DimensaoErrada),
    ("`len` conta as chamadas (os passos), não as posições: o *prefill* guarda o prompt inteiro de uma vez, "
     "e as posições do passo seguinte começam em len(cache). Conte `keys[0].shape[2]`.", _ContaChamadas),
    ("`len` somou as posições de todas as camadas: cada camada guarda as mesmas posições; conte as de uma "
     "camada só.", _SomaCamadas),
    ("`len` fica em 0 depois de guardar posições: o Llama recomeçaria as posições (e a RoPE) em 0 a cada "
     "passo, como se o token novo fosse o primeiro do texto. `len` é quantas posições já estão guardadas.",
     _SempreZero),
    ("todas as camadas foram guardadas na mesma lista: cada camada tem as suas keys e os seus values "
     "(índice `layer`).", _UmaListaSo),
)


def _passos_do_modelo(classe, ns):
    """Prefill de 6 tokens e 4 passos de decode com o cache ``classe`` no Llama da lição: os logits da
    última posição a cada passo, com cache e recalculados sem cache."""
    import torch

    model, tok = ns["model"], ns["tok"]
    ids = tok(_TEXTO_EX1)["input_ids"][:10]
    cache = classe(model.cfg.n_layers)
    com, sem = [], []
    with torch.no_grad():
        com.append(model(torch.tensor([ids[:6]]), cache)[0, -1])
        sem.append(model(torch.tensor([ids[:6]]))[0, -1])
        for t in range(6, 10):
            com.append(model(torch.tensor([[ids[t]]]), cache)[0, -1])
            sem.append(model(torch.tensor([ids[:t + 1]]))[0, -1])
    return com, sem


def _conferir_ex1(respostas, ns):
    from .comparar import Incorreto, comparar

    classe = respostas["MyKVCache"]
    if not isinstance(classe, type):
        raise Incorreto("`MyKVCache` deve ser a classe (o nome depois de `class`), não um objeto ou um valor.")
    herdada = next((b for b in classe.__mro__[1:] if b.__module__.split(".")[0] in ("lncc_llm", "transformers")
                    and not b.__module__.startswith("lncc_llm.exercicios")), None)
    if herdada is not None:
        raise Incorreto(f"`MyKVCache` herda de `{herdada.__module__}.{herdada.__name__}`: o exercício pede que "
                        "você escreva o cache, com listas e `torch.cat`.")
    for i, (camadas, passos) in enumerate(_CENARIOS_EX1, start=1):
        semente = 410 + i
        try:
            obtido = _registro(classe, camadas, passos, semente)
        except Exception as erro:  # o código do leitor: uma linha, sem traceback
            for mensagem, errada in _ERROS_EX1:          # um erro previsto que também levanta
                try:
                    _registro(errada, camadas, passos, semente)
                except Exception as previsto:
                    if type(previsto) is type(erro) and str(previsto) == str(erro):
                        raise Incorreto(mensagem) from None
            texto = str(erro).strip().splitlines()[0] if str(erro).strip() else ""
            raise Incorreto(f"o cache levantou {type(erro).__name__}" + (f": {texto}" if texto else "")
                            + f" (no cenário de teste {i} de {len(_CENARIOS_EX1)}).") from None
        certo = _registro(_Referencia, camadas, passos, semente)
        if _iguais(obtido, certo):
            continue
        for mensagem, errada in _ERROS_EX1:
            try:
                previsto = _registro(errada, camadas, passos, semente)
            except Exception:                              # este erro previsto levanta: já visto acima
                continue
            if _iguais(obtido, previsto):
                raise Incorreto(mensagem)
        if obtido[0] != ("len", 0):
            raise Incorreto("um cache novo, sem nada guardado, deve ter `len` 0.")
        if any(x[0] == "devolveu" for x in obtido):
            raise Incorreto("`append` deve devolver o par `(k, v)` com todas as posições da camada.")
        raise Incorreto(f"no cenário de teste {i} de {len(_CENARIOS_EX1)} ({camadas} camadas, passos de "
                        f"{list(passos)} posições), o cache não devolveu as keys e os values esperados.")
    import torch

    from ..llama import KVCache

    amostra = classe(2)
    for camada in (0, 1):
        amostra.append(camada, torch.zeros(1, 3, 2, 4), torch.zeros(1, 3, 2, 4))
    if any(isinstance(v, KVCache) for v in vars(amostra).values()):
        raise Incorreto("`MyKVCache` guarda dentro dele o `KVCache` do lncc_llm: o exercício pede que você escreva o "
                        "cache, com listas e `torch.cat`.")
    if not (isinstance(getattr(amostra, "keys", None), list) and isinstance(getattr(amostra, "values", None), list)
            and len(amostra.keys) == 2 and getattr(amostra.keys[0], "shape", (0, 0, 0))[2] == 2):
        raise Incorreto("o cache funciona, mas guarde as keys e os values em duas listas, `self.keys` e "
                        "`self.values`, uma entrada por camada, cada uma um tensor (lote, 3, posições, 64): a seção "
                        "B.8 lê as duas para contar os bytes do cache.")
    com, sem = _passos_do_modelo(classe, ns)
    for passo, (a, b) in enumerate(zip(com, sem)):
        comparar(a, b, rtol=1e-4, atol=1e-4,
                 nome=f"os logits do Llama com o seu cache no passo {passo} (0 = prefill), contra o recálculo "
                      "sem cache")


ex1 = Exercicio(
    "apendice_b_llama_do_zero.ex1", "o KV cache", ("MyKVCache",),
    dicas=(
        "Guarde uma entrada por camada para as keys e outra para os values (por exemplo, duas listas "
        "`[None] * n_layers`). Em `append`, se a camada já tem algo, junte o novo ao fim; guarde o resultado "
        "e devolva-o.",
        "`torch.cat([guardado, novo], dim=2)`: o tensor é (lote, cabeças de key/value, posições, d_cabeça), "
        "e as posições são a dimensão 2.",
        "`len` é o número de posições guardadas, igual em todas as camadas: `0` se a camada 0 está vazia, "
        "senão `self.keys[0].shape[2]`. O Llama usa esse número como a posição do primeiro token novo.",
    ),
    esperado=lambda ns: {"MyKVCache": _Referencia},
    conferir=_conferir_ex1,
    entradas=lambda ns: [],
    tipo="nucleo",
    inicio="""
class MyKVCache:
    \"\"\"As keys e os values já calculados, por camada, que crescem a cada passo (seção B.8).

    append(layer, k, v): k e v são (lote, 3, n, 64), as n posições novas da camada `layer`; junta-as
    às guardadas e devolve (k, v) com todas as posições. len(cache): quantas posições estão guardadas.
    Guarde-as em duas listas, self.keys e self.values, com um tensor (lote, 3, posições, 64) por camada
    (a seção B.8 as lê).
    \"\"\"

    def __init__(self, n_layers):
        ____

    def __len__(self):
        return ____

    def append(self, layer, k, v):
        ____
        return ____
""",
    seguir="KVCache = MyKVCache",
    contexto=_contexto_modelo,
)


# ---------------------------------------------------------------- exercício 2: a máscara com passado
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


def _casos_ex2(ns):
    return [(1, 0), (5, 0), (3, 6), (1, 9), (2, 2), (4, 3)]


def _conferir_ex2(valores, ns):
    """Cada saída tem de ser um tensor booleano do PyTorch na CPU (a `Attention` da lição o passa ao
    `masked_fill`), igual à regra posição a posição."""
    import torch

    from .comparar import comparar

    for i, (args, obtido) in enumerate(zip(_casos_ex2(ns), valores["my_future_mask"]), start=1):
        if not isinstance(obtido, torch.Tensor):
            raise Incorreto(f"`my_future_mask` devolveu {type(obtido).__name__}, e a `Attention` da lição passa a "
                            "máscara ao `masked_fill`: devolva um tensor do PyTorch, `dtype=torch.bool`.")
        if obtido.dtype != torch.bool:
            raise Incorreto(f"a máscara tem `dtype={obtido.dtype}`: o `masked_fill` precisa de `torch.bool`, com True "
                            "onde a query não pode olhar.")
        if obtido.device.type != "cpu":
            raise Incorreto(f"a máscara foi criada em `{obtido.device}`: este apêndice roda na CPU; crie-a sem "
                            "`device=` (ou com `device=\"cpu\"`).")
        comparar(obtido, _mascara(*args), nome=f"a saída de `my_future_mask` na chamada de teste {i} de "
                                               f"{len(_casos_ex2(ns))}")


ex2 = Exercicio(
    "apendice_b_llama_do_zero.ex2", "a máscara causal com um passado guardado", ("my_future_mask",),
    dicas=(
        "A forma é (n_new, n_past + n_new): uma linha por query nova, uma coluna por key, guardada ou "
        "nova.",
        "A query nova i está na posição absoluta n_past + i; ela pode ver as keys j ≤ n_past + i e mais "
        "nenhuma.",
        "`torch.ones(linhas, colunas, dtype=torch.bool).triu(d)` marca com True as casas com j − i ≥ d; "
        "escolha d pela dica 2.",
    ),
    esperado=lambda ns: {"my_future_mask": lambda n_new, n_past: _mascara(n_new, n_past)},
    conferir=_conferir_ex2,
    entradas=_casos_ex2,
    erros_comuns=(
        ErroComum("a máscara tem de ser um tensor do PyTorch de booleanos (`dtype=torch.bool`), com True onde a "
                  "query não pode olhar: números (float), um array do numpy ou uma lista não servem ao "
                  "`masked_fill` da `Attention` da seção.",
                  lambda ns: {"my_future_mask": _mascara_float},
                  dica="Crie a matriz já booleana: `torch.ones(linhas, colunas, dtype=torch.bool)` antes do "
                       "`.triu(...)` (ou converta no fim com `.bool()`)."),
        ErroComum("a máscara ignora o passado: é o triângulo de quem lê o texto inteiro de uma vez, e esconde "
                  "keys guardadas que a query nova pode ver. Com P posições guardadas, a query i está "
                  "na posição P + i.",
                  lambda ns: {"my_future_mask": lambda n_new, n_past: _mascara(n_new, n_past, deslocamento=0)}),
        ErroComum("cada query ficou sem ver a si mesma: a key da própria posição (j = P + i) é permitida; "
                  "só as posições depois dela ficam de fora.",
                  lambda ns: {"my_future_mask": lambda n_new, n_past: _mascara(n_new, n_past, n_past - 1)}),
        ErroComum("a máscara está invertida: True deve marcar o que a query NÃO pode ver (o que vai para "
                  "−∞ antes do softmax), não o que ela vê.",
                  lambda ns: {"my_future_mask": lambda n_new, n_past: _mascara(n_new, n_past, invertida=True)}),
    ),
    proibidas=("lncc_llm.llama.future_mask", "lncc_llm.attention.causal_mask",
               "torch.nn.Transformer.generate_square_subsequent_mask"),
    tipo="nucleo",
    inicio="""
def my_future_mask(n_new, n_past):
    \"\"\"A máscara causal com passado (seção B.8): n_new queries novas, n_past posições no cache.

    Devolve um tensor bool (n_new, n_past + n_new), True onde a query nova i NÃO pode olhar a key j.
    \"\"\"
    return ____
""",
    seguir="future_mask = my_future_mask",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 3: posições com e sem cache
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


def _conferir_ex3(valores, ns):
    from .comparar import comparar

    for nome, certa in (("positions_without", _sem_cache), ("positions_with", _com_cache)):
        for i, (args, obtido) in enumerate(zip(_casos_ex3(ns), valores[nome]), start=1):
            comparar(obtido, certa(*args), nome=f"a saída de `{nome}` na chamada de teste {i} de {len(_casos_ex3(ns))}")
    if _tem_laco(ns.get("positions_without")):
        raise Incorreto("os números batem, mas `positions_without` soma com um laço (como a célula da seção B.8): "
                        "o exercício pede a fórmula fechada. Some P + t de t = 0 a N − 1 no papel.")


def _casos_ex3(ns):
    return [(45, 30), (1, 1), (10, 5), (100, 1), (7, 64)]


ex3 = Exercicio(
    "apendice_b_llama_do_zero.ex3", "posições processadas com e sem KV cache", ("positions_without", "positions_with"),
    dicas=(
        "Sem cache, o passo t (t = 0, 1, …, N − 1) relê o texto inteiro até ali: P + t posições.",
        "Some P + t de t = 0 a N − 1: N·P mais 0 + 1 + … + (N − 1).",
        "Com cache, o primeiro passo lê as P posições do prompt e cada um dos N − 1 seguintes lê uma só.",
    ),
    esperado=lambda ns: {"positions_without": _sem_cache, "positions_with": _com_cache},
    conferir=_conferir_ex3,
    entradas=_casos_ex3,
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
