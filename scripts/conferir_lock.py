"""Confere que o lock se resolve em Python 3.11, 3.12 e 3.13, com wheel para todo pacote compilado.

    python scripts/conferir_lock.py                  # 3.11.5, 3.12 e 3.13
    python scripts/conferir_lock.py --versoes 3.12   # só uma

O Colab roda um Python mais novo que o 3.11 em que o lock foi gerado. Para cada versão, o ``pip``
resolve (sem instalar: ``--dry-run``) cada linha de ``requirements-lock.txt``, menos o torch (o do
Colab fica), como se fosse aquela versão do Python nesta plataforma, e grava o relatório
(``--report``). O script falha se alguma linha não tem distribuição para aquela versão, ou se vem
como sdist um pacote que não está em ``SDISTS_PUROS`` (os que são Python puro e se instalam sem
compilar nada). Cada linha é resolvida sem as dependências (``--no-deps``): como o lock é o fecho
das dependências em 3.11, isso prova que cada versão fixada existe e se instala; uma dependência
que só um Python mais novo pedisse, fora do lock, não seria vista aqui. Precisa de
rede (o índice de pacotes) e uns 4 minutos de CPU (o resolvedor do pip lê cada página do índice):
por isso roda quando o lock muda (``scripts/atualizar_lock.sh`` o chama no fim), e não no
comando de testes do README; ``tests/test_instalacao.py`` testa a lógica com relatórios feitos à
mão.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

RAIZ = Path(__file__).resolve().parents[1]
# 3.11.5, não 3.11: o lock, gerado em 3.11.7, tem pacotes que pedem >= 3.11.5 (soupsieve 4.1.3)
VERSOES = ("3.11.5", "3.12", "3.13")
# sdists conferidos à mão: só Python, sem extensão compilada (o pip os monta em segundos)
SDISTS_PUROS = {"openai-whisper", "rouge-score", "sqlitedict", "word2number"}


def _norma(nome: str) -> str:
    return re.sub(r"[-_.]+", "-", nome).lower()


def linhas_do_lock(lock: Path = RAIZ / "requirements-lock.txt") -> list[str]:
    """As linhas ``nome==versão`` do lock, menos o torch."""
    linhas = []
    for linha in lock.read_text(encoding="utf-8").splitlines():
        linha = linha.split("#", 1)[0].strip()
        if "==" in linha and _norma(linha.split("==")[0]) != "torch":
            linhas.append(linha)
    return linhas


def conferir(versao: str, linhas: list[str]) -> list[str]:
    """Os problemas do lock em Python ``versao`` (lista vazia: resolve, e só com wheels ou sdists
    puros)."""
    with tempfile.TemporaryDirectory(prefix="lock_") as pasta:
        requisitos = Path(pasta) / "lock.txt"
        requisitos.write_text("\n".join(linhas) + "\n", encoding="utf-8")
        relatorio = Path(pasta) / "relatorio.json"
        comando = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
                   "--no-deps", "--disable-pip-version-check", "-q", "--python-version", versao,
                   "--target", str(Path(pasta) / "alvo"), "--report", str(relatorio),
                   "-r", str(requisitos)]
        resultado = subprocess.run(comando, capture_output=True, text=True)
        if resultado.returncode:
            fim = "\n".join(resultado.stderr.strip().splitlines()[-5:])
            return [f"Python {versao}: o pip não resolveu o lock:\n{fim}"]
        instalados = json.loads(relatorio.read_text(encoding="utf-8"))["install"]
    problemas = []
    if len(instalados) != len(linhas):
        problemas.append(f"Python {versao}: {len(linhas)} linhas, {len(instalados)} resolvidas")
    for item in instalados:
        nome = _norma(item["metadata"]["name"])
        url = item["download_info"]["url"]
        if not url.endswith(".whl") and nome not in SDISTS_PUROS:
            problemas.append(f"Python {versao}: {nome} só tem sdist ({url.rsplit('/', 1)[-1]}); "
                             "confira se compila e, se for Python puro, ponha-o em SDISTS_PUROS")
    return problemas


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versoes", nargs="+", default=list(VERSOES))
    args = parser.parse_args(argv)
    linhas = linhas_do_lock()
    falhas = 0
    for versao in args.versoes:
        problemas = conferir(versao, linhas)
        falhas += bool(problemas)
        print(f"Python {versao}: " + ("ok, " + f"{len(linhas)} pacotes (torch à parte)"
                                      if not problemas else "\n  ".join(["FALHOU", *problemas])))
    return 1 if falhas else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
