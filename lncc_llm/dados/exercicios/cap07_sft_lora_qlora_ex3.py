from peft import get_peft_model

from lncc_llm import lora_config

qv_by_hand = cfg.num_hidden_layers * sum(8 * (n_in + n_out) for n, (n_in, n_out) in shapes.items()
                                         if n in ("q", "v"))
only_qv = get_peft_model(copy.deepcopy(base), lora_config(target_modules=["q_proj", "v_proj"]))
trainable, total = only_qv.get_nb_trainable_parameters()
print(f"só q e v: à mão {fmt_int(qv_by_hand)} | peft {fmt_int(trainable)} ({100 * trainable / total:.4f} %)")
check("contagem à mão = a do peft (LoRA só em q e v)", trainable, qv_by_hand)
del only_qv
