"""Treina por mais tempo o GPT de caracteres do Apêndice A e grava o checkpoint que ele carrega.

A mesma configuração da seção A.11 (d = 128, 2 camadas, 2 cabeças, contexto 64, dropout 0,2, os
mesmos tokenizador e divisão treino/validação), com AdamW, corte de gradiente 1, lotes de 64
janelas, taxa 3e-3 com 100 passos de aquecimento e decaimento em cosseno até 10 % dela, semente 0
para os pesos e para os lotes, e 2 threads. A cada 1 000 passos, a perda de validação nos 8 lotes
fixos da seção A.11 e o tempo.

Grava ``lncc_llm/dados/gpt_caracteres_longo.pt`` (o ``state_dict`` em fp32) e
``lncc_llm/dados/gpt_caracteres_longo.json`` (configuração, semente, curva, tempo, CPU, torch).

Uso: python scripts/gpt_caracteres_longo.py [passos]   (12 000 passos: cerca de 40 minutos numa
CPU de 2 núcleos; não rode nada pesado ao mesmo tempo, ou o tempo gravado não vale)
"""
from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import torch

from lncc_llm.corpus import CharTokenizer, shakespeare_text, train_val_split
from lncc_llm.gpt import GPTConfig, GPTModel
from lncc_llm.training import estimate_loss, language_model_loss, random_batch

DADOS = Path(__file__).resolve().parents[1] / "lncc_llm" / "dados"
PASSOS, LOTE, TAXA, AQUECIMENTO, THREADS, SEMENTE = 12_000, 64, 3e-3, 100, 2, 0


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "desconhecida"


def main(total: int) -> None:
    torch.set_num_threads(THREADS)
    text = shakespeare_text()
    tokenizer = CharTokenizer(text)
    data = torch.tensor(tokenizer.encode(text), dtype=torch.long)
    train_data, val_data = train_val_split(data, 0.1)
    eval_generator = torch.Generator().manual_seed(1234)
    for _ in range(8):             # os lotes fixos de treino da A.11 vêm antes dos de validação
        random_batch(train_data, 64, 64, eval_generator)
    val_batches = [random_batch(val_data, 64, 64, eval_generator) for _ in range(8)]
    cfg = dict(vocab_size=tokenizer.vocab_size, max_seq_len=64, d_model=128, n_heads=2, n_layers=2,
               dropout=0.2)
    torch.manual_seed(SEMENTE)
    model = GPTModel(GPTConfig(**cfg))
    optimizer = torch.optim.AdamW(model.parameters(), lr=TAXA)

    def rate(step):
        if step < AQUECIMENTO:
            return TAXA * (step + 1) / AQUECIMENTO
        progress = (step - AQUECIMENTO) / max(1, total - AQUECIMENTO)
        return 0.1 * TAXA + 0.9 * TAXA * 0.5 * (1 + math.cos(math.pi * progress))

    batch_generator = torch.Generator().manual_seed(SEMENTE)
    start, curve = time.perf_counter(), []
    for step in range(total):
        for group in optimizer.param_groups:
            group["lr"] = rate(step)
        model.train()
        x, y = random_batch(train_data, LOTE, 64, batch_generator)
        loss = language_model_loss(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if (step + 1) % 1000 == 0 or step + 1 == total:
            curve.append({"passos": step + 1, "segundos": round(time.perf_counter() - start, 1),
                          "perda_validacao": round(estimate_loss(model, val_batches), 4)})
            print(curve[-1], flush=True)
    model.eval()
    torch.save(model.state_dict(), DADOS / "gpt_caracteres_longo.pt")
    (DADOS / "gpt_caracteres_longo.json").write_text(json.dumps({
        "_sobre": "O GPT de caracteres do Apêndice A treinado por mais tempo; gerado por "
                  "scripts/gpt_caracteres_longo.py (os pesos estão em gpt_caracteres_longo.pt).",
        "config": cfg, "semente": SEMENTE, "lote": LOTE, "taxa": TAXA, "aquecimento": AQUECIMENTO,
        "agenda": "cosseno até 10 % da taxa", "threads": THREADS, "passos": total,
        "cpu": cpu_name(), "capacidade_torch": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__, "curva": curve,
    }, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"gravado em {DADOS}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else PASSOS)
