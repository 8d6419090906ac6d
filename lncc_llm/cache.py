"""A pasta de cache do curso (o modelo convertido, o corpus, os dados baixados, o progresso).

Só a biblioteca padrão: ``lncc_llm.instalacao`` e os exercícios a usam sem importar o torch.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path

CACHE_ENV = "LNCC_LLM_CACHE"


class CacheNotWritableError(OSError):
    """A pasta de cache do curso não pode ser criada ou escrita; a mensagem diz como escolher outra.

    Ver Capítulo 1, seção "Verificação do ambiente".
    """


def cache_dir(create: bool = True) -> Path:
    """Pasta de cache do curso: ``$LNCC_LLM_CACHE``, senão ``$XDG_CACHE_HOME/lncc_llm``, senão
    ``~/.cache/lncc_llm``.

    Com ``create=True`` garante que a pasta existe e aceita escrita; senão levanta
    ``CacheNotWritableError`` dizendo como escolher outra.
    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    if os.environ.get(CACHE_ENV):
        path = Path(os.environ[CACHE_ENV]).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        path = Path(base).expanduser() / "lncc_llm"
    if not create:
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".teste-escrita-{uuid.uuid4().hex}"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as err:
        raise CacheNotWritableError(
            f"Não consigo escrever na pasta de cache {str(path)!r} ({err.strerror or err}). "
            f"Escolha uma pasta gravável com a variável de ambiente {CACHE_ENV}, por exemplo:  "
            f"export {CACHE_ENV}=/tmp/lncc_llm_cache"
        ) from err
    return path
