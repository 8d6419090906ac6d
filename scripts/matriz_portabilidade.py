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
("célula N" é a numeração do nbval: a N-ésima célula de **código**, contando de 0). Numa CPU sem
AVX-512, ``avx2-Nt`` e ``melhor-Nt`` são a mesma configuração, e o script roda só uma delas. Cada
execução é um ``pytest --nbval`` num processo só; rode o script sozinho na máquina (os tempos de
vários processos de PyTorch ao mesmo tempo se atrapalham).
"""
import argparse
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


def run(notebook: Path, env_extra: dict, log: Path | None = None) -> tuple[list[str], float]:
    """Roda o nbval num notebook; devolve as células que falharam e o tempo.

    Com ``log``, grava ali a saída do pytest (as diferenças célula a célula)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.xml"
        cmd = [sys.executable, "-m", "pytest", str(notebook), "--nbval", "--nbval-current-env",
               "--nbval-sanitize-with", str(ROOT / "tests" / "sanitize.cfg"), "-q",
               "-p", "no:cacheprovider", f"--junitxml={report}"]
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **env_extra},
                              capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if log is not None:
            log.write_text(done.stdout + done.stderr, encoding="utf-8")
        if not report.exists():
            return ["(o pytest não produziu relatório)"], seconds
        failed = [case.get("name", "?") for case in ET.parse(report).iter("testcase")
                  if case.find("failure") is not None or case.find("error") is not None]
    return failed, seconds


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
    print(f"capacidade da CPU (torch): {best}")
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
            failed, seconds = run(nb, CONFIGS[name], log)
            cells_failed = [f.replace("Cell ", "célula ") for f in failed]
            verdict = ", ".join(cells_failed) if cells_failed else "ok"
            print(f"{nb.stem:<36} {name:<11} {seconds:6.0f} s  {verdict}", flush=True)
            cells.append(verdict)
        rows.append((nb.stem, cells))
    if args.saida:
        lines = ["| notebook | " + " | ".join(configs) + " |",
                 "|---|" + "---|" * len(configs)]
        lines += [f"| {stem} | " + " | ".join(cells) + " |" for stem, cells in rows]
        Path(args.saida).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0 if all(c == "ok" for _, cells in rows for c in cells) else 1


if __name__ == "__main__":
    sys.exit(main())
