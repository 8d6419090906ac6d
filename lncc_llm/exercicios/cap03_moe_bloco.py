"""Exercícios conferíveis do Capítulo 3, segunda parte.

Os dois primeiros são núcleo, no fluxo da lição: o leitor escreve a camada MoE top-1 com a porta do Switch
(seção 3.8.3) e a perda de balanceamento (seção 3.8.6); o verificador chama as funções dele em roteadores e
especialistas sorteados que o notebook nunca mostra, contra a ``MoELayer`` do pacote e contra a perda do
Mixtral no ``transformers``. Os outros dois (opcionais): as portas e os parâmetros de um MoE top-2 e o
KV cache do Mixtral.
"""
from __future__ import annotations

from .comparar import Incorreto
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap03_moe_bloco"
_contexto = celulas_do_notebook(NOTEBOOK, (
    "cap03b-setup", "cap03b-imports", "cap03b-exemplo", "bf107f7f", "0363fd5b", "0f542d34", "53135d32",
    "dc16a155"))


# ---------------------------------------------------------------- exercício 1 (núcleo): a camada top-1
# (T, d, E, d_ff); d ≠ E em todas, para que `x @ router_weight` (sem o .T) não passe por acaso
_FORMAS_EX1 = ((5, 4, 3, 8), (7, 6, 3, 12), (1, 8, 5, 16), (12, 5, 6, 10))

_MSG_DENSA = ("os especialistas calcularam mais linhas que os {t} tokens da entrada: no MoE top-1 cada token passa "
              "só pelo especialista que o escolheu (filtre os tokens de cada especialista com a máscara "
              "`chosen == e`), e os outros nem rodam. Calcular todos e depois escolher dá a mesma saída, mas "
              "custa E vezes mais, e é esse custo que o MoE economiza.")


def _especialista_contado(d, f, g, contador, limite):
    """Uma FFN do pacote que soma, em ``contador`` (comum aos especialistas de um caso; o ``copy.deepcopy``
    de cada chamada de teste o copia uma vez só), as linhas que calcula, e recusa a conta densa."""
    import torch

    from ..moe import FeedForward

    class Especialista(FeedForward):
        def forward(self, x):
            self.contador[0] += x.shape[0] if x.dim() > 1 else 1
            if self.contador[0] > self.limite:
                raise Incorreto(_MSG_DENSA.format(t=self.limite))
            return super().forward(x)

    especialista = Especialista(d, f, generator=g).to(torch.float64)
    especialista.contador, especialista.limite = contador, limite     # atributos: o deepcopy os copia
    return especialista


def _casos_ex1(ns):
    """Roteadores, especialistas e tokens sorteados (float64), de formas que a lição não usa. Os
    especialistas contam as linhas que calculam: mais que T numa chamada é a conta densa."""
    import torch

    casos = []
    for n, (t, d, e, f) in enumerate(_FORMAS_EX1):
        g = torch.Generator().manual_seed(310 + n)
        x = torch.randn(t, d, generator=g, dtype=torch.float64)
        roteador = torch.randn(e, d, generator=g, dtype=torch.float64) * 1.5
        contador = [0]
        especialistas = [_especialista_contado(d, f, g, contador, t) for _ in range(e)]
        casos.append((x, roteador, especialistas))
    return casos


def _moe_da_biblioteca(x, roteador, especialistas, gate="switch"):
    """A ``MoELayer`` do pacote com os pesos do caso (a referência independente do código do leitor)."""
    import torch

    from ..moe import MoELayer

    e, d = roteador.shape
    camada = MoELayer(d, especialistas[0].up.out_features, e, k=1, gate=gate).double()
    with torch.no_grad():
        camada.router.weight.copy_(roteador)
        for destino, origem in zip(camada.experts, especialistas):
            destino.load_state_dict(origem.state_dict())
        return camada(x)[0]


def _sem_porta(x, roteador, especialistas):
    import torch

    escolhido = torch.softmax(x @ roteador.T, dim=-1).argmax(dim=-1)
    return torch.stack([especialistas[int(escolhido[t])](x[t]) for t in range(x.shape[0])])


def _softmax_nos_tokens(x, roteador, especialistas):
    import torch

    p = torch.softmax(x @ roteador.T, dim=0)
    porta, escolhido = p.max(dim=-1)
    return torch.stack([porta[t] * especialistas[int(escolhido[t])](x[t]) for t in range(x.shape[0])])


def _logit_como_porta(x, roteador, especialistas):
    import torch

    logits = x @ roteador.T
    porta, escolhido = logits.max(dim=-1)
    return torch.stack([porta[t] * especialistas[int(escolhido[t])](x[t]) for t in range(x.shape[0])])


ex1 = Exercicio(
    "cap03_moe_bloco.ex1", "a camada MoE top-1 com a porta do Switch", ("switch_moe",),
    dicas=(
        "Três passos, na ordem da seção 3.8.3: as probabilidades p = softmax(x W_gᵀ) sobre os especialistas "
        "(a última dimensão); para cada token, o especialista e* de maior p e a porta p_e*; a saída "
        "p_e* · Expert_e*(x).",
        "`probs.max(dim=-1)` devolve, de uma vez, o maior valor de cada linha (a porta) e o seu índice (o "
        "especialista). Comece com `y = torch.zeros_like(x)` e preencha as linhas.",
        "Percorra os especialistas: `mask = chosen == e` marca os tokens de e; "
        "`y[mask] = gate[mask, None] * expert(x[mask])` calcula só esses (os outros especialistas nem rodam).",
    ),
    esperado=lambda ns: {"switch_moe": _moe_da_biblioteca},
    entradas=_casos_ex1,
    erros_comuns=(
        ErroComum("a saída é Expert_e*(x) sem a porta: é a porta renormalizada (p/p = 1), o primeiro erro de quem "
                  "implementa um MoE. Com k = 1 a saída é p_e* · Expert_e*(x), e é essa porta que leva a perda "
                  "da tarefa até o roteador.",
                  lambda ns: {"switch_moe": _sem_porta},
                  dica="Guarde a probabilidade do escolhido (o valor de `probs.max(dim=-1)`) e multiplique a saída "
                       "do especialista por ela."),
        ErroComum("o softmax foi feito sobre os tokens (dim=0): cada token precisa de uma distribuição sobre os "
                  "especialistas, a última dimensão de x W_gᵀ.",
                  lambda ns: {"switch_moe": _softmax_nos_tokens}),
        ErroComum("a porta é o logit x·w_e, sem o softmax: ela tem de ser a probabilidade p_e* (um número entre "
                  "0 e 1).",
                  lambda ns: {"switch_moe": _logit_como_porta}),
    ),
    proibidas=("lncc_llm.moe.MoELayer", "lncc_llm.moe.top_k_route"),
    tipo="nucleo",
    inicio="""
def switch_moe(x, router_weight, experts):
    \"\"\"Camada MoE top-1 com a porta do Switch (seção 3.8.3).

    x: (T, d) float64; router_weight: (E, d), o peso do roteador (x W_g = x @ router_weight.T);
    experts: lista de E módulos, cada um leva (n, d) em (n, d).
    Devolve y (T, d): y_t = p_e*(x_t) · Expert_e*(x_t), com e* o especialista de maior p.
    \"\"\"
    # 1. probs (T, E): o softmax de x W_g sobre os especialistas
    # 2. para cada token, a porta p_e* e o escolhido e*
    # 3. para cada especialista, só nos tokens que o escolheram: porta · Expert(x)
    return ____     # y (T, d), do dtype de x
""",
    seguir='check("a sua switch_moe = a MoELayer nos 3 tokens da lição", '
           'switch_moe(X, moe.router.weight.detach(), list(moe.experts)), y_moe, atol=1e-12)',
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2 (núcleo): a perda de balanceamento
_FORMAS_EX2 = ((40, 4, 1), (64, 8, 2), (7, 3, 1), (25, 6, 2), (1, 5, 1))     # (T, E, k)


def _casos_ex2(ns):
    """Probabilidades de roteadores sorteados e os top-k de cada token (com gradiente nas probabilidades)."""
    import torch

    casos = []
    for n, (t, e, k) in enumerate(_FORMAS_EX2):
        g = torch.Generator().manual_seed(320 + n)
        logits = torch.randn(t, e, generator=g, dtype=torch.float64) * 2.0
        probs = torch.softmax(logits, dim=-1)
        casos.append((probs.requires_grad_(), probs.detach().topk(k, dim=-1).indices))
    return casos


def _perda_do_mixtral(probs, indices):
    """A perda do Mixtral no ``transformers`` (que soma as k escolhas de cada token: dá k vezes a do Switch,
    com f_e sobre as T·k escolhas), dividida por k."""
    from transformers.models.mixtral.modeling_mixtral import load_balancing_loss_func

    e, k = probs.shape[-1], indices.shape[-1]
    return load_balancing_loss_func((probs.detach().log(),), e, top_k=k) / k


def _perda(probs, indices, fator=True, por_t=False, quadrado=False):
    import torch

    e, k = probs.shape[-1], indices.shape[-1]
    carga = torch.bincount(indices.reshape(-1), minlength=e).to(probs.dtype)
    f = carga / (probs.shape[0] * (1 if por_t else k))
    p = probs.mean(dim=0)
    if quadrado:
        f = p
    return (e if fator else 1) * (f * p).sum()


def _desvio(probs, indices):
    import torch

    e = probs.shape[-1]
    f = torch.bincount(indices.reshape(-1), minlength=e).to(probs.dtype) / indices.numel()
    return ((f - 1 / e) ** 2).sum()


def _conferir_ex2(respostas, ns):
    from .comparar import Incorreto, comparar

    saidas = respostas["switch_balance_loss"]
    casos = _casos_ex2(ns)
    for i, ((probs, indices), obtido) in enumerate(zip(casos, saidas), start=1):
        comparar(obtido, _perda_do_mixtral(probs, indices), rtol=1e-5, atol=1e-6,
                 nome=f"a saída de `switch_balance_loss` na chamada de teste {i} de {len(casos)}")
    import torch

    for i, ((probs, indices), obtido) in enumerate(zip(casos, saidas), start=1):
        if not getattr(obtido, "requires_grad", False):
            raise Incorreto("os números batem, mas a perda não tem gradiente (`requires_grad` é False na chamada "
                            f"de teste {i}): ela saiu de `.item()`, do NumPy ou de um `torch.tensor(...)` novo. "
                            "Calcule P_e com operações do torch sobre `probs`, para que o `backward()` da seção "
                            "3.8.6 chegue ao roteador.")
        # o gradiente certo: ∂L/∂p_te = E·f_e/T (só P_e depende de probs)
        p = probs.detach().clone().requires_grad_()
        with torch.enable_grad():
            perda = ns["switch_balance_loss"](p, indices.clone())
            gradiente = torch.autograd.grad(perda, p)[0] if perda.requires_grad else None
        e, k, t = probs.shape[-1], indices.shape[-1], probs.shape[0]
        f = torch.bincount(indices.reshape(-1), minlength=e).to(probs.dtype) / (t * k)
        if gradiente is None or not torch.allclose(gradiente, (e * f / t).expand(t, e), atol=1e-9):
            raise Incorreto("o valor da perda bate, mas o gradiente em relação a `probs` não é o da fórmula "
                            f"(chamada de teste {i}): só P_e depende de probs, e ∂L/∂p_te = E·f_e/T. f_e tem de "
                            "vir das contagens (sem gradiente), e a perda, de operações do torch sobre probs.")


ex2 = Exercicio(
    "cap03_moe_bloco.ex2", "a perda de balanceamento do Switch", ("switch_balance_loss",),
    dicas=(
        "A fórmula da seção 3.8.6: E · Σ_e f_e · P_e. P_e é a média de `probs` sobre os tokens (dim=0); f_e é a "
        "fração das T·k escolhas que foi para e.",
        "`torch.bincount(indices.reshape(-1), minlength=E)` conta as escolhas de cada especialista (a carga); "
        "divida por T·k, o total de escolhas.",
        "Não passe nada por `.item()` nem por NumPy: a perda tem de ser um tensor que leve o gradiente de volta a "
        "`probs` (só P_e tem gradiente; f_e vem de contagens).",
    ),
    esperado=lambda ns: {"switch_balance_loss": _perda_do_mixtral},
    conferir=_conferir_ex2,
    entradas=_casos_ex2,
    gradiente=True,
    erros_comuns=(
        ErroComum("faltou o fator E: com tudo uniforme a perda tem de valer 1 (f_e = P_e = 1/E e E · E · 1/E² = 1).",
                  lambda ns: {"switch_balance_loss": lambda p, i: _perda(p, i, fator=False)}),
        ErroComum("f_e dividiu a carga por T, não por T·k: com k = 2 cada token faz duas escolhas, e as frações "
                  "têm de somar 1 (é a convenção do Mixtral no `transformers`, que dá k vezes a do Switch).",
                  lambda ns: {"switch_balance_loss": lambda p, i: _perda(p, i, por_t=True)}),
        ErroComum("f_e saiu das probabilidades (Σ P_e²), não das escolhas: f_e conta para onde os tokens foram "
                  "de fato (a carga), e é ele que não tem gradiente.",
                  lambda ns: {"switch_balance_loss": lambda p, i: _perda(p, i, quadrado=True)}),
        ErroComum("esse é o desvio quadrático Σ(f_e − 1/E)² do texto-base, sem gradiente; o exercício pede a "
                  "versão derivável do Switch, E · Σ f_e P_e.",
                  lambda ns: {"switch_balance_loss": _desvio}),
    ),
    proibidas=("lncc_llm.moe.balance_loss", "lncc_llm.moe.load_fractions", "lncc_llm.moe.load_deviation",
               "transformers.models.mixtral.modeling_mixtral.load_balancing_loss_func"),
    tipo="nucleo",
    inicio="""
def switch_balance_loss(probs, indices):
    \"\"\"A perda de balanceamento do Switch (seção 3.8.6): E · Σ_e f_e · P_e.

    probs: (T, E), as probabilidades do roteador (com gradiente); indices: (T, k) int64, os escolhidos.
    Devolve um tensor de 0 dimensões que leva o gradiente de volta a probs.
    \"\"\"
    # f (E,): a fração das T·k escolhas que foi para cada especialista (vem de contagens: sem gradiente)
    # P (E,): a probabilidade média que o roteador deu a cada especialista (com gradiente)
    return ____     # E · Σ_e f_e · P_e
""",
    seguir="balance_loss = switch_balance_loss",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 3: MoE top-2
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


ex3 = Exercicio(
    "cap03_moe_bloco.ex3", "portas e parâmetros de um MoE top-2", ("gates_top2", "counts_top2", "ratio"),
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


# ---------------------------------------------------------------- exercício 4: KV cache do Mixtral
def _kv(ns, cabecas_kv, fator_kv=2, bytes_=2, tokens=32768):
    mix = ns["mix"]
    return fator_kv * mix["layers"] * cabecas_kv * (mix["hidden"] // mix["heads"]) * tokens * bytes_


ex4 = Exercicio(
    "cap03_moe_bloco.ex4", "o KV cache do Mixtral em GiB", ("bytes_gqa", "gib_gqa", "gib_mha"),
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
