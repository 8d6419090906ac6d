#!/usr/bin/env python3
"""Matriz de portabilidade: o nbval de cada notebook em configurações que mudam a ordem das somas.

As saídas guardadas foram geradas numa CPU com as instruções vetoriais dela e 2 threads. Um leitor
com outra CPU soma os mesmos números em outra ordem. Este script reproduz isso numa máquina só:

- ``ATEN_CPU_CAPABILITY``: os *kernels* vetoriais do PyTorch (``default`` = nenhum, ``avx2``, ou
  o melhor que a CPU tiver), com ``MKL_ENABLE_INSTRUCTIONS`` e ``ONEDNN_MAX_CPU_ISA`` rebaixados
  junto;
- ``OMP_NUM_THREADS`` = 1 ou 2.

Uso, da raiz do repositório:

    python scripts/matriz_portabilidade.py               # todos os notebooks, 6 configurações
    python scripts/matriz_portabilidade.py cap04 cap05   # só os notebooks com esses nomes
    python scripts/matriz_portabilidade.py --configs default-1t melhor-2t --saida matriz.md
    python scripts/matriz_portabilidade.py cap06 --registros /tmp/matriz  # guarda as diferenças

Para cada notebook e configuração, imprime ``ok`` ou as células que diferem da saída guardada
("célula N" é a numeração do nbval: a N-ésima célula de **código**, contando de 0). O nbval compara
pela regra dos números do livro (``lncc_llm.stored_outputs``: uma unidade na última casa impressa);
quando a regra tolerou alguma coisa, o veredito diz quantos números mudaram na última casa
(``ok (3 na última casa)``), e ``--registros`` guarda quais. A tabela de ``--saida`` começa por uma
linha com a CPU: modelo, capacidade que o torch usa e as extensões AVX-512/AMX que ela tem.
Numa CPU sem AVX-512, ``avx2-Nt`` e ``melhor-Nt`` são a mesma configuração, e o script roda só
uma delas. Cada execução é um ``pytest --nbval`` num processo só; rode o script sozinho na máquina
(os tempos de vários processos de PyTorch ao mesmo tempo se atrapalham).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CAPABILITIES = {
    "melhor": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
             "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "default": {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
                "ONEDNN_MAX_CPU_ISA": "SSE41"},
}
CONFIGS = {f"{cap}-{n}t": {**env, "OMP_NUM_THREADS": str(n), "MKL_NUM_THREADS": str(n)}
           for cap, env in CAPABILITIES.items() for n in (1, 2)}


def cpu_summary(capability: str) -> str:
    """Uma linha sobre a CPU: modelo, a capacidade que o torch usa e as extensões AVX-512/AMX."""
    model, flags = "?", set()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "?":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:  # fora do Linux
        pass
    wide = sorted(f for f in flags if f.startswith(("avx512", "amx")))
    return (f"CPU: {model} | capacidade do torch: {capability} | "
            f"AVX-512/AMX: {', '.join(wide) if wide else 'nenhuma'}")


def markdown_table(cpu: str, configs: list[str], rows: list[tuple[str, list[str]]]) -> str:
    """A tabela de ``--saida``: a linha da CPU e um veredito por notebook e configuração."""
    lines = [cpu, "", "| notebook | " + " | ".join(configs) + " |", "|---|" + "---|" * len(configs)]
    lines += [f"| {stem} | " + " | ".join(cells) + " |" for stem, cells in rows]
    return "\n".join(lines) + "\n"


def run(notebook: Path, env_extra: dict, log: Path | None = None) -> tuple[list[str], float, list]:
    """Roda o nbval num notebook; devolve as células que falharam, o tempo e o que a regra tolerou.

    O terceiro item é a lista de ``(célula, [[guardado, novo], ...])`` das células que só passaram
    pela regra dos números. Com ``log``, grava ali a saída do pytest (as diferenças célula a célula)
    e, depois dela, os números tolerados."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.xml"
        drift_log = Path(tmp) / "deriva.jsonl"
        cmd = [sys.executable, "-m", "pytest", str(notebook), "--nbval", "--nbval-current-env",
               "--nbval-sanitize-with", str(ROOT / "tests" / "sanitize.cfg"), "-q",
               "-p", "no:cacheprovider", f"--junitxml={report}"]
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **env_extra,
                                                  "LNCC_LLM_DERIVA": str(drift_log)},
                              capture_output=True, text=True)
        seconds = time.perf_counter() - start
        drift = []
        if drift_log.exists():
            for line in drift_log.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                drift.append((entry["celula"].rsplit("::", 1)[-1], entry["numeros"]))
        if log is not None:
            tolerated = "".join(f"{cell}: {pairs}\n" for cell, pairs in drift)
            log.write_text(done.stdout + done.stderr + "\nnúmeros tolerados pela regra:\n"
                           + (tolerated or "nenhum\n"), encoding="utf-8")
        if not report.exists():
            return ["(o pytest não produziu relatório)"], seconds, drift
        failed = [case.get("name", "?") for case in ET.parse(report).iter("testcase")
                  if case.find("failure") is not None or case.find("error") is not None]
    return failed, seconds, drift


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", help="trechos do nome (padrão: todos)")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--saida", help="grava também a tabela em Markdown neste arquivo")
    parser.add_argument("--registros", help="pasta onde gravar a saída do pytest de cada execução")
    args = parser.parse_args()

    notebooks = sorted((ROOT / "book").glob("*.ipynb"))
    if args.notebooks:
        notebooks = [nb for nb in notebooks if any(part in nb.name for part in args.notebooks)]
        if not notebooks:
            parser.error(f"nenhum notebook tem {args.notebooks} no nome")
    best = subprocess.run([sys.executable, "-c", "import torch; "
                           "print(torch.backends.cpu.get_cpu_capability())"],
                          capture_output=True, text=True).stdout.strip()
    cpu = cpu_summary(best)
    print(cpu)
    configs = list(args.configs)
    if best == "AVX2":       # sem AVX-512, "avx2-Nt" é a mesma configuração que "melhor-Nt"
        for n in (1, 2):
            if f"avx2-{n}t" in configs and f"melhor-{n}t" in configs:
                configs.remove(f"avx2-{n}t")
                print(f"avx2-{n}t = melhor-{n}t nesta CPU: roda uma vez só")
    logs = Path(args.registros) if args.registros else None
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)
    rows = []
    for nb in notebooks:
        cells = []
        for name in configs:
            log = logs / f"{nb.stem}.{name}.log" if logs is not None else None
            failed, seconds, drift = run(nb, CONFIGS[name], log)
            cells_failed = [f.replace("Cell ", "célula ") for f in failed]
            moved = sum(len(pairs) for _, pairs in drift)
            verdict = (", ".join(cells_failed) if cells_failed
                       else f"ok ({moved} na última casa)" if moved else "ok")
            print(f"{nb.stem:<36} {name:<11} {seconds:6.0f} s  {verdict}", flush=True)
            cells.append(verdict)
        rows.append((nb.stem, cells))
    if args.saida:
        Path(args.saida).write_text(markdown_table(cpu, configs, rows), encoding="utf-8")
    return 0 if all(c.startswith("ok") for _, cells in rows for c in cells) else 1


if __name__ == "__main__":
    sys.exit(main())
