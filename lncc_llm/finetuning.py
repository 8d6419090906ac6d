"""Ajuste fino do decodificador do curso na CPU: SFT completo, LoRA e QLoRA com o ``trl``.

* ``finetune``: treina um dos três métodos sobre o conjunto de estilo (``lncc_llm.style``) e
  devolve o que foi medido: perdas de treino e de validação, segundos por passo, parâmetros
  treináveis e os bytes reais de pesos, gradientes e estado do otimizador;
* ``greedy_answers`` e ``side_by_side``: as respostas de antes e depois, lado a lado.

A configuração do treinador vem de ``lncc_llm.trainers`` (o único lugar que a monta).
"""
from __future__ import annotations

import textwrap
import time
from dataclasses import dataclass, field

import torch

from .environment import silence_library_noise
from .style import style_dataset
from .trainers import ALL_LINEAR, cpu_training_args, lora_config, make_trainer, run_training

METHODS = {
    "sft": "ajuste fino completo: todos os pesos recebem gradiente",
    "lora": "LoRA: base fp32 congelada, adaptadores BA em todas as lineares",
    "qlora": "QLoRA: base NF4 com quantização dupla congelada, adaptadores BA fp32 em todas as "
             "lineares",
}

#: Taxas de aprendizado do Capítulo 7 (seções 7.10 e 7.11): para o SFT, a taxa usual de ajuste
#: completo; para o LoRA, a taxa da grade de ``scripts/varredura_lr.py`` cuja perda de validação no
#: fim do treino fica mais perto da do SFT (braços comparáveis pela perda, não pela taxa); para o
#: QLoRA, a de menor perda de validação média em 3 sementes numa grade própria
#: (``scripts/comparacao_metodos.py``), que coincide com a do LoRA.
DEFAULT_LEARNING_RATES = {"sft": 5e-5, "lora": 2e-3, "qlora": 2e-3}

# --------------------------------------------------------------------------- medir durante o treino


def optimizer_state_bytes(optimizer) -> int:
    """Bytes reais do estado do otimizador (no AdamW, os momentos ``exp_avg`` e ``exp_avg_sq``).

    Ver Capítulo 7, seção 7.11.
    """
    from .quantization import storage_bytes

    return storage_bytes(t for state in optimizer.state.values() for t in state.values()
                         if torch.is_tensor(t))


def _callback_class():
    from transformers import TrainerCallback

    from .quantization import storage_bytes

    class _Probe(TrainerCallback):
        """Cronometra cada passo e mede, no primeiro, os bytes dos gradientes e do otimizador."""

        def __init__(self):
            self.step_seconds: list[float] = []
            self.gradient_bytes = 0
            self.optimizer_bytes = 0
            self.optimizer_dtypes: set = set()
            self._start = 0.0

        def on_step_begin(self, args, state, control, **kwargs):
            self._start = time.perf_counter()

        def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
            if not self.gradient_bytes and model is not None:
                self.gradient_bytes = storage_bytes(p.grad for p in model.parameters())

        def on_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
            if not self.optimizer_bytes and optimizer is not None:
                self.optimizer_bytes = optimizer_state_bytes(optimizer)
                self.optimizer_dtypes = {p.dtype for group in optimizer.param_groups
                                         for p in group["params"]}

        def on_step_end(self, args, state, control, **kwargs):
            self.step_seconds.append(time.perf_counter() - self._start)

    return _Probe


# ----------------------------------------------------------------------------- o treino


@dataclass
class FinetuneResult:
    """O que ``finetune`` mediu. ``losses`` é a perda de treino registrada a cada passo."""

    method: str
    model: torch.nn.Module
    tokenizer: object
    losses: list[float]
    step_seconds: list[float]
    trainable: int
    total: int
    weight_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    learning_rate: float
    log_history: list[dict] = field(default_factory=list)
    train_dataset: object = None
    eval_losses: list[tuple[int, float]] = field(default_factory=list)
    optimizer_dtypes: set = field(default_factory=set)

    @property
    def trainable_percent(self) -> float:
        return 100.0 * self.trainable / self.total

    @property
    def training_bytes(self) -> int:
        """Pesos + gradientes + estado do otimizador (sem ativações)."""
        return self.weight_bytes + self.gradient_bytes + self.optimizer_bytes

    @property
    def seconds_per_step(self) -> float:
        """Mediana dos passos, sem o primeiro (que paga a preparação)."""
        steps = sorted(self.step_seconds[1:] or self.step_seconds)
        return steps[len(steps) // 2]

    @property
    def final_eval_loss(self) -> float | None:
        """A perda de validação no último passo avaliado (``None`` sem validação)."""
        return self.eval_losses[-1][1] if self.eval_losses else None


def trainable_parameters(model) -> tuple[int, int]:
    """``(treináveis, total)`` como o ``peft`` conta (pesos de 4 bits contam pelo número real de
    pesos).

    Ver Capítulo 7, seção 7.10.
    """
    if hasattr(model, "get_nb_trainable_parameters"):
        return tuple(int(n) for n in model.get_nb_trainable_parameters())
    seen, trainable, total = set(), 0, 0
    for p in model.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        n = p.numel() * (2 if p.__class__.__name__ == "Params4bit" else 1)
        total += n
        trainable += n if p.requires_grad else 0
    return trainable, total


def _check_method(method) -> str:
    if not isinstance(method, str) or method.strip().lower() not in METHODS:
        valid = ", ".join(repr(m) for m in METHODS)
        raise ValueError(f"Método de ajuste fino desconhecido: {method!r}. Use um destes: {valid}.")
    return method.strip().lower()


def finetune(method: str, dataset=None, *, steps: int = 8, learning_rate: float | None = None,
             rank: int = 8, alpha: int = 16, target_modules=ALL_LINEAR, double_quant: bool = True,
             eval_dataset="validacao", eval_every: int = 2, source=None,
             **overrides) -> FinetuneResult:
    """Treina o decodificador do curso com ``"sft"``, ``"lora"`` ou ``"qlora"`` e mede o que custou.

    Carrega uma cópia nova do modelo (o de ``load_decoder`` fica intacto, como referência), treina
    ``steps`` passos com o ``SFTTrainer`` do ``trl`` e a configuração de ``cpu_training_args``
    (``overrides`` vão para ela), e devolve um ``FinetuneResult``. LoRA e QLoRA põem adaptadores de
    posto ``rank`` em ``target_modules`` (padrão: todas as lineares dos blocos, como o artigo do
    QLoRA). No ``"qlora"`` a base é NF4 com quantização dupla (``double_quant``) e os adaptadores
    ficam em fp32: o ``trl`` os converte para bf16 em modelos de 4 bits, e aqui voltam a fp32 antes
    do primeiro passo (``FinetuneResult.optimizer_dtypes`` confirma), para comparar com o LoRA só
    pela base. ``eval_dataset`` (padrão: a parte de validação do conjunto de estilo; ``None``
    desliga) é avaliado antes do treino e a cada ``eval_every`` passos.
    ``source`` é a pasta de um modelo (padrão: a pasta convertida do decodificador do curso).
    Ver Capítulo 7, seções 7.9–7.11.
    """
    method = _check_method(method)
    for name, value in (("steps", steps), ("eval_every", eval_every)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} deve ser um inteiro ≥ 1; recebi {value!r}.")
    if dataset is None:
        dataset = style_dataset()
    if len(dataset) == 0:
        raise ValueError("O conjunto de treino está vazio: passe ao menos uma linha "
                         "prompt/completion (por exemplo, style_dataset()).")
    if isinstance(eval_dataset, str):
        eval_dataset = style_dataset(split=eval_dataset)
    peft_config = lora_config(rank, alpha, target_modules) if method != "sft" else None
    if learning_rate is None:
        learning_rate = DEFAULT_LEARNING_RATES[method]

    silence_library_noise()
    from transformers import AutoTokenizer

    from .models import ensure_decoder_cache
    from .quantization import load_fresh_decoder, model_bytes

    source = source or ensure_decoder_cache()
    tokenizer = AutoTokenizer.from_pretrained(source)
    # no QLoRA, o kernel fundido do bitsandbytes (bf16) fica desligado: não tem autograd e
    # muda os números
    model = load_fresh_decoder("nf4" if method == "qlora" else "fp32", source,
                               double_quant=double_quant and method == "qlora",
                               on_cpu=overrides.get("use_cpu", True))
    evaluation = {}
    if eval_dataset is not None:
        evaluation = dict(eval_strategy="steps", eval_steps=eval_every,
                          per_device_eval_batch_size=len(eval_dataset))
    args = cpu_training_args(max_steps=steps, learning_rate=learning_rate,
                             **{**evaluation, **overrides})
    probe = _callback_class()()
    trainer = make_trainer("sft", model, tokenizer, dataset, args, peft_config=peft_config,
                           callbacks=[probe], eval_dataset=eval_dataset)
    model = trainer.model
    if method == "qlora":
        for p in model.parameters():
            if p.requires_grad:
                p.data = p.data.float()
    eval_losses = []
    if eval_dataset is not None:
        eval_losses.append((0, float(trainer.evaluate()["eval_loss"])))
    run_training(trainer, remove_output_dir="output_dir" not in overrides)
    model.eval()
    trainable, total = trainable_parameters(model)
    history = trainer.state.log_history
    losses = [float(entry["loss"]) for entry in history if "loss" in entry]
    eval_losses += [(int(e["step"]), float(e["eval_loss"])) for e in history
                    if "eval_loss" in e and e.get("step", 0) > 0]
    return FinetuneResult(
        method=method, model=model, tokenizer=tokenizer, losses=losses,
        step_seconds=probe.step_seconds, trainable=trainable, total=total,
        weight_bytes=model_bytes(model), gradient_bytes=probe.gradient_bytes,
        optimizer_bytes=probe.optimizer_bytes, learning_rate=learning_rate,
        log_history=list(history), train_dataset=trainer.train_dataset,
        eval_losses=eval_losses, optimizer_dtypes=probe.optimizer_dtypes,
    )


# ----------------------------------------------------------------------------- antes e depois


@torch.no_grad()
def greedy_answers(model, tokenizer, conversations, max_new_tokens: int = 48,
                   prefill: str | None = None) -> list[str]:
    """Respostas gulosas do modelo a várias conversas de uma vez (lote com preenchimento à
    esquerda).

    Com ``prefill``, a vez do assistente já começa com esse texto (``continue_final_message``), e
    a resposta devolvida é só a continuação (Capítulo 9, seção 9.1.1: saída estruturada).

    Gulosa e em lote fixo: o mesmo modelo dá o mesmo texto a cada execução na mesma máquina (outra
    CPU, uma GPU ou outra composição do lote podem mudar a soma em ponto flutuante, e o texto).
    Ver Capítulo 7, seção 7.7.
    """
    if not conversations:
        raise ValueError("A lista de conversas está vazia: passe ao menos uma lista de mensagens.")
    if prefill:
        texts = [tokenizer.apply_chat_template(
            list(m) + [{"role": "assistant", "content": prefill}], continue_final_message=True,
            tokenize=False) for m in conversations]
    else:
        texts = [tokenizer.apply_chat_template(list(m), add_generation_prompt=True, tokenize=False)
                 for m in conversations]
    from .likelihood import left_padded_batch

    batch = left_padded_batch(tokenizer, texts)   # o último token de cada linha é o do prompt
    device = next(model.parameters()).device
    batch = {k: v.to(device) for k, v in batch.items()}
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    out = model.generate(**batch, do_sample=False, pad_token_id=pad, max_new_tokens=max_new_tokens)
    start = batch["input_ids"].shape[1]
    return [tokenizer.decode(row[start:], skip_special_tokens=True).strip() for row in out]


def side_by_side(columns: dict[str, str], width: int = 38, gap: int = 3) -> str:
    """Textos lado a lado em colunas de ``width`` caracteres, cada uma com o seu título.

    Ver Capítulo 7, seção 7.11.
    """
    if not columns:
        raise ValueError("Nada para mostrar: passe um dicionário {título: texto}.")
    wrapped = [[title[:width], "-" * min(width, max(len(title), 8))] + textwrap.wrap(text, width)
               for title, text in columns.items()]
    height = max(len(w) for w in wrapped)
    lines = []
    for i in range(height):
        cells = [(w[i] if i < len(w) else "").ljust(width) for w in wrapped]
        lines.append((" " * gap).join(cells).rstrip())
    return "\n".join(lines)
