"""Exercícios conferíveis do Apêndice A, segunda parte. O 1 é núcleo: o leitor escreve a atenção multi-cabeça
causal inteira (seção A.10), com Q, K e V em três camadas, e o verificador a compara, com pesos e entradas
que o notebook não mostra, com a atenção escrita direto da fórmula em numpy. O 3 conta para onde olha o
modelo treinado por mais tempo, uma função que o verificador chama em textos que o notebook não mostra.

O exercício 2 usa o modelo treinado na seção A.11 (caro demais para uma conferência; é de observação) e
o 4 é de reflexão: ficam sem verificador.
"""
from __future__ import annotations

import math

import numpy as np

from .comparar import Incorreto, como_array
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "apendice_a_treino"
_contexto = celulas_do_notebook(NOTEBOOK, ("apA2-setup", "apA2-imports", "e6ffe57a"))


# ---------------------------------------------------------------- exercício 1: Q, K e V separados
_D, _H, _N, _MAX = 6, 2, 5, 8          # d, cabeças, tokens da entrada de teste e max_seq_len do teste

_MSG_MASCARA = ("faltou a máscara causal: cada posição está olhando também os tokens seguintes. Antes do "
                "softmax, ponha −∞ nos escores acima da diagonal (`masked_fill`).")
_MSG_ESCALA = "faltou dividir os escores por √d_h = √3 (a dimensão de cada cabeça) antes do softmax."
_MSG_VIES = ("as camadas `q`, `k` e `v` têm viés (o padrão do `nn.Linear`), e a `qkv` da "
             "`CausalSelfAttention` não tem: crie-as com `bias=False`.")
_MSG_UMA_CABECA = ("a atenção foi calculada com uma cabeça só, de dimensão d = 6: separe q, k e v em 2 cabeças "
                   "de d_h = 3 (`view` e `transpose`).")

# Saídas de erros que o verificador reconhece: (mensagem, como a atenção errada foi calculada).
_VARIANTES = (
    (_MSG_MASCARA, {"mascara": None}),
    (_MSG_ESCALA, {"divisor": 1.0}),
    ("os escores foram divididos por √d = √6; a escala é pela dimensão de cada cabeça, √d_h = √3.",
     {"divisor": math.sqrt(_D)}),
    ("a máscara pôs 0 nos escores do futuro, e e⁰ = 1 ainda dá peso a eles: use −∞ (`float(\"-inf\")`) "
     "antes do softmax.", {"mascara": "zero"}),
    ("as cabeças se misturaram na volta: antes do `reshape` para (lote, n, d), troque de novo os eixos das "
     "cabeças e das posições com `transpose(1, 2)`.", {"juntar": False}),
    ("o softmax foi tomado na dimensão errada: cada linha de escores (uma query) é que deve somar 1, "
     "`softmax(dim=-1)`.", {"eixo": -2}),
    (_MSG_UMA_CABECA, {"cabecas": 1}),
    (_MSG_UMA_CABECA, {"cabecas": 1, "divisor": math.sqrt(_D)}),
)


def _pesos_ex1():
    """Pesos e entrada de teste, sorteados com o numpy (float32): qkv (3d, d), proj (d, d) + viés, x (2, 5, d)."""
    rng = np.random.default_rng(6)

    def sorteio(forma, escala):
        return (rng.standard_normal(forma) * escala).astype(np.float32)

    return {"qkv": sorteio((3 * _D, _D), 0.6), "proj_w": sorteio((_D, _D), 0.4),
            "proj_b": sorteio((_D,), 0.1), "x": sorteio((2, _N, _D), 1.0)}


def _atencao_np(p, cabecas=_H, divisor=math.sqrt(_D // _H), mascara="inf", juntar=True, eixo=-1):
    """A atenção causal multi-cabeça em numpy (float64), escrita direto da fórmula; os argumentos
    reproduzem os erros de ``_VARIANTES``."""
    x, w = p["x"].astype(np.float64), p["qkv"].astype(np.float64)
    b, n, d = x.shape
    d_h = d // cabecas

    def separar(linhas):
        return (x @ linhas.T).reshape(b, n, cabecas, d_h).transpose(0, 2, 1, 3)   # (b, H, n, d_h)

    q, k, v = separar(w[:d]), separar(w[d:2 * d]), separar(w[2 * d:])
    escores = q @ k.transpose(0, 1, 3, 2) / divisor
    visivel = np.tril(np.ones((n, n), dtype=bool))
    if mascara == "inf":
        escores = np.where(visivel, escores, -np.inf)
    elif mascara == "zero":
        escores = np.where(visivel, escores, 0.0)
    escores = escores - escores.max(axis=eixo, keepdims=True)
    pesos = np.exp(escores)
    pesos = pesos / pesos.sum(axis=eixo, keepdims=True)
    z = pesos @ v                                                                   # (b, H, n, d_h)
    z = z.transpose(0, 2, 1, 3).reshape(b, n, d) if juntar else z.reshape(b, n, d)
    return z @ p["proj_w"].astype(np.float64).T + p["proj_b"].astype(np.float64)


def _perto(a, b):
    return bool(np.allclose(a, b, rtol=1e-4, atol=1e-5))


def _uma_linha(erro):
    texto = str(erro).strip().splitlines()[0] if str(erro).strip() else ""
    return type(erro).__name__ + (f": {texto}" if texto else "")


def _conferir_ex1(valores, ns):
    import torch

    classe = valores["MySeparateHeadsAttention"]
    if not isinstance(classe, type):
        raise Incorreto("`MySeparateHeadsAttention` deveria ser uma classe: "
                        "`class MySeparateHeadsAttention(nn.Module): ...`.")
    p = _pesos_ex1()
    try:
        with torch.random.fork_rng(devices=[]):          # os sorteios da sua classe não mexem na semente
            modulo = classe(_D, _H, _MAX)
    except Exception as erro:
        raise Incorreto(f"`MySeparateHeadsAttention({_D}, {_H}, {_MAX})` levantou {_uma_linha(erro)}; o construtor "
                        "recebe `(d_model, n_heads, max_seq_len)`.") from None
    camadas = {}
    for nome in ("q", "k", "v", "proj"):
        camada = getattr(modulo, nome, None)
        peso = getattr(camada, "weight", None)
        if peso is None or not hasattr(peso, "shape"):
            raise Incorreto(f"a sua classe não tem a camada `{nome}` (um `nn.Linear`): as camadas se chamam "
                            "`q`, `k`, `v` e `proj`.")
        if tuple(peso.shape) != (_D, _D):
            raise Incorreto(f"`{nome}.weight` tem formato {tuple(peso.shape)}, e o esperado é ({_D}, {_D}), d × d.")
        camadas[nome] = camada
    if any(getattr(camadas[nome], "bias", None) is not None for nome in ("q", "k", "v")):
        raise Incorreto(_MSG_VIES)
    if getattr(camadas["proj"], "bias", None) is None:
        raise Incorreto("a `proj` precisa de viés, como a da `CausalSelfAttention`: `nn.Linear(d, d)`.")
    with torch.no_grad():
        for nome, linhas in zip(("q", "k", "v"), torch.from_numpy(p["qkv"]).split(_D)):
            camadas[nome].weight.copy_(linhas)                 # linhas 0–5: Q; 6–11: K; 12–17: V
        camadas["proj"].weight.copy_(torch.from_numpy(p["proj_w"]))
        camadas["proj"].bias.copy_(torch.from_numpy(p["proj_b"]))
        modulo.eval()
        try:
            saida = modulo(torch.from_numpy(p["x"]))
        except Exception as erro:
            raise Incorreto(f"o `forward` levantou {_uma_linha(erro)} (na entrada de teste: lote (2, {_N}, {_D}), "
                            f"com `max_seq_len = {_MAX}`).") from None
    if not hasattr(saida, "detach"):
        raise Incorreto(f"o `forward` deveria devolver um tensor (lote, n, d), e devolveu {type(saida).__name__}.")
    y = como_array(saida)
    if y is None or y.shape != (2, _N, _D):
        forma = tuple(y.shape) if y is not None else "?"
        raise Incorreto(f"o `forward` devolveu formato {forma} para uma entrada (2, {_N}, {_D}); a saída tem a "
                        "forma da entrada.")
    y = y.astype(np.float64)
    if np.isnan(y).any():
        raise Incorreto("a saída tem NaN: alguma linha de escores ficou toda em −∞ (a máscara esconde também a "
                        "diagonal, ou está invertida?).")
    if not _perto(y, _atencao_np(p)):
        for mensagem, como in _VARIANTES:
            if _perto(y, _atencao_np(p, **como)):
                raise Incorreto(mensagem)
        raise Incorreto("com os mesmos pesos, a saída não coincide com a da `CausalSelfAttention`: confira a "
                        "separação das cabeças, a escala, a máscara e a `proj`.")


_CLASSES_ERRADAS: dict = {}


def _classe_errada(erro):
    """Uma ``MySeparateHeadsAttention`` com um erro (``mascara``, ``escala`` ou ``vies``), criada uma vez só."""
    if erro not in _CLASSES_ERRADAS:
        import torch
        from torch import nn

        class MySeparateHeadsAttention(nn.Module):
            def __init__(self, d_model, n_heads, max_seq_len):
                super().__init__()
                self.n_heads, self.head_dim = n_heads, d_model // n_heads
                self.q = nn.Linear(d_model, d_model, bias=erro == "vies")
                self.k = nn.Linear(d_model, d_model, bias=erro == "vies")
                self.v = nn.Linear(d_model, d_model, bias=erro == "vies")
                self.proj = nn.Linear(d_model, d_model)
                self.register_buffer("visible", torch.ones(max_seq_len, max_seq_len, dtype=torch.bool).tril())

            def forward(self, x):
                b, n, d = x.shape
                q, k, v = (m(x).view(b, n, self.n_heads, self.head_dim).transpose(1, 2)
                           for m in (self.q, self.k, self.v))
                escores = q @ k.transpose(-2, -1)
                if erro != "escala":
                    escores = escores / math.sqrt(self.head_dim)
                if erro != "mascara":
                    escores = escores.masked_fill(~self.visible[:n, :n], float("-inf"))
                return self.proj((escores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))

        _CLASSES_ERRADAS[erro] = MySeparateHeadsAttention
    return _CLASSES_ERRADAS[erro]


ex1 = Exercicio(
    "apendice_a_treino.ex1", "a atenção multi-cabeça causal", ("MySeparateHeadsAttention",),
    dicas=(
        "No `__init__`: três `nn.Linear(d, d, bias=False)` chamadas `q`, `k` e `v`, a `proj` como "
        "`nn.Linear(d, d)` (com viés) e a máscara: `torch.ones(max_seq_len, max_seq_len, dtype=torch.bool).tril()`, "
        "guardada com `register_buffer`. Guarde também H e d_h = d/H.",
        "No `forward`, para cada camada, `m(x).view(b, n, H, d_h).transpose(1, 2)` separa as cabeças: (b, H, n, d_h). "
        "Os escores são `q @ k.transpose(-2, -1) / math.sqrt(d_h)`, uma matriz (n, n) por cabeça.",
        "−∞ onde a máscara é False (`scores.masked_fill(~mascara[:n, :n], float('-inf'))`), `softmax(dim=-1)`, "
        "multiplique por v e, na volta, `transpose(1, 2).reshape(b, n, d)` antes da `proj`.",
    ),
    conferir=_conferir_ex1,
    entradas=lambda ns: [],
    erros_comuns=(
        ErroComum(_MSG_MASCARA, lambda ns: {"MySeparateHeadsAttention": _classe_errada("mascara")}),
        ErroComum(_MSG_ESCALA, lambda ns: {"MySeparateHeadsAttention": _classe_errada("escala")}),
        ErroComum(_MSG_VIES, lambda ns: {"MySeparateHeadsAttention": _classe_errada("vies")}),
    ),
    proibidas=("torch.nn.functional.scaled_dot_product_attention", "torch._C._nn.scaled_dot_product_attention",
               "torch.ops.aten.scaled_dot_product_attention",
               "torch.ops.aten._scaled_dot_product_attention_math",
               "torch.nn.MultiheadAttention",
               "torch.nn.functional.multi_head_attention_forward", "lncc_llm.gpt.CausalSelfAttention",
               "lncc_llm.gpt.SeparateHeadsAttention", "lncc_llm.gpt.causal_attention_weights",
               "lncc_llm.attention.scaled_dot_product_attention", "lncc_llm.attention.multi_head_attention"),
    tipo="nucleo",
    inicio="""
class MySeparateHeadsAttention(nn.Module):
    \"\"\"Atenção multi-cabeça causal (seção A.10) com Q, K e V em três camadas q, k e v de d × d, sem viés,
    e a projeção de saída proj (d × d, com viés).

    forward(x): x é (lote, n, d); devolve (lote, n, d). Cada cabeça faz softmax(Q Kᵀ/√d_h + M) V, com
    M = −∞ onde a key vem depois da query; as H cabeças se juntam de volta e passam pela proj.
    \"\"\"

    def __init__(self, d_model, n_heads, max_seq_len):
        super().__init__()
        ____

    def forward(self, x):
        ____
        return ____
""",
    seguir="SeparateHeadsAttention = MySeparateHeadsAttention",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 3: para onde o modelo treinado olha
_contexto_longo = celulas_do_notebook(
    NOTEBOOK, ("apA2-setup", "apA2-imports", "61732cf1", "f9535c46"),
    extra="long_model, record = trained_char_gpt(char_tokenizer.vocab_size)")
_TEXTOS_EX3 = ("KING RICHARD.\nNow is the winter of our discontent", "ROMEO.\nBut soft, what light breaks?",
               "HAMLET.\nTo be, or not to be, that is the question.")


def _casos_ex3(ns):
    import torch

    tok, modelo = ns["char_tokenizer"], ns["long_model"]
    return [(modelo, torch.tensor([tok.encode(t)])) for t in _TEXTOS_EX3]


def _pesos_da_camada(modelo, ids, camada=0, norma=True):
    """Os pesos (H, n, n) de uma camada, pelas funções do PyTorch a partir dos pesos do modelo."""
    import torch
    import torch.nn.functional as F

    bloco = modelo.blocks[camada]
    with torch.no_grad():
        x = modelo.embed(ids)
        h = F.layer_norm(x, (x.shape[-1],), bloco.attn_norm.gamma, bloco.attn_norm.beta,
                         bloco.attn_norm.eps) if norma else x
        qkv = F.linear(h, bloco.attn.qkv.weight, bloco.attn.qkv.bias)
        b, n, d = h.shape
        heads = bloco.attn.n_heads
        q, k, _ = (t.view(b, n, heads, d // heads).transpose(1, 2) for t in qkv.split(d, dim=-1))
        eye = torch.eye(n).expand(b, heads, n, n)
        return F.scaled_dot_product_attention(q, k, eye, is_causal=True)[0]


def _acertos(modelo, ids, alvo=-1, camada=0, norma=True):
    import torch

    w = _pesos_da_camada(modelo, ids, camada=camada, norma=norma)
    linhas = torch.arange(1, w.shape[-1])
    return [int((w[h, 1:].argmax(-1) == linhas + alvo).sum()) for h in range(w.shape[0])]


ex3 = Exercicio(
    "apendice_a_treino.ex3", "as cabeças que olham o caractere anterior", ("previous_char_hits",),
    dicas=(
        "Os pesos da primeira camada, como na seção A.10: `block = model.blocks[0]` e "
        "`block.attn.attention_weights(block.attn_norm(model.embed(ids)))[0]`, um tensor (H, n, n), sob "
        "`torch.no_grad()`.",
        "Para cada cabeça h e cada posição i ≥ 1 (a posição 0 só pode olhar para si), `w[h, i].argmax()` é a "
        "posição que a query i mais olha; conte quantas vezes ela é i − 1.",
        "`(w[h, 1:].argmax(-1) == torch.arange(n - 1)).sum()` faz a conta de uma cabeça de uma vez. Devolva uma "
        "lista de H inteiros.",
    ),
    esperado=lambda ns: {"previous_char_hits": _acertos},
    entradas=_casos_ex3,
    erros_comuns=(
        ErroComum("a conta pegou as posições em que o maior peso fica no próprio caractere (j = i), não no "
                  "anterior (j = i − 1).",
                  lambda ns: {"previous_char_hits": lambda m, ids: _acertos(m, ids, alvo=0)}),
        ErroComum("faltou a LayerNorm antes da atenção: o bloco pré-norm aplica `attn_norm` aos vetores antes de "
                  "calcular Q e K.",
                  lambda ns: {"previous_char_hits": lambda m, ids: _acertos(m, ids, norma=False)}),
        ErroComum("esses são os pesos da última camada: o exercício pede a primeira (`model.blocks[0]`).",
                  lambda ns: {"previous_char_hits": lambda m, ids: _acertos(m, ids, camada=-1)}),
    ),
    inicio="""
def previous_char_hits(model, ids):
    # ids: (1, n); devolve, para cada cabeça da PRIMEIRA camada, em quantas posições i ≥ 1 o maior peso
    # vai para o caractere anterior (j = i − 1)
    return ____     # lista de H inteiros
""",
    contexto=_contexto_longo,
)
