"""Onde a autoconsistência pode ajudar, escolhido antes de medir: grava
lncc_llm/dados/autoconsistencia.json.

O Capítulo 5 (seção 5.6.1) mede o voto em duas famílias de somas e não acha um ganho claro. Este
script procura o lugar certo para olhar, com um critério declarado aqui, medido num conjunto de
**seleção** separado, e só depois mede o voto num conjunto de **teste** que a seleção não viu.

1. Seleção: três famílias ("duas casas", "uma casa", "uma e duas casas"), 20 somas de cada,
   sorteadas com ``random.Random(1)``; para cada soma, a cadeia passo a passo gulosa e 5 cadeias
   sorteadas (τ = 0,7, top-p = 0,9). Por família: o acerto da gulosa, o de uma cadeia sorteada e o
   pass@5 (a fração de somas com ao menos uma cadeia certa).
2. Critério (fixado antes do teste): um voto só pode consertar uma soma em que a gulosa erra e
   alguma cadeia acerta, e só escolhe a certa quando ela é a mais frequente. Fica a família com a
   maior folga pass@5 − acerto guloso entre as que têm uma cadeia sorteada certa em ao menos 30 %
   das vezes (abaixo disso, os erros espalhados vencem o voto, como nas duas casas da seção 5.6.1).
3. Teste: até 100 somas da família escolhida que a seleção não usou; resposta direta, passo a passo
   gulosa e 10 cadeias sorteadas por soma (o voto de 5 usa as 5 primeiras).

Uso: python scripts/autoconsistencia.py   (uns 15 minutos numa CPU de 2 núcleos)
"""
from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import torch

from lncc_llm import load_decoder, setup_notebook
from lncc_llm.finetuning import greedy_answers
from lncc_llm.prompting import arithmetic_items, read_sum
from lncc_llm.sampling import sample_batch

OUT = Path(__file__).resolve().parents[1] / "lncc_llm" / "dados" / "autoconsistencia.json"
DIRECT = "What is {a} + {b}? Answer with the number only."
STEPS = "What is {a} + {b}? Think step by step, then give the final answer."
FAMILIES = ("duas casas", "uma casa", "uma e duas casas")
N_SELECTION, N_TEST, TAU, TOP_P = 20, 100, 0.7, 0.9
CHAINS_SELECTION, CHAINS_TEST, MIN_CHAIN_ACCURACY = 5, 10, 0.3


def conversation(template, a, b):
    return [{"role": "user", "content": template.format(a=a, b=b)}]


def chains_for(model, tokenizer, items, n, seed):
    chains = []
    for start in range(0, len(items), 10):                  # 10 somas × n cadeias por lote
        chunk = items[start:start + 10]
        chains += sample_batch(model, tokenizer, [conversation(STEPS, a, b) for a, b in chunk],
                               n=n, max_new_tokens=60, temperature=TAU, top_p=TOP_P,
                               seed=seed + start, chat=True)
    return chains


def selection_summary(rows):
    n = len(rows)
    right = [[read_sum(c, r["a"], r["b"]) == r["a"] + r["b"] for c in r["cadeias"]] for r in rows]
    greedy = sum(read_sum(r["passo"], r["a"], r["b"]) == r["a"] + r["b"] for r in rows) / n
    per_chain = sum(map(sum, right)) / sum(map(len, right))
    pass_k = sum(map(any, right)) / n
    return {"guloso": greedy, "por_cadeia": per_chain, "pass_k": pass_k, "folga": pass_k - greedy}


def choose(summaries):
    eligible = {f: s for f, s in summaries.items() if s["por_cadeia"] >= MIN_CHAIN_ACCURACY}
    return max(eligible, key=lambda f: eligible[f]["folga"]) if eligible else None


def main():
    setup_notebook()
    model, tokenizer = load_decoder()
    start = time.perf_counter()
    sizes = {f: min(N_SELECTION + N_TEST, 81 if f == "uma casa" else 10**6) for f in FAMILIES}
    pools = {f: arithmetic_items(f, sizes[f], seed=1) for f in FAMILIES}
    selection = {}
    for family in FAMILIES:
        items = pools[family][:N_SELECTION]
        steps = greedy_answers(model, tokenizer, [conversation(STEPS, a, b) for a, b in items],
                               max_new_tokens=60)
        chains = chains_for(model, tokenizer, items, CHAINS_SELECTION, seed=100)
        selection[family] = [{"a": a, "b": b, "passo": s, "cadeias": c}
                             for (a, b), s, c in zip(items, steps, chains)]
        summary = selection_summary(selection[family])
        print(family, {k: round(v, 2) for k, v in summary.items()}, flush=True)
    summaries = {f: selection_summary(rows) for f, rows in selection.items()}
    chosen = choose(summaries)
    print("escolhida:", chosen, flush=True)
    items = pools[chosen][N_SELECTION:]
    direct = greedy_answers(model, tokenizer, [conversation(DIRECT, a, b) for a, b in items],
                            max_new_tokens=60)
    steps = greedy_answers(model, tokenizer, [conversation(STEPS, a, b) for a, b in items],
                           max_new_tokens=60)
    chains = chains_for(model, tokenizer, items, CHAINS_TEST, seed=200)
    test = [{"a": a, "b": b, "direto": d, "passo": s, "cadeias": c}
            for (a, b), d, s, c in zip(items, direct, steps, chains)]
    OUT.write_text(json.dumps({
        "modelo": "SmolLM2-135M-Instruct (Q4_1 convertido para fp32)",
        "torch": torch.__version__, "maquina": platform.processor() or platform.machine(),
        "capacidade_torch": torch.backends.cpu.get_cpu_capability(),
        "segundos": round(time.perf_counter() - start, 1),
        "prompts": {"direto": DIRECT, "passo a passo": STEPS},
        "temperatura": TAU, "top_p": TOP_P, "cadeias_selecao": CHAINS_SELECTION,
        "cadeias_teste": CHAINS_TEST,
        "criterio": {"acerto_minimo_por_cadeia": MIN_CHAIN_ACCURACY,
                     "mede": "pass@5 − acerto guloso"},
        "escolhida": chosen, "selecao": selection, "teste": test,
    }, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"gravado em {OUT} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
