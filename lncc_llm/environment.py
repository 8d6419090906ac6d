"""Preparação do ambiente dos notebooks: silêncio, modo offline, sementes e dispositivo.

Ver Capítulo 1, seção "Verificação do ambiente".
"""
from __future__ import annotations

import contextlib
import logging
import os
import platform
import random
import sys
import warnings

import numpy as np
import torch

# Bibliotecas que escrevem no stderr só por serem importadas (ver COURSE.md, "Gotchas").
_NOISY_LOGGERS = (
    "torchao",
    "torch.utils._pytree",
    "bitsandbytes",
    "transformers",
    "huggingface_hub",
    "accelerate",
    "datasets",
    "peft",
    "trl",
    "matplotlib",
    "matplotlib.font_manager",
)

_QUIET_ENV = "LNCC_LLM_QUIET"


def silence_library_noise() -> None:
    """Silencia avisos e logs que bibliotecas imprimem ao serem importadas.

    Chame antes de importar ``transformers``; ``setup_notebook`` já faz isso.
    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    for name in _NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=".*TypedStorage is deprecated.*")
    import transformers  # depois de calar os loggers acima

    transformers.utils.logging.set_verbosity_error()
    # A barra "Loading weights" aparece a cada carga, mesmo de 0,1 s: fica desligada.
    # Só a conversão única do GGUF (models.convert_decoder) religa a barra.
    transformers.utils.logging.disable_progress_bar()


def progress_quiet() -> bool:
    """Diz se as barras de progresso devem ficar caladas (``LNCC_LLM_QUIET=1``, usado sob nbval).

    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    return os.environ.get(_QUIET_ENV, "0").strip().lower() in {"1", "true", "sim", "yes"}


def set_offline(offline: bool = True) -> None:
    """Liga (ou desliga) o modo offline do Hugging Face, sem nenhum download implícito.

    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    value = "1" if offline else "0"
    os.environ["HF_HUB_OFFLINE"] = value
    os.environ["TRANSFORMERS_OFFLINE"] = value
    os.environ["HF_DATASETS_OFFLINE"] = value
    if "huggingface_hub" in sys.modules:  # já importado: a constante foi lida na importação
        import huggingface_hub.constants as hf_constants

        hf_constants.HF_HUB_OFFLINE = offline


def is_offline() -> bool:
    """Diz se o modo offline do Hugging Face está ligado.

    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    if "huggingface_hub" in sys.modules:
        import huggingface_hub.constants as hf_constants

        return bool(hf_constants.HF_HUB_OFFLINE)
    return os.environ.get("HF_HUB_OFFLINE", "0").strip().lower() in {"1", "true", "yes", "on"}


def seed_everything(seed: int = 0) -> None:
    """Fixa as sementes de Python, NumPy e PyTorch (CPU e GPU).

    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"A semente deve ser um inteiro não negativo; recebi {seed!r}.")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # também semeia todas as GPUs
    os.environ["PYTHONHASHSEED"] = str(seed)


def choose_device(device: str | None = None) -> torch.device:
    """Escolhe o dispositivo: o pedido, ``$LNCC_LLM_DEVICE``, ou GPU se houver, senão CPU.

    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    requested = device or os.environ.get("LNCC_LLM_DEVICE") or None
    if requested is None:
        has_gpu = torch.cuda.is_available()
        return torch.device("cuda") if has_gpu else torch.device("cpu")
    try:
        chosen = torch.device(requested)
    except (RuntimeError, TypeError) as err:
        raise ValueError(
            f"Dispositivo desconhecido: {requested!r}. Use 'cpu', 'cuda' ou 'cuda:0'."
        ) from err
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"O dispositivo {requested!r} foi pedido, mas não há GPU CUDA visível. "
            "Use device='cpu' (ou remova LNCC_LLM_DEVICE)."
        )
    return chosen


def disable_tf32() -> bool:
    """Desliga o TF32 nas multiplicações de matrizes (cuBLAS) e no cuDNN; devolve ``True`` se ficou.

    Numa GPU Ampere ou mais nova, o PyTorch pode trocar o float32 das matmuls pelo TF32 (10 bits de
    mantissa, erro relativo perto de 1e-3); as saídas do livro são de float32 de verdade. Usa as
    chaves clássicas (``allow_tf32``), as que o PyTorch 2.13 aceita sem misturar com a API nova. Na
    CPU, onde não há TF32, as chaves também existem e ficam desligadas.
    Ver Introdução, seção "Como ler as saídas".
    """
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return not (torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32)


def environment_line(device: torch.device, seed: int, tf32_off: bool = True) -> str:
    """Monta as duas linhas curtas e estáveis que descrevem o ambiente do notebook.

    Versões na primeira linha; dispositivo, semente, modo offline e o TF32 na segunda, para que
    nenhuma passe da largura da página do livro.

    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    import transformers

    from . import __version__

    torch_version = torch.__version__.split("+")[0]
    py = ".".join(platform.python_version_tuple()[:2])
    return (
        f"lncc_llm {__version__} | Python {py} | torch {torch_version} | "
        f"transformers {transformers.__version__}\n"
        f"dispositivo: {device.type} | semente: {seed} | "
        f"offline: {'sim' if is_offline() else 'não'} | "
        f"TF32: {'desligado' if tf32_off else 'ligado'}"
    )


def setup_notebook(seed: int = 0, device: str | None = None, offline: bool = True) -> torch.device:
    """Prepara um capítulo: silencia ruído, força o modo offline, fixa sementes, desliga o TF32 e
    escolhe o dispositivo.

    Imprime duas linhas estáveis com versões, dispositivo, semente, modo offline e TF32 (desligado
    na GPU e na CPU, para que as contas em float32 sejam as mesmas), e devolve o
    ``torch.device`` escolhido. Leitores online podem passar ``offline=False``
    para carregar modelos do Hub por nome.
    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    set_offline(offline)  # antes de importar transformers, que lê o modo offline na importação
    silence_library_noise()
    seed_everything(seed)
    chosen = choose_device(device)
    print(environment_line(chosen, seed, tf32_off=disable_tf32()))
    return chosen


def rounded(values, digits: int = 3) -> list | float:
    """Tensor (ou lista) como listas Python arredondadas a ``digits`` casas, para saídas estáveis.

    Arredonda em ``float64`` na CPU e troca ``-0.0`` por ``0.0``, então a mesma conta
    imprime o mesmo texto na CPU e na GPU, execução após execução (é o que o nbval compara).
    Ver Capítulo 2, seção 2.1.
    """
    # + 0.0: sem "-0.0"
    t = torch.as_tensor(values).detach().cpu().double().round(decimals=digits) + 0.0
    return t.tolist()


def progress(iterable=None, **kwargs):
    """Barra de progresso (``tqdm.auto``) que aparece no JupyterLab e fica calada sob nbval.

    Use em laços de mais de alguns segundos: ``for step in progress(range(n), desc="treino")``.
    Com ``LNCC_LLM_QUIET=1`` (nbval, ``scripts/executar_notebooks.py``) nada é exibido.
    Ver Capítulo 1, seção "Verificação do ambiente".
    """
    from tqdm.auto import tqdm

    kwargs.setdefault("disable", progress_quiet())
    kwargs.setdefault("leave", False)
    return tqdm(iterable, **kwargs)


@contextlib.contextmanager
def quiet_datasets(quiet: bool = True):
    """Cala as barras do ``datasets`` ("Tokenizing…", "Generating test split…") dentro do bloco.

    Elas aparecem mesmo com ``disable_tqdm=True`` nos treinadores e, num kernel, viram *widgets* que
    o nbval veria como saída. Com ``quiet=False`` o bloco não muda nada (no JupyterLab as barras
    ficam).
    Ver Capítulo 7, seções 7.6 e 7.9, e Capítulo 8, seção 8.4.
    """
    if not quiet:
        yield
        return
    from datasets.utils import logging as ds_logging

    was_enabled = ds_logging.is_progress_bar_enabled()
    ds_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            ds_logging.enable_progress_bar()
