"""Exercícios conferíveis do Capítulo 8, primeira parte (o β do DPO, recompensas deslocadas no REINFORCE e
as vantagens do GRPO)."""
from __future__ import annotations

import math

import numpy as np

from .comparar import Incorreto, como_array, comparar
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio

NOTEBOOK = "cap08_alinhamento"

# O exercício 1 usa as log-probabilidades de depois dos 6 passos de DPO (seção 8.2.3), caros demais para um
# teste sem kernel. Fora do notebook, um lote do mesmo formato faz o papel delas: 8 preferidas e 8
# rejeitadas, a rejeitada caindo mais que a preferida, como no registro de treino, e uma máscara de
# resposta com o deslocamento de uma posição do `DPOTrainer`. A conferência vale para qualquer lote.
_LOTE_SEM_TREINO = """
import torch

_g = torch.Generator().manual_seed(8)
_tokens = torch.randint(25, 70, (16,), generator=_g)
train_reference = -1.3 * _tokens.double() - 5 * torch.rand(16, generator=_g, dtype=torch.float64)
_delta = 3 * torch.randn(16, generator=_g, dtype=torch.float64)
_delta[:8] -= 2.0
_delta[8:] -= 24.0
train_policy = train_reference + _delta
_mask = torch.zeros(16, int(_tokens.max()) + 12, dtype=torch.long)
for _i, _k in enumerate(_tokens.tolist()):
    _mask[_i, 10:10 + _k] = 1
train_batch = {"completion_mask": _mask}
"""
_contexto_ex1 = celulas_do_notebook(NOTEBOOK, ("7bedc486", "5f01b5a1", "6fa4ff2d"), extra=_LOTE_SEM_TREINO)
_contexto = celulas_do_notebook(NOTEBOOK, (
    "7bedc486", "5f01b5a1", "6fa4ff2d", "96ecf9e4", "8f46d6b8", "6ecda6be"))


# ---------------------------------------------------------------- exercício 1: o papel de β
BETAS = (0.01, 0.1, 0.5, 1.0)


def _diferencas(ns, *, com_referencia=True, media=False, media_na_referencia=True):
    """(log π_θ − log π_ref)(y_w) − (log π_θ − log π_ref)(y_l), par a par, em float64."""
    politica = como_array(ns["train_policy"]).astype(np.float64)
    referencia = como_array(ns["train_reference"]).astype(np.float64)
    tokens = como_array(ns["train_batch"]["completion_mask"])[:, 1:].sum(axis=1).astype(np.float64)
    if media:
        politica = politica / tokens
        if media_na_referencia:
            referencia = referencia / tokens
    if not com_referencia:
        referencia = np.zeros_like(referencia)
    k = len(politica) // 2
    return (politica[:k] - referencia[:k]) - (politica[k:] - referencia[k:])


def _perdas(d):
    # −log σ(x) = log(1 + e^(−x)), com logaddexp para não estourar
    return [float(np.mean(np.logaddexp(0.0, -b * d))) for b in BETAS]


def _margens(d):
    return [float(b * d.mean()) for b in BETAS]


def _esperado_ex1(ns):
    d = _diferencas(ns)
    return {"losses_sum": _perdas(d), "margins_sum": _margens(d),
            "losses_mean": _perdas(_diferencas(ns, media=True))}


def _sem_referencia(ns):
    d = _diferencas(ns, com_referencia=False)
    return {"losses_sum": _perdas(d), "margins_sum": _margens(d)}


ex1 = Exercicio(
    "cap08_alinhamento.ex1", "perda e margem do DPO para quatro valores de β", (
        "losses_sum", "margins_sum", "losses_mean"),
    dicas=(
        "Para cada β, chame `dpo_loss` com as metades de `train_policy` e `train_reference`: os 8 primeiros "
        "valores são das respostas preferidas, os 8 últimos das rejeitadas.",
        "A perda é `.loss.item()` e a margem média é `.margins.mean().item()`. O número de tokens de cada "
        "resposta é `train_batch[\"completion_mask\"][:, 1:].sum(dim=1)`.",
        "Para as médias por token, divida as log-probabilidades da política e também as da referência, cada "
        "uma pelo número de tokens da sua resposta, antes de chamar `dpo_loss`.",
    ),
    esperado=_esperado_ex1,
    erros_comuns=(
        ErroComum("a recompensa implícita é β·(log π_θ − log π_ref): faltou subtrair a log-probabilidade da "
                  "referência.", _sem_referencia),
        ErroComum("a margem que o DPO registra já vem multiplicada por β (é a diferença de recompensas); a "
                  "sua é a mesma para os quatro β.",
                  lambda ns: {"margins_sum": [float(_diferencas(ns).mean())] * len(BETAS)}),
        ErroComum("nas médias por token, só a política foi dividida pelo número de tokens: divida também a "
                  "referência, senão a diferença mistura uma média com uma soma.",
                  lambda ns: {"losses_mean": _perdas(_diferencas(ns, media=True, media_na_referencia=False))}),
    ),
    inicio="""
losses_sum = ____    # as 4 perdas com log-probabilidades somadas, β = 0,01; 0,1; 0,5; 1 (lista de floats)
margins_sum = ____   # as 4 margens médias, na mesma ordem de β
losses_mean = ____   # as 4 perdas com médias por token, na mesma ordem de β
""",
    contexto=_contexto_ex1,
)


# ---------------------------------------------------------------- exercício 2: recompensas deslocadas
def _variancia(ns, deslocamento=10.0, baseline=0.0):
    from ..alignment import policy_gradient_variance

    recompensas = [r + deslocamento for r in ns["MEAN_REWARDS"]]
    return policy_gradient_variance(recompensas, baseline=baseline)


def _esperado_ex2(ns):
    from ..alignment import policy_gradient_variance

    # Somar 10 às recompensas é o mesmo que subtrair 10 do baseline (as mesmas amostras, semente 0); e, com
    # o baseline na média, o deslocamento some: a variância é a `var_base` medida na lição.
    return {"var_plain_shifted": policy_gradient_variance(ns["MEAN_REWARDS"], baseline=-10.0),
            "var_base_shifted": ns["var_base"]}


def _conferir_ex2(valores, ns):
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


ex2 = Exercicio(
    "cap08_alinhamento.ex2", "a variância do REINFORCE com as recompensas deslocadas de 10", (
        "var_plain_shifted", "var_base_shifted"),
    dicas=(
        "Some 10 a cada recompensa média de `MEAN_REWARDS` e meça a variância com `policy_gradient_variance`, "
        "como na seção 8.3.4 (20 mil amostras e a semente padrão).",
        "Sem baseline, `baseline=0.0`; com baseline, use a recompensa esperada das recompensas deslocadas, "
        "a média da lista nova.",
        "Compare com `var_plain` e `var_base` da lição: somar uma constante a todas as recompensas é o mesmo "
        "que tirá-la do baseline.",
    ),
    conferir=lambda valores, ns: _conferir_ex2(valores, ns),
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


# ---------------------------------------------------------------- exercício 3: o viés de dificuldade
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


ex3 = Exercicio(
    "cap08_alinhamento.ex3", "a vantagem de um acerto com 1, 2, 4, 6 e 7 acertos em 8", ("hit_group", "hit_none"),
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
