"""Até onde o GPT de caracteres do Apêndice A chega no tempo de um notebook: grava
lncc_llm/dados/gpt_caracteres_orcamento.json.

Treina o modelo com atenção da seção A.11 (d = 128, 2 camadas, 2 cabeças, contexto 64,
dropout 0,2, AdamW, corte de gradiente 1, lotes de 32 janelas, as mesmas sementes) com várias
durações, taxas e agendas, com 1 e com 2 threads, e registra a perda de validação (nos 8 lotes fixos
da seção A.11) e o tempo a cada 300 passos. A agenda "cos" aquece a taxa por 30 passos e a faz
decair em cosseno até 10 % dela no último passo.

Uso: python scripts/gpt_caracteres_orcamento.py   (uns 12 minutos numa CPU de 2 núcleos; não rode
nada pesado ao mesmo tempo, ou os tempos não valem)
"""
from __future__ import annotations

import json
import math
import platform
import time
from pathlib import Path

import torch

from lncc_llm.corpus import CharTokenizer, shakespeare_text, train_val_split
from lncc_llm.gpt import GPTConfig, GPTModel
from lncc_llm.training import estimate_loss, language_model_loss, random_batch

# (threads, passos, taxa, agenda)
RUNS = [(1, 1500, 2e-3, "const"), (2, 600, 2e-3, "const"), (1, 600, 4e-3, "cos"),
        (1, 600, 3e-3, "cos"), (1, 900, 4e-3, "cos")]
WARMUP = 30
OUT = Path(__file__).resolve().parents[1] / "lncc_llm" / "dados" / "gpt_caracteres_orcamento.json"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "desconhecida"


def run(data, vocab, threads, total, lr, schedule):
    torch.set_num_threads(threads)
    train_data, val_data = data
    eval_generator = torch.Generator().manual_seed(1234)
    for _ in range(8):             # os lotes fixos de treino da A.11 vêm antes dos de validação
        random_batch(train_data, 64, 64, eval_generator)
    val_batches = [random_batch(val_data, 64, 64, eval_generator) for _ in range(8)]
    cfg = GPTConfig(vocab_size=vocab, max_seq_len=64, d_model=128, n_heads=2, n_layers=2,
                    dropout=0.2)
    torch.manual_seed(0)
    model = GPTModel(cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def rate(step):
        if schedule == "const":
            return lr
        if step < WARMUP:
            return lr * (step + 1) / WARMUP
        progress = (step - WARMUP) / max(1, total - WARMUP)
        return 0.1 * lr + 0.9 * lr * 0.5 * (1 + math.cos(math.pi * progress))

    batch_generator = torch.Generator().manual_seed(0)
    start, curve = time.perf_counter(), []
    for step in range(total):
        for group in optimizer.param_groups:
            group["lr"] = rate(step)
        model.train()
        x, y = random_batch(train_data, 32, 64, batch_generator)
        loss = language_model_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if (step + 1) % 300 == 0 or step + 1 == total:
            curve.append({"passos": step + 1, "segundos": round(time.perf_counter() - start, 1),
                          "perda_validacao": round(estimate_loss(model, val_batches), 4)})
    return {"threads": threads, "passos": total, "taxa": lr, "agenda": schedule, "curva": curve}


def main() -> None:
    text = shakespeare_text()
    tokenizer = CharTokenizer(text)
    data = train_val_split(torch.tensor(tokenizer.encode(text), dtype=torch.long), 0.1)
    results = [run(data, tokenizer.vocab_size, *spec) for spec in RUNS]
    OUT.write_text(json.dumps({
        "_sobre": "GPT de caracteres do Apêndice A: perda de validação e tempo por duração, taxa, "
                  "agenda e threads; gerado por scripts/gpt_caracteres_orcamento.py.",
        "cpu": cpu_name(), "capacidade_torch": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__, "lote": 32, "contexto": 64, "execucoes": results,
    }, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"gravado em {OUT}")


if __name__ == "__main__":
    main()
