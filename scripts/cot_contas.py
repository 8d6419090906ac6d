"""Resposta direta, "passo a passo" e voto da maioria em contas geradas por código: grava
lncc_llm/dados/cot_contas.json.

Duas famílias de 50 somas diferentes cada, sorteadas sem reposição com random.Random(0): "duas
casas" (a e b de 10 a 99) e "uma casa" (a e b de 1 a 9, a família fácil, onde um método pode
funcionar a esta escala). Para cada soma, com o template de chat do SmolLM2-135M-Instruct:

- direto: "What is a + b? Answer with the number only.", guloso, 60 tokens (o mesmo orçamento do
  passo a passo: o modelo muitas vezes explica mesmo assim, e a resposta não pode ser cortada);
- passo a passo: "What is a + b? Think step by step, then give the final answer.", guloso, 60
  tokens;
- voto: 5 cadeias do mesmo prompt passo a passo, sorteadas com τ = 0,7 e top-p = 0,9 (60 tokens
  cada, `sample_batch`, semente 0), e a resposta mais votada (`majority_vote`; empate ou nenhuma
  resposta legível = sem voto, conta como erro).

A resposta de cada texto é lida por `read_sum` (lncc_llm.prompting). As gerações gulosas vão em
lotes com preenchimento à esquerda (`greedy_answers`); outra CPU pode mudar um token perto de um
empate, e por isso o notebook lê este arquivo em vez de refazer tudo (tests/test_prompting.py refaz
algumas contas e confere contra ele).

Uso: python scripts/cot_contas.py   (uns 5 minutos numa CPU de 2 núcleos)
"""
from __future__ import annotations

import json
import platform
import random
import time
from pathlib import Path

import torch

from lncc_llm import load_decoder, setup_notebook
from lncc_llm.finetuning import greedy_answers
from lncc_llm.prompting import UNDECIDED, arithmetic_items, majority_vote, read_sum
from lncc_llm.sampling import sample_batch

OUT = Path(__file__).resolve().parents[1] / "lncc_llm" / "dados" / "cot_contas.json"
DIRECT = "What is {a} + {b}? Answer with the number only."
STEPS = "What is {a} + {b}? Think step by step, then give the final answer."
CHAINS, TAU, TOP_P, SEED = 5, 0.7, 0.9, 0


def conversation(template, a, b):
    return [{"role": "user", "content": template.format(a=a, b=b)}]


def run_family(model, tokenizer, items):
    direct = greedy_answers(model, tokenizer, [conversation(DIRECT, a, b) for a, b in items],
                            max_new_tokens=60)
    steps = greedy_answers(model, tokenizer, [conversation(STEPS, a, b) for a, b in items],
                           max_new_tokens=60)
    chains = []
    for start in range(0, len(items), 10):                  # 10 contas × 5 cadeias por lote
        chunk = items[start:start + 10]
        chains += sample_batch(model, tokenizer, [conversation(STEPS, a, b) for a, b in chunk],
                               n=CHAINS, max_new_tokens=60, temperature=TAU, top_p=TOP_P,
                               seed=SEED + start, chat=True)
    rows = []
    for (a, b), d, s, cs in zip(items, direct, steps, chains):
        answers = [read_sum(c, a, b) for c in cs]
        vote = majority_vote(answers)
        rows.append({"a": a, "b": b, "direto": d, "direto_resposta": read_sum(d, a, b, bare=True),
                     "passo": s, "passo_resposta": read_sum(s, a, b),
                     "cadeias": cs, "cadeias_respostas": answers,
                     "voto": None if vote.label == UNDECIDED else vote.label})
    return rows


def main():
    setup_notebook()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    model, tokenizer = load_decoder()
    start = time.perf_counter()
    families = {name: run_family(model, tokenizer, arithmetic_items(name, 50, seed=0))
                for name in ("duas casas", "uma casa")}
    OUT.write_text(json.dumps({
        "modelo": "SmolLM2-135M-Instruct (Q4_1 convertido para fp32)",
        "torch": torch.__version__, "maquina": platform.processor() or platform.machine(),
        "capacidade_torch": torch.backends.cpu.get_cpu_capability(),
        "segundos": round(time.perf_counter() - start, 1),
        "prompts": {"direto": DIRECT, "passo a passo": STEPS},
        "cadeias": CHAINS, "temperatura": TAU, "top_p": TOP_P, "semente": SEED,
        "familias": families,
    }, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    for name, rows in families.items():
        n = len(rows)
        keys = {"direto": "direto_resposta", "passo": "passo_resposta", "voto": "voto"}
        acc = {k: sum(r[key] == r["a"] + r["b"] for r in rows) / n for k, key in keys.items()}
        print(name, {k: round(v, 2) for k, v in acc.items()})
    print(f"gravado em {OUT} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    random.seed(0)
    main()
