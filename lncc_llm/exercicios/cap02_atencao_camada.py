"""Exercícios conferíveis do Capítulo 2, segunda parte. O 1 é o núcleo: o leitor recalcula uma cabeça
do MiniLM a partir dos pesos do modelo, e o verificador a chama em camadas, cabeças e frases que o
notebook não mostra, contra ``outputs.attentions``. Os opcionais: a atenção à mão no mini-corpus, a
variância com e sem √d_k, o peso de [PAD] em todas as camadas e a contagem de parâmetros do MiniLM."""
from __future__ import annotations

import math

import numpy as np

from .comparar import Incorreto, como_array
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap02_atencao_camada"
_contexto = celulas_do_notebook(NOTEBOOK, (
    "cap02b-setup", "cap02b-imports", "cap02b-frase", "ece97f37"))


# ---------------------------------------------------------------- exercício 1 (núcleo): uma cabeça do MiniLM
_FRASES_EX1 = ("The old lighthouse keeper climbed the stairs at dawn.",
               "Mais vale um pássaro na mão do que dois voando!")
_CASOS_EX1 = ((0, 2, 0), (2, 7, 0), (3, 11, 1), (5, 0, 1))      # (camada, cabeça, frase)


def _entrada(ns, camada, frase):
    """A entrada da camada (n, d), os módulos query/key/value dela e os pesos de atenção do modelo."""
    import torch

    tokenizer, model = ns["tokenizer"], ns["model"]
    enc = tokenizer(_FRASES_EX1[frase], return_tensors="pt").to(ns["device"])
    with torch.no_grad():
        out = model(**enc, output_attentions=True, output_hidden_states=True)
    sa = model.encoder.layer[camada].attention.self
    return out.hidden_states[camada][0], sa, out.attentions[camada][0]


def _casos_ex1(ns):
    casos = []
    for camada, cabeca, frase in _CASOS_EX1:
        x, sa, _ = _entrada(ns, camada, frase)
        casos.append((x, sa.query, sa.key, sa.value, cabeca, ns["cfg"].num_attention_heads))
    return casos


def _do_modelo(ns):
    """A referência: os pesos que o próprio modelo devolve (``outputs.attentions``), caso a caso."""
    saidas = iter([_entrada(ns, camada, frase)[2][cabeca] for camada, cabeca, frase in _CASOS_EX1])
    return lambda *args: next(saidas)


def _cabeca(x, query, key, value, h, n_heads, fatia="bloco", escala="raiz", dim=-1, vies=True):
    import torch

    d_k = query.weight.shape[0] // n_heads
    proj = (lambda m: x @ m.weight.T + m.bias) if vies else (lambda m: x @ m.weight.T)
    q, k = proj(query), proj(key)
    if fatia == "bloco":
        q, k = q[:, h * d_k:(h + 1) * d_k], k[:, h * d_k:(h + 1) * d_k]
    elif fatia == "intercalada":
        q, k = q[:, h::n_heads], k[:, h::n_heads]
    divisor = {"raiz": d_k ** 0.5, "nenhuma": 1.0, "d_k": float(d_k), "d": q.shape[-1] ** 0.5}[escala]
    return torch.softmax(q @ k.T / divisor, dim=dim)


ex1 = Exercicio(
    "cap02_atencao_camada.ex1", "uma cabeça do MiniLM, dos pesos à atenção", ("head_attention",),
    dicas=(
        "Projete a entrada inteira (`X @ query.weight.T + query.bias`, e o mesmo para a key) e fique com as "
        "colunas da cabeça h: são d_k = d / n_heads colunas seguidas, de h·d_k a (h+1)·d_k − 1.",
        "Com `q` e `k` da cabeça, (n, d_k) cada, os escores são `q @ k.T / d_k ** 0.5`, uma matriz (n, n): a "
        "linha i diz quanto a query i combina com cada key.",
        "O softmax é por linha (`dim=-1`): cada query distribui 1 de peso entre as keys. O `value` não entra nos "
        "pesos: ele é usado depois, em Z = A V.",
    ),
    esperado=lambda ns: {"head_attention": _do_modelo(ns)},
    entradas=_casos_ex1,
    atol=1e-5,
    erros_comuns=(
        ErroComum("a cabeça h pegou as colunas h, h + H, h + 2H, … (intercaladas): as d_k colunas de uma cabeça "
                  "são seguidas, de h·d_k a (h+1)·d_k − 1 (é o que `view(n, H, d_k)` faz).",
                  lambda ns: {"head_attention": lambda *a: _cabeca(*a, fatia="intercalada")}),
        ErroComum("faltou dividir por √d_k: os escores ficam grandes demais e o softmax, afiado demais.",
                  lambda ns: {"head_attention": lambda *a: _cabeca(*a, escala="nenhuma")},
                  dica="Divida `q @ k.T` por `d_k ** 0.5`, com d_k = d / n_heads = 32 (não pela dimensão inteira)."),
        ErroComum("a divisão foi por d_k, não por √d_k.",
                  lambda ns: {"head_attention": lambda *a: _cabeca(*a, escala="d_k")}),
        ErroComum("o softmax foi feito por coluna (dim=0): cada linha (uma query) é que tem de somar 1.",
                  lambda ns: {"head_attention": lambda *a: _cabeca(*a, dim=0)}),
        ErroComum("faltaram os vieses das projeções: no BERT, q = x W_Q + b_Q (`query.bias`).",
                  lambda ns: {"head_attention": lambda *a: _cabeca(*a, vies=False)}),
        ErroComum("os escores usaram todas as 384 dimensões (as 12 cabeças juntas): fique só com as d_k colunas da "
                  "cabeça h.",
                  lambda ns: {"head_attention": lambda *a: _cabeca(*a, fatia="todas", escala="raiz")}),
    ),
    proibidas=("torch.nn.functional.scaled_dot_product_attention", "torch._C._nn.scaled_dot_product_attention",
               "torch.ops.aten.scaled_dot_product_attention", "torch.ops.aten._scaled_dot_product_attention_math",
               "lncc_llm.attention.multi_head_attention",
               "lncc_llm.attention.scaled_dot_product_attention", "lncc_llm.attention.split_heads"),
    tipo="nucleo",
    inicio="""
def head_attention(X, query, key, value, h, n_heads):
    \"\"\"Os pesos de atenção A (n, n) da cabeça h de uma camada do BERT (seção 2.6).

    X: (n, d) float32, a entrada da camada (sem a dimensão do lote); query, key, value: as nn.Linear
    da camada (peso (d, d), viés (d,)); h: a cabeça, de 0 a n_heads − 1.
    \"\"\"
    return ____     # softmax(q kᵀ / √d_k) por linha, com q e k só da cabeça h
""",
    seguir='sa0 = model.encoder.layer[0].attention.self; check("a sua head_attention = outputs.attentions[0], '
           'cabeça 10", head_attention(outputs.hidden_states[0][0], sa0.query, sa0.key, sa0.value, 10, 12), '
           'outputs.attentions[0][0, 10], atol=1e-5)',
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: "bear sleeps" à mão
def _atencao_bs(ns, escala=True, dim=-1, v_de=None):
    """softmax(X Xᵀ/√2) e A V em NumPy (float64), com X = as linhas de bear e sleeps em E_toy."""
    e_toy = como_array(ns["E_toy"]).astype(np.float64)
    vocab = ns["vocab"]
    x = e_toy[[vocab["bear"], vocab["sleeps"]]]
    s = x @ x.T / (math.sqrt(x.shape[1]) if escala else 1.0)
    w = np.exp(s - s.max(axis=dim, keepdims=True))
    a = w / w.sum(axis=dim, keepdims=True)
    v = x if v_de is None else e_toy[[vocab[p] for p in v_de.split()]]
    return {"X_bs": x, "A_bs_hand": a, "Z_bs_hand": a @ v}


ex2 = Exercicio(
    "cap02_atencao_camada.ex2", "o mini-corpus à mão com \"bear sleeps\"", ("X_bs", "A_bs_hand", "Z_bs_hand"),
    dicas=(
        "Pegue em `E_toy` as linhas de `bear` e de `sleeps` (use `vocab`), nessa ordem: essa matriz 2 × 2 é X, "
        "e também Q, K e V, porque W_Q = W_K = W_V = I.",
        "Os escores são X Xᵀ/√2 (d_k = 2), e o softmax é por linha: `torch.softmax(..., dim=-1)`.",
        "Z = A V, com V = X. Confira com `scaled_dot_product_attention(X_bs, X_bs, X_bs)`, que devolve `(Z, A)`.",
    ),
    esperado=_atencao_bs,
    erros_comuns=(
        ErroComum("as linhas de `X_bs` estão na ordem trocada: a primeira é a de `bear`, a segunda a de `sleeps`.",
                  lambda ns: {"X_bs": _atencao_bs(ns)["X_bs"][::-1]}, dica=1),
        ErroComum("faltou dividir os escores por √d_k = √2 antes do softmax.",
                  lambda ns: _atencao_bs(ns, escala=False)),
        ErroComum("o softmax foi tomado por coluna: cada linha de A (a distribuição de uma query) é que deve "
                  "somar 1, `dim=-1`.",
                  lambda ns: _atencao_bs(ns, dim=0)),
        ErroComum("A está certa, mas Z misturou os vetores de \"teddy reads\" (`V_toy`): aqui V = X_bs.",
                  lambda ns: {"Z_bs_hand": _atencao_bs(ns, v_de="teddy reads")["Z_bs_hand"]}),
    ),
    inicio="""
X_bs = ____         # os embeddings de "bear sleeps": matriz 2 × 2, uma linha por token
A_bs_hand = ____    # os pesos de atenção, 2 × 2, calculados à mão
Z_bs_hand = ____    # a saída Z = A V, 2 × 2
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 3: por que √d_k
_DIMENSOES = (2, 32, 512)


def _tres_numeros(valor, nome):
    arr = como_array(valor)
    if arr is None or arr.shape != (3,) or arr.dtype.kind not in "biuf":
        raise Incorreto(f"`{nome}` deveria ser uma lista com 3 números, um para cada d_k = 2, 32, 512.")
    return arr.astype(np.float64)


def _produtos(valor):
    """Os três vetores de produtos q·k do leitor, como arrays float64 (ou ``Incorreto``)."""
    if not isinstance(valor, (list, tuple)) or len(valor) != 3:
        raise Incorreto("`dots` deveria ser uma lista com 3 vetores de produtos q·k, um para cada d_k = 2, 32, "
                        "512.")
    saida = []
    for d, v in zip(_DIMENSOES, valor):
        arr = como_array(v)
        if arr is None or arr.ndim != 1 or arr.dtype.kind not in "f":
            raise Incorreto(f"com d_k = {d}, `dots` deveria ser um vetor de floats: os N produtos q·k.")
        if arr.size < 20000:
            raise Incorreto(f"com d_k = {d}, `dots` tem {arr.size} produtos; sorteie N = 20 000 pares.")
        saida.append(arr.astype(np.float64))
    return saida


def _curtose(x):
    x = x - x.mean()
    return float((x ** 4).mean() / (x ** 2).mean() ** 2 - 3)


def _conferir_ex2(valores, ns):
    produtos = _produtos(valores["dots"])
    # q·k com d_k = 2 é a soma de 2 produtos de normais: caudas pesadas (curtose em excesso 6/d_k, 3 com d_k = 2).
    # Um vetor sorteado direto de uma normal com variância d_k (sem fazer o produto) tem curtose 0.
    if _curtose(produtos[0]) < 1.0:
        raise Incorreto("com d_k = 2, os seus `dots` têm a distribuição de uma normal, não a de q·k (uma soma de "
                        "2 produtos de normais tem caudas bem mais pesadas): sorteie `q` e `k` e faça o "
                        "produto interno linha a linha.")
    brutas = _tres_numeros(valores["raw_vars"], "raw_vars")
    if not np.allclose(brutas, [p.var(ddof=1) for p in produtos], rtol=1e-3, atol=0.0):
        raise Incorreto("`raw_vars` não é a variância dos seus `dots`: calcule `dots.var()` para cada d_k, com os "
                        "produtos que você sorteou (e não o valor que a teoria prevê).")
    escaladas = _tres_numeros(valores["scaled_vars"], "scaled_vars")
    for d, v in zip(_DIMENSOES, brutas):
        if not (np.isfinite(v) and v > 0):
            raise Incorreto(f"`raw_vars` com d_k = {d} deveria ser uma variância, um número positivo.")
        if abs(v / d - 1) > 0.1:
            if abs(v / math.sqrt(d) - 1) < 0.1:
                raise Incorreto(f"com d_k = {d}, `raw_vars` parece um desvio-padrão: o pedido é a variância "
                                "(`.var()`, não `.std()`).")
            raise Incorreto(f"com d_k = {d}, a variância de q·k em `raw_vars` ({v:.3g}) está longe do que a "
                            "teoria prevê: sorteie as coordenadas com `torch.randn` (média 0, variância 1) e use "
                            "ao menos 20 000 pares.")
    if not np.allclose(escaladas, brutas / np.array(_DIMENSOES), rtol=1e-4, atol=0.0):
        if np.all(np.abs(escaladas - 1) < 0.1):
            raise Incorreto("`scaled_vars` parece vir de outro sorteio: divida os mesmos produtos `dots` de "
                            "`raw_vars` por √d_k antes de tirar a variância.")
        raise Incorreto("`scaled_vars` não é a variância de q·k/√d_k, com q·k os mesmos produtos de `raw_vars`.")


def _escaladas_erradas(ns, potencia):
    """A variância dividida por d_k**potencia, a partir da `raw_vars` do próprio leitor."""
    brutas = _tres_numeros(ns["raw_vars"], "raw_vars")
    if any(abs(v / d - 1) > 0.1 for v, d in zip(brutas, _DIMENSOES)):
        raise ValueError("raw_vars fora da faixa: o diagnóstico próprio da conferência vale mais")
    return {"scaled_vars": [v / d**potencia for v, d in zip(brutas, _DIMENSOES)]}


ex3 = Exercicio(
    "cap02_atencao_camada.ex3", "a variância de q·k com e sem √d_k", ("dots", "raw_vars", "scaled_vars"),
    dicas=(
        "Para cada d_k, sorteie duas matrizes `torch.randn(N, d_k)`, com N = 20 000 linhas (cada linha é um "
        "par q, k), faça o produto interno linha a linha e tire a variância dos N números.",
        "O produto interno linha a linha é `dots_d = (q_s * k_s).sum(dim=-1)` (um vetor de N números por d_k, "
        "guardado na lista `dots`) e a variância, `dots_d.var()`. Para `scaled_vars`, use os mesmos `dots_d`, "
        "divididos por `d**0.5`.",
        "Compare cada número de `raw_vars` com o seu d_k: cada parcela q_m·k_m tem variância 1, e as d_k "
        "parcelas são independentes.",
    ),
    conferir=_conferir_ex2,
    erros_comuns=(
        ErroComum("você dividiu q·k por d_k, e não por √d_k: a variância caiu para perto de 1/d_k.",
                  lambda ns: _escaladas_erradas(ns, 2)),
        ErroComum("`scaled_vars` é igual a `raw_vars`: faltou dividir os produtos por √d_k antes de tirar a "
                  "variância.",
                  lambda ns: _escaladas_erradas(ns, 0)),
        ErroComum("você dividiu a variância por √d_k; dividir q·k por √d_k divide a variância por d_k (a "
                  "variância cresce com o quadrado da escala).",
                  lambda ns: _escaladas_erradas(ns, 0.5)),
    ),
    atalhos=(
        ErroComum("`raw_vars` não é a variância dos seus `dots`: calcule `dots.var()` para cada d_k, com os "
                  "produtos que você sorteou (e não o valor que a teoria prevê).",
                  lambda ns: {"raw_vars": [2.0, 32.0, 512.0], "scaled_vars": [1.0, 1.0, 1.0]}),
    ),
    inicio="""
dots = ____         # 3 vetores (um por d_k = 2, 32, 512) com os N = 20 000 produtos q·k sorteados
raw_vars = ____     # 3 floats: a variância estimada de q·k para d_k = 2, 32, 512
scaled_vars = ____  # 3 floats: a variância de q·k/√d_k, com os mesmos produtos
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 4: [PAD] em todas as camadas
def _pad_max(ns, linha=1, nas_colunas=True, com_mascara=True):
    """Para cada camada (linha) e cabeça (coluna), o maior peso ligado às posições de [PAD] da frase
    curta: uma matriz 6 × 12. Um erro comum dá 72 números positivos, diferentes de um erro para outro
    (o máximo de todos não serviria: vários deles passam de 0,999 por causa da cabeça do token anterior)."""
    import torch

    model, batch = ns["model"], ns["batch"]
    entradas = dict(batch) if com_mascara else {"input_ids": batch["input_ids"]}
    with torch.no_grad():
        atencoes = model(**entradas, output_attentions=True).attentions
    pad = batch["attention_mask"][1] == 0
    por_camada = []
    for att in atencoes:
        a = att[linha]                                    # (cabeças, n, n)
        parte = a[..., pad] if nas_colunas else a[:, pad, :]
        por_camada.append(parte.abs().amax(dim=(-2, -1)).double().cpu().numpy())
    return np.stack(por_camada)


def _zeros_ex4(ns):
    cfg = ns["model"].config
    return {"pad_max": np.zeros((cfg.num_hidden_layers, cfg.num_attention_heads))}


ex4 = Exercicio(
    "cap02_atencao_camada.ex4", "o peso de [PAD] em todas as camadas e cabeças", ("pad_max", "pad_max_no_mask"),
    dicas=(
        "Rode o modelo no lote inteiro com `output_attentions=True`: você recebe, para cada camada, um tensor "
        "(lote, cabeças, n, n).",
        "A frase curta é a linha 1 do lote. As posições de `[PAD]` são as colunas (as keys) em que "
        "`batch['attention_mask'][1]` vale 0.",
        "Em cada camada, `att[1][..., is_pad]` tem forma (12, n, 5), e `.amax(dim=(-2, -1))` dá o maior peso "
        "de cada cabeça; empilhe as 6 camadas com `torch.stack`.",
    ),
    esperado=lambda ns: {**_zeros_ex4(ns), "pad_max_no_mask": _pad_max(ns, com_mascara=False)},
    erros_comuns=(
        ErroComum("o modelo rodou sem a `attention_mask`, e aí o `[PAD]` é lido como um token qualquer: passe "
                  "o lote inteiro, `model(**batch, output_attentions=True)`.",
                  lambda ns: {"pad_max": _pad_max(ns, com_mascara=False)}),
        ErroComum("esses são os pesos das linhas de `[PAD]` (as queries), que olham para as palavras: o pedido é "
                  "o peso que a frase dá às colunas de `[PAD]`, `att[1][..., is_pad]`.",
                  lambda ns: {"pad_max": _pad_max(ns, nas_colunas=False)}),
        ErroComum("essa é a frase longa (linha 0 do lote), que não tem `[PAD]`: a frase curta é a linha 1.",
                  lambda ns: {"pad_max": _pad_max(ns, linha=0)}),
        ErroComum("`pad_max_no_mask` saiu zerado: o modelo ainda recebeu a `attention_mask`; para ver o que ela "
                  "evita, passe só os `input_ids`.",
                  lambda ns: {"pad_max_no_mask": _zeros_ex4(ns)["pad_max"]}),
    ),
    inicio="""
pad_max = ____      # tensor 6 × 12: o maior peso que cada cabeça (coluna) de cada camada (linha) dá a um [PAD]
pad_max_no_mask = ____  # o mesmo 6 × 12, com o modelo rodado só com os input_ids (sem a attention_mask)
""",
    contexto=_contexto, rtol=1e-3, atol=1e-6,
)


# ---------------------------------------------------------------- exercício 5: os 22,7 M parâmetros
def _partes(ns, so_qkv=False, so_w1=False, camadas=None):
    """A conta fechada, a partir da configuração: cada Linear tem entrada × saída + saída (o viés) e cada
    LayerNorm tem 2d (γ e β)."""
    model = ns["model"]
    cfg = model.config
    d, f = cfg.hidden_size, cfg.intermediate_size
    n_camadas = cfg.num_hidden_layers if camadas is None else camadas

    def linear(entrada, saida):
        return entrada * saida + saida

    atencao = 3 * linear(d, d) if so_qkv else 4 * linear(d, d) + 2 * d       # Q, K, V, W_O e a LayerNorm
    ffn = linear(d, f) if so_w1 else linear(d, f) + linear(f, d) + 2 * d     # W_1, W_2 e a LayerNorm
    return {
        "embeddings de tokens": cfg.vocab_size * d,
        "posição + segmento + LayerNorm": (cfg.max_position_embeddings + cfg.type_vocab_size) * d + 2 * d,
        "atenção (6 camadas)": n_camadas * atencao,
        "FFN (6 camadas)": n_camadas * ffn,
        "pooler": linear(d, d) if getattr(model, "pooler", None) is not None else 0,
    }


def _esperado_ex6(ns):
    partes = _partes(ns)
    return {"parts": partes, "frac_tok": partes["embeddings de tokens"] / sum(partes.values())}


ex5 = Exercicio(
    "cap02_atencao_camada.ex5", "onde ficam os parâmetros do MiniLM", ("parts", "frac_tok"),
    dicas=(
        "`p.numel()` conta os números de um tensor de parâmetros; some-os sobre `modulo.parameters()` de cada "
        "parte. A tabela de tokens é `model.embeddings.word_embeddings.weight`.",
        "A atenção de uma camada é tudo o que está em `blk.attention` (Q, K, V, W_O e a LayerNorm do "
        "sub-bloco); a FFN, `blk.intermediate` (W₁) mais `blk.output` (W₂ e a sua LayerNorm). Percorra "
        "`model.encoder.layer`.",
        "As cinco partes têm de somar `n_params`; a fração pedida é a parte da tabela de tokens dividida por "
        "esse total, um número entre 0 e 1.",
    ),
    esperado=_esperado_ex6,
    erros_comuns=(
        ErroComum("na atenção faltaram W_O e a LayerNorm do sub-bloco: `blk.attention.self` tem só Q, K e V; "
                  "conte `blk.attention` inteiro.",
                  lambda ns: {"parts": _partes(ns, so_qkv=True)}),
        ErroComum("na FFN faltou a segunda matriz: `blk.intermediate` tem só W₁; W₂ (com a LayerNorm) está em "
                  "`blk.output`.",
                  lambda ns: {"parts": _partes(ns, so_w1=True)}),
        ErroComum("a atenção e a FFN foram contadas numa camada só; o MiniLM tem 6.",
                  lambda ns: {"parts": _partes(ns, camadas=1)}),
        ErroComum("`frac_tok` parece estar em porcentagem: o pedido é a fração, entre 0 e 1.",
                  lambda ns: {"frac_tok": 100 * _esperado_ex6(ns)["frac_tok"]}),
    ),
    inicio="""
parts = {
    "embeddings de tokens": ____,             # int: a tabela E de tokens
    "posição + segmento + LayerNorm": ____,   # int: o resto de model.embeddings
    "atenção (6 camadas)": ____,              # int: blk.attention, somado nas 6 camadas
    "FFN (6 camadas)": ____,                  # int: blk.intermediate e blk.output, nas 6 camadas
    "pooler": ____,                           # int: model.pooler (0 se não houver)
}
frac_tok = ____     # a fração (entre 0 e 1) de todos os parâmetros que fica na tabela de tokens
""",
    contexto=_contexto,
)

