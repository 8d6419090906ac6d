"""Exercícios conferíveis do Capítulo 8, segunda parte (recompensas deslocadas no REINFORCE e as
vantagens do GRPO)."""
from __future__ import annotations

import math

from .comparar import Incorreto, comparar
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap08_rl_grpo"
# setup_notebook, as importações, o REINFORCE da seção 8.3.5, a variância exata e as vantagens do GRPO
_contexto = celulas_do_notebook(NOTEBOOK, (
    "7bedc486", "8b2e0002", "96ecf9e4", "8f46d6b8", "6ecda6be"))


# ---------------------------------------------------------------- exercício 1: recompensas deslocadas
def _variancia(ns, deslocamento=10.0, baseline=0.0):
    from ..alignment import policy_gradient_variance

    recompensas = [r + deslocamento for r in ns["MEAN_REWARDS"]]
    return policy_gradient_variance(recompensas, baseline=baseline)


def _esperado_ex1(ns):
    from ..alignment import policy_gradient_variance

    # Somar 10 às recompensas é o mesmo que subtrair 10 do baseline (as mesmas amostras, semente 0); e, com
    # o baseline na média, o deslocamento some: a variância é a `var_base` medida na lição.
    return {"var_plain_shifted": policy_gradient_variance(ns["MEAN_REWARDS"], baseline=-10.0),
            "var_base_shifted": ns["var_base"]}


def _conferir_ex1(valores, ns):
    """Aceita a medida por amostragem (`policy_gradient_variance`, semente 0) ou a conta exata da lição
    (`exact_variance`): as duas diferem em até 3 %, e as duas respondem o exercício."""
    from ..alignment import policy_gradient_variance

    mu = ns["MEAN_REWARDS"]
    alvos = {"var_plain_shifted": (policy_gradient_variance(mu, baseline=-10.0), ns["exact_variance"](mu, -10.0)),
             "var_base_shifted": (ns["var_base"], ns["exact_variance"](mu, _media(ns)))}
    for nome, certos in alvos.items():
        erros = []
        for certo in certos:
            try:
                comparar(valores[nome], certo, rtol=1e-4, atol=1e-9, nome=f"`{nome}`")
                break
            except Incorreto as erro:
                erros.append(erro)
        else:
            raise erros[0]


def _media(ns):
    return sum(ns["MEAN_REWARDS"]) / len(ns["MEAN_REWARDS"])


ex1 = Exercicio(
    "cap08_rl_grpo.ex1", "a variância do REINFORCE com as recompensas deslocadas de 10", (
        "var_plain_shifted", "var_base_shifted"),
    dicas=(
        "Some 10 a cada recompensa média de `MEAN_REWARDS` e meça a variância com `policy_gradient_variance`, "
        "como na seção 8.3.5 (20 mil amostras e a semente padrão).",
        "Sem baseline, `baseline=0.0`; com baseline, use a recompensa esperada das recompensas deslocadas, "
        "a média da lista nova.",
        "Compare com `var_plain` e `var_base` da lição: somar uma constante a todas as recompensas é o mesmo "
        "que tirá-la do baseline.",
    ),
    conferir=lambda valores, ns: _conferir_ex1(valores, ns),
    erros_comuns=(
        ErroComum("o baseline ficou na média das recompensas originais (1,425): com as recompensas deslocadas, "
                  "a recompensa esperada também sobe 10.",
                  lambda ns: {"var_base_shifted": _variancia(ns, baseline=_media(ns))}),
        ErroComum("essa é a variância sem baseline das recompensas originais: some 10 a cada recompensa média "
                  "antes de medir.", lambda ns: {"var_plain_shifted": ns["var_plain"]}),
        ErroComum("o baseline foi 10, o tamanho do deslocamento: o baseline que corta a variância é a "
                  "recompensa esperada, a média das recompensas deslocadas.",
                  lambda ns: {"var_base_shifted": _variancia(ns, baseline=10.0)}),
    ),
    inicio="""
var_plain_shifted = ____   # variância total, recompensas + 10, sem baseline (float: policy_gradient_variance ou exact_variance)
var_base_shifted = ____    # a mesma, com o baseline igual à recompensa esperada (um float)
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: o viés de dificuldade
ACERTOS = (1, 2, 4, 6, 7)
GRUPO = 8


def _vantagem(acertos, *, desvio=True, bessel=True, de_um_acerto=True, eps=1e-4):
    """A vantagem de uma resposta num grupo binário de 8, em forma fechada (p = fração de acertos)."""
    p = acertos / GRUPO
    centrada = (1 - p) if de_um_acerto else -p
    if not desvio:
        return centrada
    variancia = GRUPO * p * (1 - p) / (GRUPO - 1 if bessel else GRUPO)
    return centrada / (math.sqrt(variancia) + eps)


ex2 = Exercicio(
    "cap08_rl_grpo.ex2", "a vantagem de um acerto com 1, 2, 4, 6 e 7 acertos em 8", ("hit_group", "hit_none"),
    dicas=(
        "Um grupo com k acertos é `[1.0] * k + [0.0] * (8 - k)`; `grpo_advantages(grupo, 8)` devolve as 8 "
        "vantagens, e a primeira é a de um acerto.",
        "Com `scale=\"none\"` as vantagens só são centradas: a de um acerto vale 1 − p, com p = k/8.",
        "Confira um caso à mão: com 4 acertos em 8, o desvio corrigido (n − 1) é √(2/7) ≈ 0,53, e o `trl` "
        "soma ε = 0,0001 a ele antes de dividir.",
    ),
    esperado=lambda ns: {"hit_group": [_vantagem(k) for k in ACERTOS],
                         "hit_none": [_vantagem(k, desvio=False) for k in ACERTOS]},
    erros_comuns=(
        ErroComum("o desvio usado foi o populacional (divide por n); o `trl` usa o corrigido de Bessel, que "
                  "divide por n − 1.", lambda ns: {"hit_group": [_vantagem(k, bessel=False) for k in ACERTOS]}),
        ErroComum("faltou o ε = 0,0001 que o `trl` soma ao desvio antes de dividir.",
                  lambda ns: {"hit_group": [_vantagem(k, eps=0.0) for k in ACERTOS]}),
        ErroComum("em `hit_none` as vantagens ainda estão divididas pelo desvio: passe `scale=\"none\"` para "
                  "só centrar.", lambda ns: {"hit_none": [_vantagem(k) for k in ACERTOS]}),
        ErroComum("essas são as vantagens de uma resposta errada (negativas); pede-se a de um acerto, a "
                  "primeira do grupo `[1.0] * k + [0.0] * (8 - k)`.",
                  lambda ns: {"hit_group": [_vantagem(k, de_um_acerto=False) for k in ACERTOS],
                              "hit_none": [_vantagem(k, desvio=False, de_um_acerto=False) for k in ACERTOS]}),
    ),
    inicio="""
hit_group = ____   # vantagem de um acerto com 1, 2, 4, 6 e 7 acertos, scale="group" (5 números)
hit_none = ____    # a mesma, com scale="none" (5 números)
""",
    contexto=_contexto, rtol=1e-6, atol=1e-9,
)
