"""Testes de lncc_llm.trainers: a configuração dos treinadores do trl na CPU, num lugar só."""
import tempfile

import pytest
import torch

from lncc_llm import trainers as tr


def test_cpu_training_args_are_cpu_safe_and_write_outside_the_repo():
    args = tr.cpu_training_args()
    assert args.bf16 is False and args.fp16 is False and args.use_cpu is True
    assert args.gradient_checkpointing is False
    assert getattr(args.save_strategy, "value", args.save_strategy) == "no"
    assert args.report_to in ([], "none", ["none"])
    assert args.seed == 0 and args.logging_steps == 1
    assert args.output_dir.startswith(tempfile.gettempdir())
    assert tr.cpu_training_args(learning_rate=1e-3, max_steps=3).learning_rate == 1e-3


@pytest.mark.parametrize("trainer", ["sft", "dpo", "grpo", "reward"])
def test_one_place_configures_every_trl_trainer_for_the_cpu(trainer):
    import trl

    args = tr.cpu_training_args(trainer=trainer)
    expected = {"sft": trl.SFTConfig, "dpo": trl.DPOConfig, "grpo": trl.GRPOConfig,
                "reward": trl.RewardConfig}[trainer]
    assert type(args) is expected
    assert args.bf16 is False and args.use_cpu is True and args.gradient_checkpointing is False
    assert args.seed == 0 and args.logging_steps == 1 and args.lr_scheduler_type == "constant"
    with pytest.raises(ValueError, match="Treinador desconhecido"):
        tr.cpu_training_args(trainer="ppo")
    with pytest.raises(ValueError, match="Treinador desconhecido"):
        tr.make_trainer("ppo", None, None, None, args)


def test_trl_default_config_fails_on_cpu_which_is_why_we_override_it():
    from trl import SFTConfig

    if torch.cuda.is_available():
        pytest.skip("com GPU o padrão bf16 do trl é válido")
    with pytest.raises(ValueError, match="bf16"):
        SFTConfig(output_dir=tempfile.mkdtemp())


def test_lora_config_targets_q_v_by_default_or_every_linear_layer():
    assert set(tr.lora_config().target_modules) == {"q_proj", "v_proj"}
    config = tr.lora_config(target_modules=tr.ALL_LINEAR)
    assert config.target_modules == "all-linear" and config.r == 8 and config.lora_alpha == 16
    with pytest.raises(ValueError, match="posto do LoRA"):
        tr.lora_config(rank=0)


def test_make_trainer_seeds_the_lora_draw_whatever_came_before(tiny_dir):
    """O peft sorteia A ao criar o treinador, e o trl fixa args.seed antes: dois treinadores dão o
    mesmo A mesmo com o gerador global em estados diferentes antes. Se uma versão nova do trl
    deixar de semear, este teste falha (e quem chama make_trainer teria de semear)."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    data = Dataset.from_list([{"prompt": [{"role": "user", "content": "Hi"}],
                               "completion": [{"role": "assistant", "content": "Hello"}]}])
    drawn = []
    for noise in (1, 7):
        torch.manual_seed(noise)
        torch.rand(100)
        model = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
        trainer = tr.make_trainer("sft", model, tok, data, tr.cpu_training_args(max_steps=1),
                                  peft_config=tr.lora_config())
        drawn.append(torch.cat([p.detach().flatten() for n, p in trainer.model.named_parameters()
                                if "lora_A" in n]))
        tr.run_training(trainer)
    assert torch.equal(drawn[0], drawn[1])
