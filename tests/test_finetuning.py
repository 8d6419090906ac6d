"""Testes de lncc_llm.finetuning: o conjunto de estilo, a configuração da CPU e os três métodos de treino.

Os treinos rodam num Llama minúsculo (d = 64, 2 camadas) com o tokenizador do SmolLM2, em segundos;
a fração de 0,3414 % é conferida no decodificador do curso de verdade.
"""
import tempfile

import pytest
import torch

from lncc_llm import finetuning as ft


@pytest.fixture(scope="module")
def batch4():
    """Quatro linhas: um passo com lote 4 usa exatamente estas."""
    from datasets import Dataset

    rows = ft.style_rows()[:4]
    return Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]} for r in rows])


def _hand_loss(model, rows) -> float:
    """Perda só na resposta, calculada à mão: a média sobre todos os tokens de resposta do lote."""
    total, count = 0.0, 0
    for row in rows:
        ids = torch.tensor([row["input_ids"]])
        mask = torch.tensor(row["labels"][1:]) != -100          # o trl marca com -100 o que não entra na perda
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, :-1].float()
        nll = -torch.log_softmax(logits, -1).gather(1, ids[0, 1:, None])[:, 0]
        total += nll[mask].sum().item()
        count += int(mask.sum())
    return total / count


# ----------------------------------------------------------------------------- dados e estilo


def test_style_dataset_is_prompt_completion_in_two_voices():
    rows = ft.style_rows()
    assert len(rows) == 16 and len(ft.style_dataset()) == 16
    assert [r["voz"] for r in rows[:4]] == ["cientifico", "casual", "cientifico", "casual"]
    for r in rows:
        assert [m["role"] for m in r["prompt"]] == ["system", "user"]
        assert r["prompt"][0]["content"] == ft.VOICES[r["voz"]]
        assert [m["role"] for m in r["completion"]] == ["assistant"]
    trained = {r["prompt"][1]["content"] for r in rows}
    assert not trained & set(ft.HELDOUT_QUESTIONS)          # as reservadas nunca entram no treino
    assert len(ft.heldout_conversations()) == 2 * len(ft.HELDOUT_QUESTIONS)


def test_style_score_separates_every_training_answer():
    for r in ft.style_rows():
        score = ft.style_score(r["completion"][0]["content"])
        assert (score > 0.5) if r["voz"] == "cientifico" else (score < -0.5)
    assert ft.style_score("The sky is blue.") == 0.0
    assert ft.style_score("Hey! That is basically it!") == -1.0
    assert ft.style_counts("In technical terms, 2 °C.") == {"cientifico": 2, "casual": 0}
    assert ft.style_score("In technical terms, hey") == 0.0     # uma marca de cada: empate


def test_conversation_rejects_unknown_voice():
    with pytest.raises(ValueError, match="Voz desconhecida"):
        ft.conversation("What is El Niño?", "pirata")


# ----------------------------------------------------------------------------- configuração


def test_cpu_training_args_are_cpu_safe_and_write_outside_the_repo():
    args = ft.cpu_training_args()
    assert args.bf16 is False and args.fp16 is False and args.use_cpu is True
    assert args.gradient_checkpointing is False
    assert getattr(args.save_strategy, "value", args.save_strategy) == "no" and args.report_to in ([], "none", ["none"])
    assert args.seed == 0 and args.logging_steps == 1
    assert args.output_dir.startswith(tempfile.gettempdir())
    assert ft.cpu_training_args(learning_rate=1e-3, max_steps=3).learning_rate == 1e-3


@pytest.mark.parametrize("trainer", ["sft", "dpo", "grpo"])
def test_one_place_configures_every_trl_trainer_for_the_cpu(trainer):
    import trl

    args = ft.cpu_training_args(trainer=trainer)
    expected = {"sft": trl.SFTConfig, "dpo": trl.DPOConfig, "grpo": trl.GRPOConfig}[trainer]
    assert type(args) is expected
    assert args.bf16 is False and args.use_cpu is True and args.gradient_checkpointing is False
    assert args.seed == 0 and args.logging_steps == 1 and args.lr_scheduler_type == "constant"
    with pytest.raises(ValueError, match="Treinador desconhecido"):
        ft.cpu_training_args(trainer="ppo")
    with pytest.raises(ValueError, match="Treinador desconhecido"):
        ft.make_trainer("ppo", None, None, None, args)


def test_trl_default_config_fails_on_cpu_which_is_why_we_override_it():
    from trl import SFTConfig

    if torch.cuda.is_available():
        pytest.skip("com GPU o padrão bf16 do trl é válido")
    with pytest.raises(ValueError, match="bf16"):
        SFTConfig(output_dir=tempfile.mkdtemp())


def test_bad_inputs_raise_portuguese_errors(batch4):
    with pytest.raises(ValueError, match="Método de ajuste fino desconhecido"):
        ft.finetune("rlhf")
    with pytest.raises(ValueError, match="posto do LoRA"):
        ft.finetune("lora", rank=0)
    with pytest.raises(ValueError, match="conjunto de treino está vazio"):
        ft.finetune("sft", dataset=batch4.select([]))
    with pytest.raises(ValueError, match="steps"):
        ft.finetune("sft", steps=0)


# ----------------------------------------------------------------------------- contagens


def test_lora_r8_on_q_and_v_trains_exactly_0_3414_percent_of_the_decoder():
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    from lncc_llm.models import ensure_decoder_cache

    model = AutoModelForCausalLM.from_pretrained(ensure_decoder_cache())
    peft_model = get_peft_model(model, ft.lora_config())
    trainable, total = ft.trainable_parameters(peft_model)
    # 30 camadas × (q: 8·(576 + 576) + v: 8·(576 + 192))
    assert trainable == 30 * (8 * (576 + 576) + 8 * (576 + 192)) == 460_800
    assert total == 134_515_008 + 460_800
    assert f"{100 * trainable / total:.4f}" == "0.3414"


# ----------------------------------------------------------------------------- os três treinos


@pytest.mark.parametrize("method", ["sft", "lora", "qlora"])
def test_one_step_lowers_the_loss_on_its_batch(method, tiny_dir, batch4):
    from transformers import AutoModelForCausalLM

    result = ft.finetune(method, dataset=batch4, steps=1, learning_rate=1e-2, source=tiny_dir)
    assert len(result.losses) == 1 and len(result.step_seconds) == 1
    rows = list(result.train_dataset)
    if method != "qlora":   # a perda à mão, no modelo antes do passo, é a que o trl registrou
        before = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32).eval()
        assert _hand_loss(before, rows) == pytest.approx(result.losses[0], rel=1e-4)
    after = _hand_loss(result.model, rows)
    assert after < result.losses[0] - 0.01


def test_sft_measures_full_gradients_and_two_adam_moments(tiny_dir, batch4):
    from pathlib import Path

    before = set(Path(tempfile.gettempdir()).glob("lncc_llm_treino_*"))
    result = ft.finetune("sft", dataset=batch4, steps=1, source=tiny_dir)
    assert set(Path(tempfile.gettempdir()).glob("lncc_llm_treino_*")) == before   # nenhuma pasta deixada para trás
    assert result.trainable == result.total
    assert result.gradient_bytes == 4 * result.total              # um gradiente fp32 por peso (amarrado conta uma vez)
    assert result.optimizer_bytes >= 2 * 4 * result.total          # exp_avg e exp_avg_sq (+ o contador de passos)
    assert result.optimizer_bytes < 2 * 4 * result.total + 1024


def test_qlora_base_is_frozen_4bit_and_adapters_are_fp32_with_gradients(tiny_dir, batch4):
    import bitsandbytes as bnb

    result = ft.finetune("qlora", dataset=batch4, steps=1, source=tiny_dir)
    model = result.model
    base_layers = [m for m in model.modules() if isinstance(m, bnb.nn.Linear4bit)]
    assert base_layers and all(m.weight.__class__.__name__ == "Params4bit" for m in base_layers)
    assert all(not m.weight.requires_grad for m in base_layers)
    adapters = {n: p for n, p in model.named_parameters() if p.requires_grad}
    assert adapters and all("lora_" in n for n in adapters)
    assert all(p.dtype == torch.float32 for p in adapters.values())   # o trl os deixaria em bf16
    assert result.gradient_bytes == 4 * result.trainable

    ids = torch.tensor([result.train_dataset[0]["input_ids"]])
    model.zero_grad(set_to_none=True)
    model(input_ids=ids, labels=ids).loss.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for n, p in adapters.items() if "lora_B" in n)
    assert all(m.weight.grad is None for m in base_layers)


def test_lora_and_qlora_count_the_same_trainable_share(tiny_dir, batch4):
    lora = ft.finetune("lora", dataset=batch4, steps=1, source=tiny_dir)
    qlora = ft.finetune("qlora", dataset=batch4, steps=1, source=tiny_dir)
    assert lora.trainable == qlora.trainable and lora.total == qlora.total
    assert qlora.weight_bytes < lora.weight_bytes


# ----------------------------------------------------------------------------- antes e depois


def test_greedy_answers_match_the_course_generator(decoder):
    from lncc_llm import generate

    model, tokenizer = decoder
    convs = [ft.conversation("What is a heat wave?", "casual"),
             ft.conversation("Why is the ocean salty?", "cientifico")]
    batched = ft.greedy_answers(model, tokenizer, convs, max_new_tokens=12)
    for conv, text in zip(convs, batched):
        single = generate(model, tokenizer, conv, max_new_tokens=12, greedy=True, chat=True)
        assert text == single.text.strip()
    with pytest.raises(ValueError, match="vazia"):
        ft.greedy_answers(model, tokenizer, [])


def test_side_by_side_keeps_columns_aligned():
    text = ft.side_by_side({"antes": "a " * 30, "depois": "b " * 10}, width=20)
    lines = text.splitlines()
    assert lines[0].startswith("antes") and lines[0][23:].startswith("depois")
    assert all(len(line) <= 2 * 20 + 3 for line in lines)
    assert all(set(line[:20].strip()) <= {"a", " "} for line in lines[2:])
    with pytest.raises(ValueError):
        ft.side_by_side({})
