"""Exercícios conferíveis do Apêndice A, primeira parte (GPT do zero).

Os dois primeiros são núcleo: o leitor escreve a LayerNorm (seção A.3), conferida contra
``torch.nn.functional.layer_norm``, e os pesos da atenção causal (seção A.7), conferidos contra a
``scaled_dot_product_attention`` do PyTorch com ``is_causal=True``, em tensores que o notebook não mostra.
Os opcionais: o bloco pós-norm e os tamanhos do GPT-2. Os da segunda parte (a atenção com Q, K e V
separados) estão em ``apA_treino``.
"""
from __future__ import annotations

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "apendice_a_gpt_do_zero"
_contexto = celulas_do_notebook(NOTEBOOK, (
    "0ead0ebc", "62916eca", "77530039", "0373939b", "21921a3f", "42076907", "45919a8b", "ad8a7091", "34129610",
    "44458412", "45d948d7"))


# ---------------------------------------------------------------- exercício 1 (núcleo): a LayerNorm
def _casos_ex1(ns):
    """Tensores, γ e β sorteados (float64), com médias e escalas longe de 0 e 1, e dois ε."""
    import torch

    g = torch.Generator().manual_seed(510)
    casos = []
    for forma, eps, centro, escala in (((3, 5), 1e-5, 0.0, 1.0), ((2, 4, 16), 1e-5, 100.0, 30.0),
                                       ((7, 8), 0.5, -2.0, 0.3), ((1, 768), 1e-5, 0.5, 2.0)):
        d = forma[-1]
        x = centro + escala * torch.randn(*forma, generator=g, dtype=torch.float64)
        gamma = torch.randn(d, generator=g, dtype=torch.float64)
        beta = torch.randn(d, generator=g, dtype=torch.float64)
        casos.append((x, gamma, beta, eps))
    return casos


def _ln_do_pytorch(x, gamma, beta, eps):
    import torch.nn.functional as F

    return F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)


def _ln_errada(x, gamma, beta, eps, amostral=False, eps_fora=False, afim=True, dim=-1):
    import torch

    mu = torch.mean(x, dim=dim, keepdim=True)
    var = torch.var(x, dim=dim, unbiased=amostral, keepdim=True)
    z = (x - mu) / (torch.sqrt(var) + eps if eps_fora else torch.sqrt(var + eps))
    return gamma * z + beta if afim else z


ex1 = Exercicio(
    "apendice_a_gpt_do_zero.ex1", "a LayerNorm", ("my_layer_norm",),
    dicas=(
        "Tudo na última dimensão (`dim=-1`, com `keepdim=True` para a conta voltar a casar com x): a média μ e a "
        "variância σ² de cada vetor.",
        "A variância da LayerNorm é a populacional: `x.var(-1, unbiased=False, keepdim=True)` (divide por d, não "
        "por d − 1, como o padrão de `torch.var`).",
        "`gamma * (x - mu) / torch.sqrt(sigma2 + eps) + beta`: o ε fica **dentro** da raiz.",
    ),
    esperado=lambda ns: {"my_layer_norm": _ln_do_pytorch},
    entradas=_casos_ex1,
    rtol=1e-6, atol=1e-8,
    erros_comuns=(
        ErroComum("a variância é a amostral (divide por d − 1): a LayerNorm usa a populacional, "
                  "`unbiased=False`. Com d pequeno a diferença é grande (um fator √(d/(d − 1)) na saída).",
                  lambda ns: {"my_layer_norm": lambda x, g, b, e: _ln_errada(x, g, b, e, amostral=True)},
                  dica="Troque `x.var(-1, keepdim=True)` por `x.var(-1, unbiased=False, keepdim=True)`."),
        ErroComum("o ε foi somado ao desvio padrão, fora da raiz: a fórmula é (x − μ)/√(σ² + ε).",
                  lambda ns: {"my_layer_norm": lambda x, g, b, e: _ln_errada(x, g, b, e, eps_fora=True)}),
        ErroComum("faltaram γ e β: depois de normalizar, multiplique por `gamma` e some `beta` (os parâmetros que "
                  "deixam a rede desfazer a normalização).",
                  lambda ns: {"my_layer_norm": lambda x, g, b, e: _ln_errada(x, g, b, e, afim=False)}),
        ErroComum("a média e a variância foram tiradas na dimensão errada (dim=0, entre os vetores): cada vetor "
                  "se normaliza sozinho, na última dimensão.",
                  lambda ns: {"my_layer_norm": lambda x, g, b, e: _ln_errada(x, g, b, e, dim=0)}),
    ),
    proibidas=("torch.nn.functional.layer_norm", "torch.layer_norm", "torch.native_layer_norm",
               "torch.ops.aten.native_layer_norm", "torch.ops.aten.layer_norm", "torch.nn.LayerNorm",
               "torch.nn.functional.normalize", "torch.nn.functional.group_norm",
               "torch.nn.functional.instance_norm", "torch.nn.functional.batch_norm",
               "lncc_llm.gpt.layer_norm", "lncc_llm.gpt.LayerNorm"),
    tipo="nucleo",
    inicio="""
def my_layer_norm(x, gamma, beta, eps):
    \"\"\"LayerNorm na última dimensão de x (…, d): γ ⊙ (x − μ)/√(σ² + ε) + β (seção A.3).

    gamma e beta: (d,); a variância é a populacional (divide por d).
    \"\"\"
    return ____
""",
    seguir="layer_norm = my_layer_norm",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2 (núcleo): a atenção causal
def _casos_ex2(ns):
    import torch

    g = torch.Generator().manual_seed(520)
    return [(torch.randn(*forma, generator=g, dtype=torch.float64),
             torch.randn(*forma, generator=g, dtype=torch.float64))
            for forma in ((1, 2, 5, 8), (2, 3, 4, 16), (1, 1, 1, 4), (3, 12, 7, 64))]


def _pesos_do_pytorch(q, k):
    """Os pesos pela atenção do PyTorch: com V = identidade, a saída A·V é a própria A."""
    import torch
    import torch.nn.functional as F

    n = q.shape[-2]
    identidade = torch.eye(n, dtype=q.dtype).expand(*q.shape[:-2], n, n)
    return F.scaled_dot_product_attention(q, k, identidade, is_causal=True)


def _pesos_errados(q, k, mascara="futuro", escala="raiz", dim=-1, com_zero=False):
    import math

    import torch

    n, d_h = q.shape[-2], q.shape[-1]
    s = q @ k.transpose(-2, -1) / {"raiz": math.sqrt(d_h), "nenhuma": 1.0, "d": float(d_h)}[escala]
    if mascara == "futuro":
        fora = torch.ones(n, n, dtype=torch.bool).triu(1)
    elif mascara == "diagonal":
        fora = torch.ones(n, n, dtype=torch.bool).triu(0)
    else:
        fora = None
    if fora is not None:
        s = s.masked_fill(fora, 0.0 if com_zero else float("-inf"))
    return torch.softmax(s, dim=dim).nan_to_num(0.0)


ex2 = Exercicio(
    "apendice_a_gpt_do_zero.ex2", "os pesos da atenção causal", ("my_causal_weights",),
    dicas=(
        "Os escores são `q @ k.transpose(-2, -1) / math.sqrt(d_h)`, com d_h = `q.shape[-1]`: uma matriz (n, n) "
        "por cabeça, a linha i comparando a query i com cada key.",
        "A máscara marca o futuro, j > i: `torch.ones(n, n, dtype=torch.bool).triu(1)`. Ponha −∞ nessas casas com "
        "`scores.masked_fill(mascara, float('-inf'))`: a exponencial de −∞ é 0.",
        "O softmax é por linha (`dim=-1`): cada query distribui 1 de peso entre as posições que vê, ela mesma "
        "inclusive.",
    ),
    esperado=lambda ns: {"my_causal_weights": _pesos_do_pytorch},
    entradas=_casos_ex2,
    rtol=1e-6, atol=1e-8,
    erros_comuns=(
        ErroComum("faltou a máscara: cada posição está olhando para o futuro, o que um modelo que gera texto não "
                  "pode fazer (no treino, seria colar a resposta).",
                  lambda ns: {"my_causal_weights": lambda q, k: _pesos_errados(q, k, mascara=None)}),
        ErroComum("a máscara tirou também a diagonal: a posição i pode olhar para si mesma (j ≤ i); só j > i fica "
                  "de fora. Use `triu(1)`, não `triu(0)`.",
                  lambda ns: {"my_causal_weights": lambda q, k: _pesos_errados(q, k, mascara="diagonal")}),
        ErroComum("o futuro recebeu 0 no escore, não −∞: exp(0) = 1, e as posições futuras continuam com peso. "
                  "O −∞ é o que zera o peso depois do softmax.",
                  lambda ns: {"my_causal_weights": lambda q, k: _pesos_errados(q, k, com_zero=True)}),
        ErroComum("faltou dividir por √d_h: os escores crescem com a dimensão e o softmax satura.",
                  lambda ns: {"my_causal_weights": lambda q, k: _pesos_errados(q, k, escala="nenhuma")}),
        ErroComum("a divisão foi por d_h, não por √d_h.",
                  lambda ns: {"my_causal_weights": lambda q, k: _pesos_errados(q, k, escala="d")}),
        ErroComum("o softmax foi feito por coluna (dim=−2): cada linha (uma query) é que tem de somar 1.",
                  lambda ns: {"my_causal_weights": lambda q, k: _pesos_errados(q, k, dim=-2)}),
    ),
    proibidas=("torch.nn.functional.scaled_dot_product_attention", "torch._C._nn.scaled_dot_product_attention",
               "torch.ops.aten.scaled_dot_product_attention",
               "torch.ops.aten._scaled_dot_product_attention_math",
               "lncc_llm.gpt.causal_attention_weights",
               "lncc_llm.gpt.CausalSelfAttention", "lncc_llm.attention.scaled_dot_product_attention",
               "lncc_llm.attention.causal_mask", "lncc_llm.attention.multi_head_attention"),
    tipo="nucleo",
    inicio="""
def my_causal_weights(q, k):
    \"\"\"Os pesos da atenção causal (seção A.7): softmax(q kᵀ/√d_h), com −∞ onde a key vem depois.

    q, k: (…, n, d_h), as queries e as keys de cada cabeça. Devolve (…, n, n); cada linha soma 1.
    \"\"\"
    return ____
""",
    seguir="causal_attention_weights = my_causal_weights",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 3: o bloco pós-norm
def _pos_norm(ns, modo="certo"):
    """A saída do bloco com os pesos de ``block`` sobre ``x_block``, pelas funções do PyTorch (a atenção
    pela ``scaled_dot_product_attention``, a LayerNorm por ``F.layer_norm``), com as normas onde ``modo`` diz."""
    import torch
    import torch.nn.functional as F

    bloco, x = ns["block"], ns["x_block"]
    d = x.shape[-1]
    att, ffn = bloco.attn, bloco.ffn

    def atencao(h):
        b, n, _ = h.shape
        q, k, v = (t.view(b, n, att.n_heads, d // att.n_heads).transpose(1, 2)
                   for t in F.linear(h, att.qkv.weight, att.qkv.bias).split(d, dim=-1))
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return F.linear(z.transpose(1, 2).reshape(b, n, d), att.proj.weight, att.proj.bias)

    def rede(h):
        meio = F.gelu(F.linear(h, ffn.up.weight, ffn.up.bias), approximate="tanh")
        return F.linear(meio, ffn.down.weight, ffn.down.bias)

    def ln(h, norma):
        return F.layer_norm(h, (d,), norma.gamma, norma.beta, norma.eps)

    with torch.no_grad():
        if modo == "pre":                      # o bloco da seção A.7
            h = x + atencao(ln(x, bloco.attn_norm))
            y = h + rede(ln(h, bloco.ffn_norm))
        elif modo == "subcamada":              # x + LN(F(x))
            h = x + ln(atencao(x), bloco.attn_norm)
            y = h + ln(rede(h), bloco.ffn_norm)
        elif modo == "so_a_ultima":            # esqueceu a LayerNorm depois da atenção
            h = x + atencao(x)
            y = ln(h + rede(h), bloco.ffn_norm)
        else:                                  # pós-norm: LN(x + F(x)), duas vezes
            h = ln(x + atencao(x), bloco.attn_norm)
            y = ln(h + rede(h), bloco.ffn_norm)
    return {"y_post": y}


ex3 = Exercicio(
    "apendice_a_gpt_do_zero.ex3", "o bloco pós-norm com os pesos de `block`", ("y_post",),
    dicas=(
        "Não crie pesos novos: reaproveite os submódulos de `block` (`attn`, `ffn`, `attn_norm`, `ffn_norm`); "
        "só muda a ordem em que eles são aplicados.",
        "Na pós-norm, a atenção e a FFN recebem a entrada sem normalizar, e a LayerNorm vem depois de cada "
        "soma: primeiro `h = LN(x + atenção(x))`, depois o mesmo com a FFN sobre `h`.",
        "Rode com o bloco em `eval()` (sem dropout) e dentro de `torch.no_grad()`; cada token da saída deve "
        "ter média ≈ 0 e desvio ≈ 1.",
    ),
    esperado=_pos_norm,
    erros_comuns=(
        ErroComum("essa é a saída do bloco pré-norm da seção A.7: na pós-norm a LayerNorm vem depois da soma "
                  "residual, e não na entrada da atenção e da FFN.",
                  lambda ns: _pos_norm(ns, "pre")),
        ErroComum("a LayerNorm foi aplicada só à saída da atenção e da FFN, x + LN(F(x)); ela normaliza a soma "
                  "inteira, LN(x + F(x)).",
                  lambda ns: _pos_norm(ns, "subcamada")),
        ErroComum("faltou a LayerNorm depois da primeira soma, a da atenção: na pós-norm são duas, uma depois "
                  "de cada soma residual.",
                  lambda ns: _pos_norm(ns, "so_a_ultima")),
    ),
    inicio="""
# escreva aqui a sua variante pós-norm do bloco (uma classe ou uma função)
y_post = ____       # tensor (2, 4, 768): a sua variante, com os pesos de `block`, aplicada a `x_block`
""",
    contexto=_contexto, rtol=1e-4, atol=1e-5,
)


# ---------------------------------------------------------------- exercício 4: os outros GPT-2
_TAMANHOS = {"medium": (1024, 24), "large": (1280, 36), "XL": (1600, 48)}     # d e camadas


def _parametros(ns, d, camadas, amarrado=False, vies_qkv=False):
    """A conta fechada: dois embeddings, os blocos (12d² + 10d cada), a LayerNorm final e a saída."""
    cfg = ns["GPT_CONFIG_124M"]
    v, s = cfg.vocab_size, cfg.max_seq_len
    por_bloco = 3 * d * d + (d * d + d) + (8 * d * d + 5 * d) + 4 * d   # Q/K/V, W_O, FFN, 2 LayerNorms
    total = v * d + s * d + camadas * por_bloco + 2 * d + (0 if amarrado else v * d)
    return total + (3 * d * camadas if vies_qkv else 0)


def _contagens_ex2(ns, amarrado, vies_qkv=False):
    return {nome: _parametros(ns, d, camadas, amarrado, vies_qkv) for nome, (d, camadas) in _TAMANHOS.items()}


def _memoria_ex2(ns, bytes_=4, unidade=2**20):
    return {nome: n * bytes_ / unidade for nome, n in _contagens_ex2(ns, amarrado=False).items()}


ex4 = Exercicio(
    "apendice_a_gpt_do_zero.ex4", "parâmetros e memória do GPT-2 medium, large e XL", ("counts_untied", "counts_tied", "mib_untied"),
    dicas=(
        "Para cada tamanho, troque `d_model`, `n_heads` e `n_layers` com `GPT_CONFIG_124M.replace(...)` e "
        "conte com `count_parameters`; dentro de `with torch.device(\"meta\"):` o modelo não ocupa memória.",
        "A versão amarrada sai de `tie_weights=True`: ela tem 50 257 · d parâmetros a menos que a outra.",
        "Em `float32` cada parâmetro ocupa 4 bytes, e 1 MiB = 2**20 = 1 048 576 bytes.",
    ),
    esperado=lambda ns: {"counts_untied": _contagens_ex2(ns, amarrado=False),
                         "counts_tied": _contagens_ex2(ns, amarrado=True),
                         "mib_untied": _memoria_ex2(ns)},
    erros_comuns=(
        ErroComum("as contagens amarradas incluem o viés de Q, K e V (3d por camada): essas são as do "
                  "`GPT2LMHeadModel`; o nosso `GPTModel` não tem esse viés (`qkv_bias=False`).",
                  lambda ns: {"counts_tied": _contagens_ex2(ns, amarrado=True, vies_qkv=True)}),
        ErroComum("essa é a memória com 2 bytes por parâmetro (float16 ou bfloat16); em float32 cada parâmetro "
                  "ocupa 4 bytes.",
                  lambda ns: {"mib_untied": _memoria_ex2(ns, bytes_=2)}),
        ErroComum("essa memória está em MB (10⁶ bytes); o pedido é em MiB, 2²⁰ = 1 048 576 bytes.",
                  lambda ns: {"mib_untied": _memoria_ex2(ns, unidade=10**6)}),
    ),
    inicio="""
counts_untied = ____  # dict {"medium": int, "large": int, "XL": int}: parâmetros sem amarração
counts_tied = ____    # o mesmo dicionário, com amarração (tie_weights=True)
mib_untied = ____     # dict com as mesmas chaves: memória em float32 do modelo sem amarração, em MiB
""",
    contexto=_contexto,
)
