"""O tokenizador BPE do GPT-2 (``r50k_base``) sem internet.

O ``tiktoken.get_encoding("gpt2")`` baixa o vocabulário de um servidor da OpenAI,
o que não funciona offline. O mesmo arquivo de *merges*, ``gpt2.tiktoken``,
vem dentro do sdist do ``openai-whisper`` (pasta ``whisper/assets``). Aqui ele é
localizado com ``importlib.util.find_spec``, sem importar o whisper, e vira um
``tiktoken.Encoding`` idêntico ao ``r50k_base``.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
from pathlib import Path

WHISPER_REQUIREMENT = "openai-whisper==20250625"
INSTALL_COMMAND = f"pip install --no-deps {WHISPER_REQUIREMENT}"
GPT2_BPE_FILE = ("assets", "gpt2.tiktoken")
# SHA-256 publicado pelo tiktoken para r50k_base.tiktoken (tiktoken_ext/openai_public.py).
R50K_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"

ENDOFTEXT = "<|endoftext|>"
ENDOFTEXT_ID = 50256
N_VOCAB = 50257

# A regex de pré-segmentação do r50k_base, copiada de tiktoken_ext/openai_public.py
# (r50k_pat_str). Um teste confere que continua igual à do tiktoken instalado.
R50K_PATTERN = (r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|"""
                r"""\s+(?!\S)|\s""")


class TokenizerNotAvailableError(RuntimeError):
    """O arquivo do BPE do GPT-2 não foi encontrado; a mensagem diz o que instalar.

    Ver Apêndice A, seção A.2.
    """


def gpt2_bpe_path() -> Path:
    """Caminho de ``whisper/assets/gpt2.tiktoken``, achado sem importar o whisper.

    Levanta ``TokenizerNotAvailableError`` com o comando ``pip`` exato quando o
    pacote (ou o arquivo) falta.
    Ver Apêndice A, seção A.2.
    """
    spec = importlib.util.find_spec("whisper")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location).joinpath(*GPT2_BPE_FILE)
        if path.is_file():
            return path
    found = ("não está instalado" if not locations
             else "está instalado, mas sem whisper/assets/gpt2.tiktoken")
    raise TokenizerNotAvailableError(
        f"O pacote 'openai-whisper' {found}; ele traz o vocabulário BPE do GPT-2 usado offline. "
        f"Instale com:  {INSTALL_COMMAND}  (use --no-deps: só precisamos do arquivo, não do "
        "whisper nem das suas dependências). Online, tiktoken.get_encoding(\"gpt2\") também serve."
    )


@functools.lru_cache(maxsize=1)
def gpt2_tokenizer():
    """O tokenizador do GPT-2 (``r50k_base``) como ``tiktoken.Encoding``, sem internet.

    50257 tokens: 50256 *merges* do arquivo e o especial ``<|endoftext|>`` = 50256.
    Dá os mesmos ids de ``tiktoken.get_encoding("gpt2")``; por exemplo,
    "Every effort moves you" → [6109, 3626, 6100, 345]. O resultado fica em cache.
    Ver Apêndice A, seção A.2.
    """
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path = gpt2_bpe_path()
    ranks = load_tiktoken_bpe(str(path), expected_hash=R50K_SHA256)
    return tiktoken.Encoding(
        name="r50k_base",
        pat_str=R50K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={ENDOFTEXT: ENDOFTEXT_ID},
        explicit_n_vocab=N_VOCAB,
    )


def file_sha256(path: Path) -> str:
    """SHA-256 de um arquivo, em hexadecimal (para conferir o ``gpt2.tiktoken``).

    Ver Apêndice A, seção A.2.
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
