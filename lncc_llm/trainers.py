"""A configuração dos treinadores do ``trl`` na CPU, num lugar só: SFT, DPO, recompensa e GRPO.

* ``cpu_training_args``: a configuração segura para a CPU (``SFTConfig``, ``DPOConfig``,
  ``RewardConfig`` ou ``GRPOConfig``);
* ``make_trainer``: o ``SFTTrainer``, ``DPOTrainer``, ``RewardTrainer`` ou ``GRPOTrainer``, em
  silêncio sob nbval;
* ``run_training``: treina e apaga a pasta temporária;
* ``lora_config``: o ``peft.LoraConfig`` do curso.

O Capítulo 7 mostra, uma vez, o código do ``trl`` que estas funções montam para o SFT; o Capítulo 8,
para o DPO e o GRPO.
"""
from __future__ import annotations

import shutil
import tempfile

from .environment import progress_quiet, quiet_datasets, silence_library_noise

LORA_TARGETS = ("q_proj", "v_proj")
#: Todas as camadas lineares dos blocos (sem a cabeça de saída), como no artigo do QLoRA.
ALL_LINEAR = "all-linear"

# o prefixo da pasta temporária que cpu_training_args cria quando não recebe output_dir
TEMP_PREFIX = "lncc_llm_treino_"
TRAINERS = ("sft", "dpo", "grpo", "reward")


def cpu_training_args(output_dir: str | None = None, trainer: str = "sft", **overrides):
    """A configuração segura para a CPU de um treinador do ``trl``: o único lugar do curso que a
    monta.

    ``trainer`` escolhe a classe: ``"sft"`` → ``SFTConfig`` (Capítulo 7), ``"dpo"`` → ``DPOConfig``,
    ``"reward"`` → ``RewardConfig`` e ``"grpo"`` → ``GRPOConfig`` (Capítulo 8; no GRPO, grupos de 4
    respostas de até 16 tokens, 2 prompts por passo, no lugar dos 8 × 512 tokens do padrão do
    ``trl``). Em todas: sem bf16 (o padrão do
    ``trl`` 1.16 é ``bf16=True``, que falha numa máquina sem GPU e, com ``use_cpu``, mudaria os
    números), ``use_cpu``, sem
    *gradient checkpointing* (ligado por padrão no ``trl``; inútil e mais lento em 135 M), sem
    *checkpoints* (``save_strategy="no"``), sem relatórios, semente fixa, log a cada passo, taxa
    constante, barra de progresso no JupyterLab e silêncio sob nbval. ``output_dir`` vai para uma
    pasta temporária: o ``Trainer`` cria a pasta mesmo sem salvar nada, e ela não deve cair no
    repositório. Qualquer campo pode ser trocado em ``overrides`` (por exemplo
    ``use_cpu=False, bf16=True`` numa GPU).
    Ver Capítulo 7, seções 7.6 e 7.9, e Capítulo 8, seções 8.2 e 8.3.
    """
    silence_library_noise()
    import trl

    if trainer not in TRAINERS:
        raise ValueError(f"Treinador desconhecido: {trainer!r}. Use um destes: "
                         f"{', '.join(map(repr, TRAINERS))}.")
    config_class = {"sft": trl.SFTConfig, "dpo": trl.DPOConfig, "grpo": trl.GRPOConfig,
                    "reward": trl.RewardConfig}[trainer]
    if output_dir is None:
        output_dir = tempfile.mkdtemp(prefix=TEMP_PREFIX)
    settings = dict(
        output_dir=output_dir,
        bf16=False,
        fp16=False,
        use_cpu=True,
        gradient_checkpointing=False,
        save_strategy="no",
        eval_strategy="no",
        report_to="none",
        logging_steps=1,
        seed=0,
        data_seed=0,
        per_device_train_batch_size=4,
        lr_scheduler_type="constant",
        warmup_steps=0,
        dataloader_num_workers=0,
        disable_tqdm=progress_quiet(),
    )
    if trainer in ("sft", "dpo", "reward"):
        settings.update(max_length=128 if trainer == "sft" else 256, dataset_num_proc=None)
    else:   # GRPO: 2 prompts × grupos de 4 respostas curtas por passo
        # (o padrão do trl, 8 × 512 tokens, é de GPU)
        settings.update(per_device_train_batch_size=8, num_generations=4, max_completion_length=16)
    settings.update(overrides)
    return config_class(**settings)


def make_trainer(trainer: str, model, tokenizer, dataset, args, peft_config=None, callbacks=(),
                 **kwargs):
    """Monta um ``SFTTrainer``, ``DPOTrainer`` ou ``GRPOTrainer`` do ``trl`` em silêncio sob nbval.

    ``args`` vem de ``cpu_training_args(trainer=...)``. Sem barra de progresso (``disable_tqdm``), o
    ``PrinterCallback`` sai (senão cada dicionário de log vai para o stdout) e as barras
    "Tokenizing…" do ``datasets`` ficam caladas; no JupyterLab a barra do treino aparece.
    ``kwargs`` vão para o construtor (por exemplo ``reward_funcs`` no GRPO). Não é preciso fixar a
    semente antes: os quatro treinadores do ``trl`` 1.16 chamam ``set_seed(args.seed)`` antes de o
    ``peft`` sortear a matriz A do LoRA, então a mesma semente dá o mesmo A, qualquer que seja o
    estado do gerador antes da chamada (a cabeça nova de um modelo de recompensa é sorteada antes,
    ao carregar: ``reward_model.load_reward_model``).
    Ver Capítulo 7, seções 7.6 e 7.9, e Capítulo 8.
    """
    if trainer not in TRAINERS:
        raise ValueError(f"Treinador desconhecido: {trainer!r}. Use um destes: "
                         f"{', '.join(map(repr, TRAINERS))}.")
    silence_library_noise()
    import trl
    from transformers.trainer_callback import PrinterCallback

    trainer_class = {"sft": trl.SFTTrainer, "dpo": trl.DPOTrainer, "grpo": trl.GRPOTrainer,
                     "reward": trl.RewardTrainer}[trainer]
    with quiet_datasets(progress_quiet()):
        built = trainer_class(model=model, args=args, train_dataset=dataset,
                              processing_class=tokenizer, peft_config=peft_config,
                              callbacks=list(callbacks), **kwargs)
    if args.disable_tqdm:
        built.remove_callback(PrinterCallback)
    return built


def run_training(trainer, remove_output_dir: bool = True):
    """``trainer.train()`` e, no fim (mesmo com erro), apaga a pasta temporária de
    ``cpu_training_args``.

    Ver Capítulo 7, seção 7.9.
    """
    try:
        return trainer.train()
    finally:
        if remove_output_dir:
            shutil.rmtree(trainer.args.output_dir, ignore_errors=True)


def lora_config(rank: int = 8, alpha: int = 16, target_modules=LORA_TARGETS, dropout: float = 0.0,
                task_type: str = "CAUSAL_LM", modules_to_save=None):
    """``peft.LoraConfig`` do curso: posto ``rank``, escala ``alpha / rank``, nas projeções ``q`` e
    ``v`` (padrão) ou em ``target_modules`` (uma lista de nomes, ou ``"all-linear"``: todas as
    lineares dos blocos, como no QLoRA). Para um modelo de recompensa, ``task_type="SEQ_CLS"`` e
    ``modules_to_save=["score"]`` (a cabeça escalar treina inteira).

    Ver Capítulo 7, seção 7.10, e Capítulo 8, seções 8.2.3 e 8.2.5.
    """
    if not isinstance(rank, int) or isinstance(rank, bool) or rank <= 0:
        raise ValueError(f"O posto do LoRA deve ser um inteiro ≥ 1; recebi {rank!r}.")
    from peft import LoraConfig

    targets = target_modules if isinstance(target_modules, str) else list(target_modules)
    return LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout,
                      target_modules=targets, bias="none", task_type=task_type,
                      modules_to_save=list(modules_to_save) if modules_to_save else None)
