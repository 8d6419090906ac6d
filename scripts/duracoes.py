#!/usr/bin/env python3
"""Tempo de cada arquivo de teste e de cada notebook, lido de um relatório ``--junitxml`` do pytest.

Uso, da raiz do repositório:

    python -m pytest tests book -n 2 --dist loadfile ... --junitxml=relatorio.xml
    python scripts/duracoes.py relatorio.xml            # imprime a tabela
    python scripts/duracoes.py relatorio.xml --gravar   # e atualiza tests/duracoes.json

O ``conftest.py`` usa ``tests/duracoes.json`` para mandar os arquivos mais longos primeiro aos
workers do pytest-xdist, e a coluna "Tempo na CI" da tabela de capítulos de ``book/intro.md``
vem dele (``--gravar`` reescreve os dois; ``tests/test_project.py`` confere que concordam).
O tempo de um arquivo é a soma dos tempos dos seus testes (preparação,
execução e finalização; para um notebook, o kernel e todas as células).
"""
import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DURATIONS = ROOT / "tests" / "duracoes.json"
INTRO = ROOT / "book" / "intro.md"
_ROW = re.compile(r"^(\| \[[^\]]+\]\((?P<nb>[a-z0-9_]+\.ipynb)\) \|.*\| )(?P<tempo>[^|]*?)( \|)$")


def readable(seconds: float) -> str:
    """O tempo como o leitor o lê: ``≈ 15 s`` (de 5 em 5 s) ou ``≈ 2 min 30 s`` (de 10 em 10 s)."""
    if seconds < 57.5:
        return f"≈ {max(5, 5 * round(seconds / 5))} s"
    total = 10 * round(seconds / 10)
    minutes, rest = divmod(total, 60)
    return f"≈ {minutes} min" + (f" {rest} s" if rest else "")


def intro_with_times(text: str, durations: dict[str, int]) -> str:
    """``book/intro.md`` com a última coluna de cada linha de capítulo tirada de ``durations``."""
    lines = []
    for line in text.split("\n"):
        m = _ROW.match(line)
        if m and f"book/{m.group('nb')}" in durations:
            line = m.group(1) + readable(durations[f"book/{m.group('nb')}"]) + m.group(4)
        lines.append(line)
    return "\n".join(lines)


def known_files():
    """Os arquivos que o comando de testes coleta, com o nome que o junitxml dá a cada um."""
    files = sorted(ROOT.glob("tests/test_*.py")) + sorted(ROOT.glob("book/*.ipynb"))
    names = [p.relative_to(ROOT).as_posix() for p in files]
    return {name: name.replace("/", ".").removesuffix(".py") for name in names}


def seconds_per_file(report: Path) -> dict[str, float]:
    """{arquivo: segundos} somando os ``<testcase>`` de cada arquivo do relatório."""
    files = known_files()
    totals, unknown = defaultdict(float), set()
    for case in ET.parse(report).getroot().iter("testcase"):
        classname = case.get("classname", "")
        owner = next((f for f, dotted in files.items()
                      if classname == dotted or classname.startswith(dotted + ".")), None)
        if owner is None:
            unknown.add(classname)
            continue
        totals[owner] += float(case.get("time", 0))
    if unknown:
        print(f"aviso: {len(unknown)} grupos sem arquivo conhecido: {sorted(unknown)[:5]}",
              file=sys.stderr)
    return dict(totals)


def table(totals: dict[str, float]) -> str:
    rows = sorted(totals.items(), key=lambda kv: -kv[1])
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {secs:7.1f} s" for name, secs in rows]
    notebooks = sum(s for n, s in rows if n.endswith(".ipynb"))
    units = sum(s for n, s in rows if not n.endswith(".ipynb"))
    lines.append(f"{'notebooks (soma)':<{width}}  {notebooks:7.1f} s")
    lines.append(f"{'testes de unidade (soma)':<{width}}  {units:7.1f} s")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("relatorio", type=Path, help="arquivo gerado por pytest --junitxml")
    parser.add_argument("--gravar", action="store_true",
                        help=f"atualiza {DURATIONS.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    totals = seconds_per_file(args.relatorio)
    if not totals:
        sys.exit(f"Nenhum teste do curso em {args.relatorio}.")
    print(table(totals))
    if args.gravar:
        rounded = sorted(((k, round(v)) for k, v in totals.items()), key=lambda kv: (-kv[1], kv[0]))
        text = json.dumps(dict(rounded), indent=1, ensure_ascii=False) + "\n"
        DURATIONS.write_text(text, encoding="utf-8")
        intro = intro_with_times(INTRO.read_text(encoding="utf-8"), dict(rounded))
        INTRO.write_text(intro, encoding="utf-8")
        print(f"gravados: {DURATIONS.relative_to(ROOT)} e os tempos de {INTRO.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
