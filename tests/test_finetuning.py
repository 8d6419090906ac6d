"""Testes de lncc_llm.finetuning: os três métodos de treino, a validação, as medidas e as respostas.

Os treinos rodam num Llama minúsculo (d = 64, 2 camadas) com o tokenizador do SmolLM2, em segundos;
a fração de 0,3414 % é conferida no decodificador do curso de verdade.
"""
import tempfile

import pytest
import torch

from lncc_llm import finetuning as ft
from lncc_llm import style as st
from lncc_llm import trainers as tr


@pytest.fixture(scope="module")
def batch4():
    """Quatro linhas: um passo com lote 4 usa exatamente estas."""
    from datasets import Dataset

    rows = st.style_rows()[:4]
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


def test_bad_inputs_raise_portuguese_errors(batch4):
    with pytest.raises(ValueError, match="Método de ajuste fino desconhecido"):
        ft.finetune("rlhf")
    with pytest.raises(ValueError, match="posto do LoRA"):
        ft.finetune("lora", rank=0)
    with pytest.raises(ValueError, match="conjunto de treino está vazio"):
        ft.finetune("sft", dataset=batch4.select([]))
    with pytest.raises(ValueError, match="steps"):
        ft.finetune("sft", steps=0)
    with pytest.raises(ValueError, match="eval_every"):
        ft.finetune("sft", eval_every=0)


# ----------------------------------------------------------------------------- contagens


def test_lora_r8_on_q_and_v_trains_exactly_0_3414_percent_of_the_decoder():
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    from lncc_llm.models import ensure_decoder_cache

    model = AutoModelForCausalLM.from_pretrained(ensure_decoder_cache())
    peft_model = get_peft_model(model, tr.lora_config())
    trainable, total = ft.trainable_parameters(peft_model)
    # 30 camadas × (q: 8·(576 + 576) + v: 8·(576 + 192))
    assert trainable == 30 * (8 * (576 + 576) + 8 * (576 + 192)) == 460_800
    assert total == 134_515_008 + 460_800
    assert f"{100 * trainable / total:.4f}" == "0.3414"


# ----------------------------------------------------------------------------- os três treinos


@pytest.mark.parametrize("method", ["sft", "lora", "qlora"])
def test_one_step_lowers_the_loss_on_its_batch(method, tiny_dir, batch4):
    from transformers import AutoModelForCausalLM

    result = ft.finetune(method, dataset=batch4, steps=1, learning_rate=1e-2, source=tiny_dir,
                         eval_dataset=None)
    assert len(result.losses) == 1 and len(result.step_seconds) == 1
    rows = list(result.train_dataset)
    if method != "qlora":   # a perda à mão, no modelo antes do passo, é a que o trl registrou
        before = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32).eval()
        assert _hand_loss(before, rows) == pytest.approx(result.losses[0], rel=1e-4)
    after = _hand_loss(result.model, rows)
    assert after < result.losses[0] - 0.01


def test_sft_measures_full_gradients_and_two_adam_moments(tiny_dir, batch4, monkeypatch):
    from pathlib import Path

    # Só as pastas criadas por esta chamada: outro processo do pytest-xdist pode estar treinando ao mesmo tempo.
    created = []
    real_mkdtemp = tempfile.mkdtemp

    def recording_mkdtemp(*args, **kwargs):
        created.append(Path(real_mkdtemp(*args, **kwargs)))
        return str(created[-1])

    monkeypatch.setattr(tempfile, "mkdtemp", recording_mkdtemp)
    result = ft.finetune("sft", dataset=batch4, steps=1, source=tiny_dir, eval_dataset=None)
    monkeypatch.undo()
    assert any(p.name.startswith("lncc_llm_treino_") for p in created)   # a pasta de treino foi criada...
    assert not any(p.exists() for p in created)                          # ... e nenhuma ficou para trás
    assert result.trainable == result.total
    assert result.gradient_bytes == 4 * result.total              # um gradiente fp32 por peso (amarrado conta uma vez)
    assert result.optimizer_bytes >= 2 * 4 * result.total          # exp_avg e exp_avg_sq (+ o contador de passos)
    assert result.optimizer_bytes < 2 * 4 * result.total + 1024


def test_qlora_base_is_frozen_4bit_and_adapters_are_fp32_with_gradients(tiny_dir, batch4):
    import bitsandbytes as bnb

    result = ft.finetune("qlora", dataset=batch4, steps=1, source=tiny_dir, eval_dataset=None)
    model = result.model
    base_layers = [m for m in model.modules() if isinstance(m, bnb.nn.Linear4bit)]
    assert base_layers and all(m.weight.__class__.__name__ == "Params4bit" for m in base_layers)
    assert all(not m.weight.requires_grad for m in base_layers)
    adapters = {n: p for n, p in model.named_parameters() if p.requires_grad}
    assert adapters and all("lora_" in n for n in adapters)
    assert all(p.dtype == torch.float32 for p in adapters.values())   # o trl os deixaria em bf16
    assert result.optimizer_dtypes == {torch.float32}                 # e o otimizador os viu em fp32
    # o QLoRA do artigo: quantização dupla e adaptadores em todas as lineares dos blocos
    assert all(m.weight.quant_state.state2 is not None for m in base_layers)
    adapted = {n.split(".lora_")[0].rsplit(".", 1)[-1] for n in adapters}
    assert adapted == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    assert result.gradient_bytes == 4 * result.trainable

    ids = torch.tensor([result.train_dataset[0]["input_ids"]])
    model.zero_grad(set_to_none=True)
    model(input_ids=ids, labels=ids).loss.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for n, p in adapters.items() if "lora_B" in n)
    assert all(m.weight.grad is None for m in base_layers)


def test_lora_and_qlora_count_the_same_trainable_share(tiny_dir, batch4):
    lora = ft.finetune("lora", dataset=batch4, steps=1, source=tiny_dir, eval_dataset=None)
    qlora = ft.finetune("qlora", dataset=batch4, steps=1, source=tiny_dir, eval_dataset=None)
    assert lora.trainable == qlora.trainable and lora.total == qlora.total
    assert qlora.weight_bytes < lora.weight_bytes


def test_validation_loss_is_measured_before_training_and_every_k_steps(tiny_dir, batch4):
    from transformers import AutoModelForCausalLM

    validation = batch4.select([0, 1])
    result = ft.finetune("sft", dataset=batch4, steps=2, learning_rate=1e-2, source=tiny_dir,
                         eval_dataset=validation, eval_every=1)
    assert [step for step, _ in result.eval_losses] == [0, 1, 2]
    assert result.final_eval_loss == result.eval_losses[-1][1]
    rows = [r for r in result.train_dataset][:2]   # as mesmas linhas, já tokenizadas pelo trl
    before = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32).eval()
    assert result.eval_losses[0][1] == pytest.approx(_hand_loss(before, rows), rel=1e-4)
    assert result.eval_losses[-1][1] == pytest.approx(_hand_loss(result.model, rows), rel=1e-4)


def test_finetune_is_the_plain_trl_code_the_chapter_shows(tiny_dir, batch4):
    """O Capítulo 7 mostra o SFTConfig/LoraConfig/SFTTrainer que finetune monta: a mesma execução."""
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, set_seed
    from transformers.trainer_callback import PrinterCallback
    from trl import SFTConfig, SFTTrainer

    config = SFTConfig(output_dir=tempfile.mkdtemp(), max_steps=2, learning_rate=1e-2,
                       lr_scheduler_type="constant", warmup_steps=0, per_device_train_batch_size=2,
                       max_length=128, logging_steps=1, seed=0, data_seed=0, use_cpu=True,
                       bf16=False, gradient_checkpointing=False, save_strategy="no",
                       report_to="none", disable_tqdm=True)
    peft_config = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules="all-linear",
                             bias="none", task_type="CAUSAL_LM")
    torch.manual_seed(123)                     # outro estado global: o set_seed abaixo o apaga
    set_seed(0)
    trainer = SFTTrainer(model=AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32),
                         args=config, train_dataset=batch4, peft_config=peft_config,
                         processing_class=AutoTokenizer.from_pretrained(tiny_dir))
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    raw = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    torch.manual_seed(456)
    result = ft.finetune("lora", dataset=batch4, steps=2, learning_rate=1e-2, source=tiny_dir,
                         eval_dataset=None, per_device_train_batch_size=2)
    assert result.losses == pytest.approx(raw, abs=1e-6)


def test_default_learning_rates_are_the_ones_the_sweep_chose():
    import json
    from pathlib import Path

    sweep = json.loads((Path(ft.__file__).with_name("dados") / "varredura_lr.json").read_text())
    assert ft.DEFAULT_LEARNING_RATES == {"sft": sweep["escolhida"]["sft"],
                                         "lora": sweep["escolhida"]["lora"],
                                         "qlora": sweep["escolhida"]["lora"]}


# ----------------------------------------------------------------------------- antes e depois


def test_greedy_answers_match_the_course_generator(decoder):
    from lncc_llm import generate

    model, tokenizer = decoder
    convs = [st.conversation("What is a heat wave?", "casual"),
             st.conversation("Why is the ocean salty?", "cientifico")]
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


def test_greedy_answers_with_prefill_continue_the_assistant_turn(decoder):
    from lncc_llm.sampling import generate

    model, tokenizer = decoder
    conv = [{"role": "user", "content": "What is 17 + 30? Reply as JSON with keys a and b."}]
    cue = '{"a": '
    out = ft.greedy_answers(model, tokenizer, [conv], max_new_tokens=8, prefill=cue)[0]
    text = tokenizer.apply_chat_template(conv + [{"role": "assistant", "content": cue}],
                                         continue_final_message=True, tokenize=False)
    assert text.endswith("<|im_start|>assistant\n" + cue)
    assert out == generate(model, tokenizer, text, max_new_tokens=8, greedy=True).text.strip()
