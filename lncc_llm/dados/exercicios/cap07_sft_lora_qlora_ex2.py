import tempfile

import torch
from peft import LoraConfig
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    set_seed,
)
from transformers.trainer_callback import PrinterCallback
from trl import SFTConfig, SFTTrainer

from lncc_llm.models import ensure_decoder_cache

bnb_config = BitsAndBytesConfig(
    load_in_4bit=True,
    bnb_4bit_quant_type="nf4",               # o padrão, sem dizer, é FP4 (Capítulo 6)
    bnb_4bit_use_double_quant=True,          # os absmax também em 8 bits
    bnb_4bit_compute_dtype=torch.float32,    # na GPU, torch.bfloat16
)
qlora_peft_config = LoraConfig(task_type="CAUSAL_LM", target_modules="all-linear", r=8, lora_alpha=16,
                               lora_dropout=0.0, bias="none")
qlora_args = SFTConfig(
    output_dir=tempfile.mkdtemp(), max_steps=2, learning_rate=2e-3, lr_scheduler_type="constant",
    warmup_steps=0, per_device_train_batch_size=4, max_length=128, logging_steps=1, seed=0, data_seed=0,
    use_cpu=True, bf16=False, gradient_checkpointing=False, save_strategy="no", report_to="none",
    disable_tqdm=True,
)

model_dir = ensure_decoder_cache()
quantized = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, quantization_config=bnb_config,
                                                 device_map="cpu")
for module in quantized.modules():           # o kernel bf16 das CPUs com AVX512-BF16 não tem autograd
    if hasattr(module, "support_avx512bf16_for_cpu"):
        module.support_avx512bf16_for_cpu = False
set_seed(0)
trainer = SFTTrainer(model=quantized, args=qlora_args, train_dataset=dataset,
                     processing_class=AutoTokenizer.from_pretrained(model_dir), peft_config=qlora_peft_config)
trainer.remove_callback(PrinterCallback)
for p in trainer.model.parameters():         # em modelos de 4 bits, o trl põe os adaptadores em bf16
    if p.requires_grad:
        p.data = p.data.float()
trainer.train()
qlora_losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
print(f"QLoRA escrito à mão: perdas {rounded(qlora_losses, 3)} | finetune(\"qlora\"): {rounded(qlora.losses[:2], 3)}")
check("SFTTrainer do QLoRA escrito à mão = finetune(\"qlora\") nos passos 1 e 2", qlora_losses, qlora.losses[:2],
      atol=1e-3)
del trainer, quantized
