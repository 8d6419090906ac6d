"""lncc_llm: as ferramentas do livro "Large Language Models: da teoria à prática".

Organizado por conceito: ``environment`` (preparação dos notebooks), ``models``
(carregamento dos modelos offline), ``attention`` (atenção do zero) e ``plotting``
(figuras). Os capítulos importam daqui; o que o texto mostra fica no notebook.
"""
__version__ = "0.1.0"

from .attention import (
    additive_mask,
    causal_mask,
    merge_heads,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
    split_heads,
)
from .environment import (
    choose_device,
    progress,
    seed_everything,
    set_offline,
    setup_notebook,
    silence_library_noise,
)
from .models import (
    CacheNotWritableError,
    ModelNotAvailableError,
    cache_dir,
    load_decoder,
    load_encoder,
)
from .plotting import pca_2d, plot_attention, plot_pca

__all__ = [
    "__version__",
    "additive_mask",
    "causal_mask",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "scaled_dot_product_attention",
    "split_heads",
    "choose_device",
    "progress",
    "seed_everything",
    "set_offline",
    "setup_notebook",
    "silence_library_noise",
    "CacheNotWritableError",
    "ModelNotAvailableError",
    "cache_dir",
    "load_decoder",
    "load_encoder",
    "pca_2d",
    "plot_attention",
    "plot_pca",
]
