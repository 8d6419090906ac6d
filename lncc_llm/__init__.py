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

import importlib
import importlib.util

# Importação preguiçosa (PEP 562): ``from lncc_llm import check`` carrega só o módulo dele, e
# ``import lncc_llm.exercicios`` não puxa o torch (os exercícios conferem respostas sem ele).
_ONDE = {
    "dpo_loss": "alignment",
    "grpo_advantages": "alignment",
    "reinforce": "alignment",
    "additive_mask": "attention",
    "causal_mask": "attention",
    "merge_heads": "attention",
    "multi_head_attention": "attention",
    "padding_mask": "attention",
    "scaled_dot_product_attention": "attention",
    "split_heads": "attention",
    "check": "checks",
    "CharTokenizer": "corpus",
    "shakespeare_text": "corpus",
    "train_val_split": "corpus",
    "architecture_panels": "diagrams",
    "draw_architecture_comparison": "diagrams",
    "draw_update_spaces": "diagrams",
    "draw_layer_stack": "diagrams",
    "draw_moe_routing": "diagrams",
    "draw_rope_rotation": "diagrams",
    "choose_device": "environment",
    "progress": "environment",
    "rounded": "environment",
    "seed_everything": "environment",
    "set_offline": "environment",
    "setup_notebook": "environment",
    "silence_library_noise": "environment",
    "judge_pair": "evaluation",
    "multiple_choice_accuracy": "evaluation",
    "near_duplicates": "evaluation",
    "position_consistency": "evaluation",
    "finetune": "finetuning",
    "greedy_answers": "finetuning",
    "side_by_side": "finetuning",
    "fmt_int": "formatting",
    "GPT_CONFIG_124M": "gpt",
    "GPTConfig": "gpt",
    "GPTModel": "gpt",
    "count_parameters": "gpt",
    "sequence_logprob": "likelihood",
    "CacheNotWritableError": "models",
    "ModelNotAvailableError": "models",
    "cache_dir": "models",
    "load_decoder": "models",
    "load_encoder": "models",
    "MoELayer": "moe",
    "balance_loss": "moe",
    "expert_load": "moe",
    "moe_parameter_counts": "moe",
    "top_k_route": "moe",
    "pca_2d": "plotting",
    "plot_attention": "plotting",
    "plot_pca": "plotting",
    "compare_to_reference": "quantization",
    "load_decoder_quantized": "quantization",
    "model_bytes": "quantization",
    "training_memory": "quantization",
    "apply_rope": "rope",
    "attention_logits": "rope",
    "rope_angles": "rope",
    "rope_cos_sin": "rope",
    "rotate_half": "rope",
    "rotation_matrix": "rope",
    "apply_temperature": "sampling",
    "context_window": "sampling",
    "entropy": "sampling",
    "generate": "sampling",
    "penalize_repetition": "sampling",
    "sample_many": "sampling",
    "sampling_distribution": "sampling",
    "top_k_filter": "sampling",
    "top_p_filter": "sampling",
    "style_dataset": "style",
    "style_matches": "style",
    "style_score": "style",
    "gpt2_tokenizer": "tokenization",
    "cpu_training_args": "trainers",
    "lora_config": "trainers",
    "fixed_threads": "training",
    "perplexity": "training",
    "text_perplexity": "training",
}


def __getattr__(nome: str):
    modulo = _ONDE.get(nome)
    if modulo is None and importlib.util.find_spec(f"{__name__}.{nome}") is not None:
        return importlib.import_module(f".{nome}", __name__)   # um submódulo: lncc_llm.models
    if modulo is None:
        raise AttributeError(f"o módulo 'lncc_llm' não tem o atributo {nome!r}")
    valor = getattr(importlib.import_module(f".{modulo}", __name__), nome)
    globals()[nome] = valor
    return valor


def __dir__():
    return sorted(set(globals()) | set(_ONDE))

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
    "draw_layer_stack",
    "draw_moe_routing",
    "draw_rope_rotation",
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
