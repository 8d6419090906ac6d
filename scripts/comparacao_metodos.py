"""Comparação dos três ajustes do Capítulo 7 com várias sementes: grava
lncc_llm/dados/comparacao_metodos.json.

O capítulo treina cada método uma vez (semente 0); uma execução não diz quanto um número varia. Este
script repete o mesmo treino de 8 passos com as sementes 0, 1 e 2 (a semente muda a ordem dos lotes
e o sorteio da matriz A do LoRA) e registra, em cada execução, a perda de treino e de validação, a
margem de voz nas 8 linhas de validação (``style.voice_margins``, com e sem as aberturas) e a
perplexidade nos 12 trechos gerais. São três grupos de execuções:

* ``taxa_qlora``: o QLoRA numa grade de taxas, 3 sementes cada; a escolhida é a de menor perda de
  validação média (o mesmo critério que, na varredura do LoRA, deu a sua taxa: a menor da grade);
* ``metodos``: SFT (5e-5), LoRA (2e-3) e QLoRA (a taxa escolhida acima), 3 sementes cada;
* ``posto``: LoRA com posto 1, 2, 8 e 32 (α = 2r, a mesma escala α/r = 2), 3 sementes cada.

Uso: python scripts/comparacao_metodos.py   (cerca de 15 minutos numa CPU de 2 núcleos)
"""
from __future__ import annotations

import json
import math
import statistics
import time
from pathlib import Path

from lncc_llm import finetuning as ft
from lncc_llm.environment import set_offline
from lncc_llm.style import voice_margins
from lncc_llm.training import general_passages, passage_perplexities

SEEDS = (0, 1, 2)
STEPS = 8
EVAL_EVERY = 4
QLORA_GRID = (1e-3, 2e-3, 3e-3, 5e-3)
RANKS = (1, 2, 8, 32)
RATES = {"sft": 5e-5, "lora": 2e-3}
OUT = Path(__file__).resolve().parents[1] / "lncc_llm" / "dados" / "comparacao_metodos.json"


def margins(model, tokenizer) -> dict:
    return {"margem_voz": [round(m, 4) for _, _, m in voice_margins(model, tokenizer)],
            "margem_voz_sem_abertura": [round(m, 4) for _, _, m in
                                        voice_margins(model, tokenizer, without_opener=True)]}


def run(method: str, rate: float, seed: int, rank: int = 8, passages=None) -> dict:
    start = time.perf_counter()
    result = ft.finetune(method, steps=STEPS, learning_rate=rate, rank=rank, alpha=2 * rank,
                         eval_every=EVAL_EVERY, seed=seed, data_seed=seed)
    ppl = passage_perplexities(result.model, result.tokenizer, passages)
    row = {"metodo": method, "taxa": rate, "posto": rank if method != "sft" else None,
           "semente": seed, "treinaveis": result.trainable,
           "perda_treino": [round(v, 4) for v in result.losses],
           "perda_validacao": {str(s): round(v, 4) for s, v in result.eval_losses},
           **margins(result.model, result.tokenizer),
           "ppl_geral": [round(p, 3) for p in ppl],
           "segundos": round(time.perf_counter() - start, 1)}
    shown = ("metodo", "taxa", "posto", "semente", "perda_validacao", "segundos")
    print({k: row[k] for k in shown},
          flush=True)
    return row


def main() -> None:
    set_offline()
    from transformers import AutoTokenizer

    from lncc_llm.models import ensure_decoder_cache
    from lncc_llm.quantization import load_fresh_decoder

    passages = general_passages()
    source = ensure_decoder_cache()
    tokenizer = AutoTokenizer.from_pretrained(source)
    bases = {}
    for name, fmt in (("base", "fp32"), ("base NF4", "nf4")):
        model = load_fresh_decoder(fmt, source, double_quant=fmt == "nf4")
        bases[name] = {**margins(model, tokenizer),
                       "ppl_geral": [round(p, 3) for p in passage_perplexities(model, tokenizer,
                                                                               passages)]}
        del model
    qlora_grid = [run("qlora", rate, seed, passages=passages) for rate in QLORA_GRID
                  for seed in SEEDS]

    def mean_val(rows):
        return statistics.mean(r["perda_validacao"][str(STEPS)] for r in rows)

    qlora_rate = min(QLORA_GRID, key=lambda rate: mean_val([r for r in qlora_grid
                                                            if r["taxa"] == rate]))
    methods = [run(m, RATES[m], seed, passages=passages) for m in ("sft", "lora") for seed in SEEDS]
    methods += [r for r in qlora_grid if r["taxa"] == qlora_rate]
    ranks = [run("lora", RATES["lora"], seed, rank=rank, passages=passages)
             for rank in RANKS if rank != 8 for seed in SEEDS]
    ranks += [r for r in methods if r["metodo"] == "lora"]
    data = {"_sobre": __doc__.strip().splitlines()[0] + " " + __doc__.strip().splitlines()[1],
            "passos": STEPS, "sementes": list(SEEDS), "avaliacao_a_cada": EVAL_EVERY,
            "taxas": {**RATES, "qlora": qlora_rate},
            "criterio_qlora": "a taxa da grade com a menor perda de validação final média nas 3 "
                              "sementes",
            "bases": bases, "taxa_qlora": qlora_grid, "metodos": methods,
            "posto": sorted(ranks, key=lambda r: (r["posto"], r["semente"]))}
    OUT.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print("QLoRA: taxa escolhida", qlora_rate, "| validação média por taxa:",
          {rate: round(mean_val([r for r in qlora_grid if r["taxa"] == rate]), 3)
           for rate in QLORA_GRID})
    for m in ("sft", "lora", "qlora"):
        rows = [r for r in methods if r["metodo"] == m]
        print(m, [r["perda_validacao"][str(STEPS)] for r in rows],
              "margem média",
              round(statistics.mean(math.fsum(r["margem_voz"]) / 8 for r in rows), 3))


if __name__ == "__main__":
    main()
