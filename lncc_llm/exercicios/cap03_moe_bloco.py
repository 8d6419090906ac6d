"""Exercícios conferíveis do Capítulo 3, segunda parte: os parâmetros de um MoE top-2 e o KV cache do
Mixtral."""
from __future__ import annotations

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap03_moe_bloco"
_contexto = celulas_do_notebook(NOTEBOOK, (
    "cap03b-setup", "cap03b-imports", "cap03b-exemplo", "bf107f7f", "0363fd5b", "0f542d34", "53135d32",
    "dc16a155"))


# ---------------------------------------------------------------- exercício 1: MoE top-2
def _contagens(ns, k):
    d, f, e = ns["d_model"], ns["d_ff"], ns["n_experts"]
    p = d * f + f + f * d + d          # um especialista: d → d_ff (com viés) e d_ff → d (com viés)
    roteador = d * e
    return {"especialistas_total": e * p, "especialistas_ativos": k * p, "ativos": k * p + roteador}


def _portas(ns, gate="renormalizado"):
    """As portas da camada top-2 (semente 1) nos tokens ``X`` da lição, pelo ``top_k_route`` do pacote."""
    import torch

    from ..moe import MoELayer, top_k_route

    camada = MoELayer(ns["d_model"], ns["d_ff"], ns["n_experts"], k=2,
                      generator=torch.Generator().manual_seed(1)).double()
    with torch.no_grad():
        return top_k_route(camada.router(ns["X"]), k=2, gate=gate).gates


ex1 = Exercicio(
    "cap03_moe_bloco.ex1", "portas e parâmetros de um MoE top-2", ("gates_top2", "counts_top2", "ratio"),
    dicas=(
        "Um especialista é uma FFN d → d_ff → d com vieses: conte P à mão. Com k = 2, quantos trabalham por "
        "token?",
        "Monte `MoELayer(d_model, d_ff, n_experts, k=2, generator=torch.Generator().manual_seed(1)).double()` "
        "(em float64, como o `X` da lição), rode `_, routing_top2 = moe_top2(X)` sob `torch.no_grad()` e tire "
        "as portas de `routing_top2.gates` (o `routing` da lição é o do k = 1); conte com `moe_parameter_counts`.",
        "A razão pedida é especialistas no total dividido por especialistas ativos.",
    ),
    esperado=lambda ns: {"gates_top2": _portas(ns), "counts_top2": _contagens(ns, 2), "ratio": ns["n_experts"] / 2},
    erros_comuns=(
        ErroComum("essas são as portas do Switch (cada uma é a própria p_e, sem renormalizar): com k = 2, as duas "
                  "portas de cada token têm de somar 1, como no Mixtral.",
                  lambda ns: {"gates_top2": _portas(ns, gate="switch")},
                  dica="Com k = 2, divida as duas probabilidades escolhidas pela soma delas (`gate=\"renormalizado\"`, "
                       "o padrão do `MoELayer` quando k > 1); as portas de cada token somam 1."),
        ErroComum("essas são as contagens de k = 1: a camada deste exercício tem k = 2.",
                  lambda ns: {"counts_top2": _contagens(ns, 1)}),
        ErroComum("a razão está invertida: pede-se total / ativos, que é maior que 1.",
                  lambda ns: {"ratio": 2 / ns["n_experts"]}),
    ),
    inicio="""
gates_top2 = ____   # as portas da camada com k = 2 nos tokens X: um tensor (T, 2), o `gates` do roteamento
counts_top2 = ____  # moe_parameter_counts da camada com k = 2
ratio = ____        # especialistas: total / ativos
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: KV cache do Mixtral
def _kv(ns, cabecas_kv, fator_kv=2, bytes_=2, tokens=32768):
    mix = ns["mix"]
    return fator_kv * mix["layers"] * cabecas_kv * (mix["hidden"] // mix["heads"]) * tokens * bytes_


ex2 = Exercicio(
    "cap03_moe_bloco.ex2", "o KV cache do Mixtral em GiB", ("bytes_gqa", "gib_gqa", "gib_mha"),
    dicas=(
        "O cache guarda K e V (fator 2), em cada camada, para cada cabeça de key/value, d_cabeça números por "
        "token.",
        "bf16 ocupa 2 bytes por número; com GQA há 8 cabeças de K/V, com multi-cabeça, 32.",
        "`kv_cache_bytes(camadas, cabeças_kv, d_cabeça, tokens, bytes_per_value=2)` faz a conta; confira à mão.",
    ),
    esperado=lambda ns: {"bytes_gqa": _kv(ns, ns["mix"]["kv_heads"]),
                         "gib_gqa": _kv(ns, ns["mix"]["kv_heads"]) / 2**30,
                         "gib_mha": _kv(ns, ns["mix"]["heads"]) / 2**30},
    erros_comuns=(
        ErroComum("faltou o fator 2: o cache guarda K e também V.",
                  lambda ns: {"gib_gqa": _kv(ns, ns["mix"]["kv_heads"], fator_kv=1) / 2**30}),
        ErroComum("4 bytes por número é fp32; em bf16 são 2.",
                  lambda ns: {"gib_gqa": _kv(ns, ns["mix"]["kv_heads"], bytes_=4) / 2**30}),
        ErroComum("com GQA só as 8 cabeças de key/value vão para o cache, não as 32 de query.",
                  lambda ns: {"gib_gqa": _kv(ns, ns["mix"]["heads"]) / 2**30}),
        ErroComum("esse número está em GB (10⁹ bytes); um GiB tem 2³⁰ bytes.",
                  lambda ns: {"gib_gqa": _kv(ns, ns["mix"]["kv_heads"]) / 1e9}),
        ErroComum("esse número está em bytes: divida por 2³⁰ para ter GiB.",
                  lambda ns: {"gib_gqa": _kv(ns, ns["mix"]["kv_heads"])}),
    ),
    inicio="""
bytes_gqa = ____    # bytes do KV cache com GQA (8 cabeças de K/V), uma sequência de 32 768 tokens (int)
gib_gqa = ____      # GiB (2³⁰ bytes) do KV cache com GQA (8 cabeças de K/V)
gib_mha = ____      # GiB com atenção multi-cabeça (32 cabeças)
""",
    contexto=_contexto,
)
