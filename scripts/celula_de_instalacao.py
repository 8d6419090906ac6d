"""Escreve a célula de instalação no topo de cada notebook e o endereço do repositório onde aparece.

    python scripts/celula_de_instalacao.py             # reescreve o que estiver diferente
    python scripts/celula_de_instalacao.py --conferir  # só confere (sai com 1 se algo mudaria)

O endereço do repositório tem um só lugar: ``repository.url`` em ``_config.yml`` (que também
alimenta os botões de Colab e Binder do livro). Daqui saem:

- a primeira célula de código de cada notebook, de um só modelo (``MODELO``): onde o ``lncc_llm``
  não está instalado, ela o instala sem dependências de ``git+<url>`` (ou de ``$LNCC_LLM_FONTE``,
  um wheel local no ensaio do Colab, ``scripts/ensaio_colab.py``) e chama
  ``lncc_llm.instalacao.instalar("<notebook>")``, que instala o que falta ao capítulo (os grupos de
  ``lncc_llm/dados/instalacao.json``); onde o curso já está, não faz nada e não imprime nada;
- os links de Colab e Binder e o ``git+`` do README e de ``book/intro.md``, e o ``[project.urls]``
  do ``pyproject.toml``.

``tests/test_instalacao.py`` confere que tudo isso é o que este script gera.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

RAIZ = Path(__file__).resolve().parents[1]
LIVRO = RAIZ / "book"
ID_DA_CELULA = "lncc-instalacao"
METADADOS = {"cellView": "form", "jupyter": {"source_hidden": True}, "tags": ["hide-input"]}

MODELO = '''\
# @title Instalação (Colab ou ambiente novo; onde o curso já está, não faz nada)
# NBVAL_IGNORE_OUTPUT
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("lncc_llm") is None:
    source = os.environ.get("LNCC_LLM_FONTE", "git+{url}")
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", source]
    pip = subprocess.run(command, capture_output=True, text=True)
    if pip.returncode:
        raise RuntimeError(f"Não consegui instalar o lncc_llm de {{source}}:\\n"
                           + pip.stderr[-1500:])
    importlib.invalidate_caches()

from lncc_llm.instalacao import instalar

instalar("{notebook}")'''

# Os lugares, fora dos notebooks, em que o endereço aparece: (arquivo, expressão com os grupos
# "dono", "repo" e, nos links de Colab e Binder, "ramo", o repository.branch de _config.yml).
_URL = r"(?P<dono>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+?)"
_COLAB = rf"https://colab\.research\.google\.com/github/{_URL}/blob/(?P<ramo>[A-Za-z0-9_.-]+)/"
_BINDER = rf"https://mybinder\.org/v2/gh/{_URL}/(?P<ramo>[A-Za-z0-9_.-]+)\?"
_CLONE = rf"(?<=git clone )https://github\.com/{_URL}(?=[ `\n])"
COPIAS = [
    ("README.md", _COLAB),
    ("README.md", _BINDER),
    ("README.md", rf"git\+https://github\.com/{_URL}(?=[\"'`@ ])"),
    ("README.md", _CLONE),
    ("book/intro.md", _COLAB),
    ("book/intro.md", _BINDER),
    ("book/intro.md", _CLONE),
    ("pyproject.toml", rf"(?<=Repository = \")https://github\.com/{_URL}(?=\")"),
]


def _config() -> dict:
    return yaml.safe_load((RAIZ / "_config.yml").read_text(encoding="utf-8"))


def ramo_do_repositorio() -> str:
    """``repository.branch`` de ``_config.yml`` (o ramo que os links de Colab e Binder abrem)."""
    return str(_config()["repository"].get("branch", "main"))


def url_do_repositorio() -> str:
    """``repository.url`` de ``_config.yml``, sem barra no fim."""
    url = str(_config()["repository"]["url"]).rstrip("/")
    forma = r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
    if not re.fullmatch(forma, url) or url.endswith(".git"):
        raise SystemExit("repository.url de _config.yml deveria ser https://github.com/dono/repo, "
                         "sem .git; "
                         f"é {url!r}")
    return url


def celula(notebook: str, url: str) -> dict:
    """A célula de instalação de ``notebook``, sem saída."""
    fonte = MODELO.format(url=url, notebook=notebook)
    return {"cell_type": "code", "execution_count": None, "id": ID_DA_CELULA,
            "metadata": json.loads(json.dumps(METADADOS)), "outputs": [],
            "source": fonte.splitlines(keepends=True)}


def com_celula(caderno: dict, notebook: str, url: str) -> dict:
    """O notebook com a célula de instalação como primeira célula de código (trocada, se já há).

    Ao entrar pela primeira vez, ela recebe o contador de execução 1 e as outras sobem uma casa: é
    o que uma reexecução daria, porque onde o curso está instalado a célula não imprime nada e não
    muda o que as outras calculam (o nbval confere isso ao reexecutar o notebook inteiro).
    """
    antiga = next((c for c in caderno["cells"] if c.get("id") == ID_DA_CELULA), None)
    celulas = [c for c in caderno["cells"] if c is not antiga]
    nova = celula(notebook, url)
    if antiga is not None:
        nova["execution_count"] = antiga.get("execution_count")
    else:
        for c in celulas:
            if c["cell_type"] == "code" and isinstance(c.get("execution_count"), int):
                c["execution_count"] += 1
                for saida in c.get("outputs", []):
                    if "execution_count" in saida:
                        saida["execution_count"] = c["execution_count"]
        nova["execution_count"] = 1
    primeira = next(i for i, c in enumerate(celulas) if c["cell_type"] == "code")
    caderno["cells"] = celulas[:primeira] + [nova] + celulas[primeira:]
    return caderno


def copias_do_endereco(url: str, ramo: str = "main") -> dict[str, tuple[str, str]]:
    """``{arquivo: (texto atual, texto com o endereço e o ramo de _config.yml)}``, para cada arquivo
    de ``COPIAS``."""
    dono, repo = url.removeprefix("https://github.com/").split("/")
    novos = {"dono": dono, "repo": repo, "ramo": ramo}

    def trocar(m: re.Match) -> str:
        texto, inicio = m.group(0), m.start()
        for nome in sorted((n for n in novos if m.groupdict().get(n) is not None),
                           key=lambda n: m.start(n), reverse=True):
            a, b = m.start(nome) - inicio, m.end(nome) - inicio
            texto = texto[:a] + novos[nome] + texto[b:]
        return texto

    saida = {}
    for arquivo, padrao in COPIAS:
        original, atual = saida.get(arquivo, (None, None))
        if atual is None:
            original = atual = (RAIZ / arquivo).read_text(encoding="utf-8")
        saida[arquivo] = (original, re.sub(padrao, trocar, atual))
    return saida


def main(argv: list[str]) -> int:
    conferir = "--conferir" in argv
    url = url_do_repositorio()
    notebooks = json.loads((RAIZ / "lncc_llm" / "dados" / "instalacao.json").read_text(
        encoding="utf-8"))["notebooks"]
    presentes = sorted(p.stem for p in LIVRO.glob("*.ipynb"))
    if sorted(notebooks) != presentes:
        print("lncc_llm/dados/instalacao.json e book/ não têm os mesmos notebooks: "
              f"só no JSON {sorted(set(notebooks) - set(presentes))}, "
              f"só em book/ {sorted(set(presentes) - set(notebooks))}.")
        return 1
    velhos = []
    for nome in presentes:
        caminho = LIVRO / f"{nome}.ipynb"
        antes = caminho.read_text(encoding="utf-8")
        depois = json.dumps(com_celula(json.loads(antes), nome, url), indent=1,
                            ensure_ascii=False) + "\n"
        if depois != antes:
            velhos.append(caminho.name)
            if not conferir:
                caminho.write_text(depois, encoding="utf-8")
    for arquivo, (antes, depois) in copias_do_endereco(url, ramo_do_repositorio()).items():
        if depois != antes:
            velhos.append(arquivo)
            if not conferir:
                (RAIZ / arquivo).write_text(depois, encoding="utf-8")
    acao = "diferem do gerado" if conferir else "reescritos"
    lista = f": {', '.join(velhos)}" if velhos else ""
    print(f"endereço {url}: {len(velhos)} arquivos {acao}{lista}")
    return 1 if conferir and velhos else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
