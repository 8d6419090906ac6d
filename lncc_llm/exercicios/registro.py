"""Progresso local e opcional nos exercícios: um arquivo JSON no cache do curso, nunca enviado a lugar nenhum.

Desligado com ``LNCC_LLM_PROGRESSO=0`` e sempre desligado sob a CI (variável ``CI``) e sob o pytest
(o ``conftest.py`` da raiz exporta ``LNCC_LLM_PROGRESSO=0`` antes de abrir os kernels do nbval).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

_DESLIGADO = {"0", "nao", "não", "off", "false", "no"}


def ligado() -> bool:
    """O registro de progresso está ligado? Ver Introdução, "Exercícios que conferem a sua resposta"."""
    if os.environ.get("CI"):
        return False
    return os.environ.get("LNCC_LLM_PROGRESSO", "1").strip().lower() not in _DESLIGADO


def arquivo() -> Path:
    """``progresso.json`` na pasta de cache do curso (``$LNCC_LLM_CACHE``, ``$XDG_CACHE_HOME/lncc_llm`` ou
    ``~/.cache/lncc_llm``; a mesma regra de ``lncc_llm.models.cache_dir``, repetida para não importar o torch)."""
    base = os.environ.get("LNCC_LLM_CACHE")
    if base:
        return Path(base).expanduser() / "progresso.json"
    raiz = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(raiz).expanduser() / "lncc_llm" / "progresso.json"


_VAZIO = {"tentativas": 0, "dicas": 0, "viu_solucao": False, "correto": False}


def _ler() -> dict:
    """O registro guardado; um arquivo ilegível ou de outro formato conta como vazio (nunca quebra um exercício)."""
    try:
        dados = json.loads(arquivo().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(dados, dict):
        return {}
    return {chave: {**_VAZIO, **item} for chave, item in dados.items() if isinstance(item, dict)}


def registrar(exercicio_id: str, evento: str) -> None:
    """Anota uma tentativa (``correto``, ``incorreto``, ``nao_tentado``, ``erro``, ``dica``, ``solucao``).

    Um cache que não pode ser escrito não atrapalha o exercício: o registro é só pulado.
    """
    if not ligado():
        return
    dados = _ler()
    item = dados.setdefault(exercicio_id, dict(_VAZIO))
    if evento == "dica":
        item["dicas"] += 1
    elif evento == "solucao":
        item["viu_solucao"] = True
    elif evento != "nao_tentado":
        item["tentativas"] += 1
        item["correto"] = item["correto"] or evento == "correto"
    try:
        caminho = arquivo()
        caminho.parent.mkdir(parents=True, exist_ok=True)
        caminho.write_text(json.dumps(dados, indent=1, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    except OSError:
        pass


def resumo(ids_por_capitulo: dict[str, list[str]]) -> list[tuple[str, int, int, int]]:
    """(capítulo, exercícios, tentados, corretos) de cada capítulo, lidos do arquivo local."""
    dados = _ler()
    linhas = []
    for capitulo, ids in ids_por_capitulo.items():
        tentados = sum(1 for i in ids if dados.get(i, {}).get("tentativas", 0) > 0)
        corretos = sum(1 for i in ids if dados.get(i, {}).get("correto", False))
        linhas.append((capitulo, len(ids), tentados, corretos))
    return linhas
