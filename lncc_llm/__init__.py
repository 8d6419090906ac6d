"""lncc_llm: as ferramentas do livro "Large Language Models: da teoria à prática".

Organizado por conceito: ``environment`` (preparação dos notebooks), ``checks`` (a linha de veredito
de cada conta conferida), ``formatting`` (inteiros com espaço fino nos milhares),
``stored_outputs`` (a regra com que o nbval compara os números das saídas guardadas), ``models``
(modelos offline), ``attention`` (atenção do zero), ``plotting`` (figuras), ``diagrams`` (diagramas
de arquitetura), ``rope`` (posições rotativas), ``moe`` (mistura de especialistas), ``sampling``
(temperatura, top-p e o laço de geração), ``gpt`` (um GPT do zero), ``tokenization`` (BPE do GPT-2
offline), ``corpus`` (Shakespeare offline), ``training`` (treino reprodutível), ``quantization``
(o decodificador em bf16, int8, nf4 e fp4 na CPU, com bytes e erros medidos), ``style`` (o
conjunto de estilo e o escore de voz), ``trainers`` (a configuração dos treinadores do trl na
CPU), ``finetuning`` (SFT, LoRA e QLoRA com o trl na CPU), ``likelihood`` (log p de uma
continuação), ``alignment`` (DPO,
REINFORCE e GRPO), ``evaluation`` (juiz, viés de posição, contaminação, múltipla escolha,
lm-evaluation-harness e abstenção) e ``widgets`` (exploradores interativos, com figura estática de
reserva). Os capítulos importam daqui; o que o texto-base mostra fica no notebook.
"""
__version__ = "0.1.0"

from .alignment import dpo_loss, grpo_advantages, reinforce
from .attention import (
    additive_mask,
    causal_mask,
    merge_heads,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
    split_heads,
)
from .checks import check
from .corpus import CharTokenizer, shakespeare_text, train_val_split
from .diagrams import (
    architecture_panels,
    draw_architecture_comparison,
    draw_update_spaces,
)
from .environment import (
    choose_device,
    progress,
    rounded,
    seed_everything,
    set_offline,
    setup_notebook,
    silence_library_noise,
)
from .evaluation import (
    judge_pair,
    multiple_choice_accuracy,
    near_duplicates,
    position_consistency,
)
from .finetuning import finetune, greedy_answers, side_by_side
from .formatting import fmt_int
from .gpt import GPT_CONFIG_124M, GPTConfig, GPTModel, count_parameters
from .likelihood import sequence_logprob
from .models import (
    CacheNotWritableError,
    ModelNotAvailableError,
    cache_dir,
    load_decoder,
    load_encoder,
)
from .moe import MoELayer, balance_loss, expert_load, moe_parameter_counts, top_k_route
from .plotting import pca_2d, plot_attention, plot_pca
from .quantization import (
    compare_to_reference,
    load_decoder_quantized,
    model_bytes,
    training_memory,
)
from .rope import (
    apply_rope,
    attention_logits,
    rope_angles,
    rope_cos_sin,
    rotate_half,
    rotation_matrix,
)
from .sampling import (
    apply_temperature,
    context_window,
    entropy,
    generate,
    penalize_repetition,
    sample_many,
    sampling_distribution,
    top_k_filter,
    top_p_filter,
)
from .style import style_dataset, style_matches, style_score
from .tokenization import gpt2_tokenizer
from .trainers import cpu_training_args, lora_config
from .training import fixed_threads, perplexity, text_perplexity

__all__ = [
    "__version__",
    "check",
    "fmt_int",
    "dpo_loss",
    "grpo_advantages",
    "reinforce",
    "judge_pair",
    "multiple_choice_accuracy",
    "near_duplicates",
    "position_consistency",
    "sequence_logprob",
    "additive_mask",
    "causal_mask",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "scaled_dot_product_attention",
    "split_heads",
    "choose_device",
    "progress",
    "rounded",
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
    "architecture_panels",
    "draw_architecture_comparison",
    "draw_update_spaces",
    "cpu_training_args",
    "finetune",
    "greedy_answers",
    "side_by_side",
    "style_dataset",
    "style_score",
    "style_matches",
    "lora_config",
    "CharTokenizer",
    "shakespeare_text",
    "train_val_split",
    "GPT_CONFIG_124M",
    "GPTConfig",
    "GPTModel",
    "count_parameters",
    "MoELayer",
    "balance_loss",
    "expert_load",
    "moe_parameter_counts",
    "top_k_route",
    "apply_rope",
    "attention_logits",
    "rope_angles",
    "rope_cos_sin",
    "rotate_half",
    "rotation_matrix",
    "apply_temperature",
    "context_window",
    "entropy",
    "generate",
    "top_p_filter",
    "sample_many",
    "sampling_distribution",
    "top_k_filter",
    "penalize_repetition",
    "gpt2_tokenizer",
    "fixed_threads",
    "compare_to_reference",
    "load_decoder_quantized",
    "model_bytes",
    "training_memory",
    "perplexity",
    "text_perplexity",
]
