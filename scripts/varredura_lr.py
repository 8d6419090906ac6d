"""Varredura das taxas de aprendizado do Capítulo 7: grava lncc_llm/dados/varredura_lr.json.

Treina o decodificador do curso 8 passos com SFT completo e com LoRA (posto 8, todas as lineares)
em várias taxas, e registra a perda de treino e de validação no fim e a perplexidade média nos 12
trechos gerais. A taxa do SFT é a usual do ajuste completo (5e-5); a do LoRA é a da grade cuja perda
de validação final fica mais perto da do SFT: os dois braços ficam comparáveis pelo quanto
aprenderam, não pelo número da taxa (que mede coisas diferentes em parametrizações diferentes).

Uso: python scripts/varredura_lr.py   (alguns minutos numa CPU de 2 núcleos)
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from lncc_llm import finetuning as ft
from lncc_llm.environment import set_offline
from lncc_llm.training import general_passages, mean_and_se, passage_perplexities

GRID = {"sft": [2e-5, 5e-5, 1e-4], "lora": [5e-4, 1e-3, 2e-3, 5e-3]}
SFT_RATE = 5e-5
STEPS = 8
OUT = Path(__file__).resolve().parents[1] / "lncc_llm" / "dados" / "varredura_lr.json"


def main() -> None:
    set_offline()
    passages = general_passages()
    runs = []
    for method, rates in GRID.items():
        for rate in rates:
            result = ft.finetune(method, steps=STEPS, learning_rate=rate)
            ppl = passage_perplexities(result.model, result.tokenizer, passages)
            log_mean, log_se = mean_and_se([math.log(p) for p in ppl])
            runs.append({"metodo": method, "taxa": rate,
                         "perda_treino_final": round(result.losses[-1], 4),
                         "perda_validacao_final": round(result.final_eval_loss, 4),
                         "ppl_geral_media_geometrica": round(math.exp(log_mean), 3),
                         "ppl_geral_log_ep": round(log_se, 4)})
            print(runs[-1], flush=True)
    sft_val = next(r["perda_validacao_final"] for r in runs
                   if r["metodo"] == "sft" and r["taxa"] == SFT_RATE)
    lora = min((r for r in runs if r["metodo"] == "lora"),
               key=lambda r: abs(r["perda_validacao_final"] - sft_val))
    data = {"_sobre": __doc__.strip().splitlines()[0], "passos": STEPS, "semente": 0,
            "execucoes": runs, "escolhida": {"sft": SFT_RATE, "lora": lora["taxa"]},
            "criterio": "LoRA: a taxa da grade com a perda de validação final mais perto da do "
                        "SFT com 5e-5"}
    OUT.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print("escolhida:", data["escolhida"])


if __name__ == "__main__":
    main()
