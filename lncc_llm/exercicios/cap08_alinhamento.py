"""Exercícios conferíveis do Capítulo 8, primeira parte (o β do DPO)."""
from __future__ import annotations

import numpy as np

from .comparar import como_array
from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

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
