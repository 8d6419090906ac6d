"""Exercícios conferíveis do Apêndice A, primeira parte (GPT do zero): o bloco pós-norm e os tamanhos do
GPT-2. Os da segunda parte (a atenção com Q, K e V separados) estão em ``apA_treino``.
"""
from __future__ import annotations

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "apendice_a_gpt_do_zero"
_contexto = celulas_do_notebook(NOTEBOOK, (
    "0ead0ebc", "62916eca", "0373939b", "21921a3f", "42076907", "45919a8b", "ad8a7091", "34129610",
    "44458412", "45d948d7"))


# ---------------------------------------------------------------- exercício 1: o bloco pós-norm
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


ex1 = Exercicio(
    "apendice_a_gpt_do_zero.ex1", "o bloco pós-norm com os pesos de `block`", ("y_post",),
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


# ---------------------------------------------------------------- exercício 2: os outros GPT-2
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


ex2 = Exercicio(
    "apendice_a_gpt_do_zero.ex2", "parâmetros e memória do GPT-2 medium, large e XL", ("counts_untied", "counts_tied", "mib_untied"),
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
