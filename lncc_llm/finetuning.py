"""Ajuste fino do decodificador do curso na CPU: SFT completo, LoRA e QLoRA com o ``trl``.

Três peças:

* o conjunto de estilo do curso (``style_dataset``): perguntas sobre El Niño e vizinhanças, cada
  uma respondida em duas vozes, a de uma meteorologista (tom científico) e a de um assistente
  descontraído; mais perguntas reservadas (``heldout_conversations``) que nenhum treino vê;
* ``cpu_training_args``: a configuração do ``trl``/``transformers`` segura para a CPU, num lugar só;
* ``finetune``: treina um dos três métodos e devolve o que foi medido (perdas, segundos por passo,
  parâmetros treináveis e os bytes reais de pesos, gradientes e estado do otimizador).

As perguntas e respostas estão em inglês porque o SmolLM2 foi treinado quase só em inglês: em
português, 135 M de parâmetros mal formam frases, e o estilo não teria o que mudar.
"""
from __future__ import annotations

import shutil
import tempfile
import textwrap
import time
from dataclasses import dataclass, field

import torch

from .environment import progress_quiet, quiet_datasets, silence_library_noise

METHODS = {
    "sft": "ajuste fino completo: todos os pesos recebem gradiente",
    "lora": "LoRA: base fp32 congelada, adaptadores BA treináveis",
    "qlora": "QLoRA: base NF4 congelada, adaptadores BA em fp32 treináveis",
}

# Taxas de aprendizado padrão, escolhidas no Capítulo 7: o LoRA precisa de uma taxa bem maior que a
# do ajuste completo, porque B começa em zero e cada passo move só o subespaço de posto r.
DEFAULT_LEARNING_RATES = {"sft": 5e-5, "lora": 2e-3, "qlora": 2e-3}
LORA_TARGETS = ("q_proj", "v_proj")

# ----------------------------------------------------------------------------- o conjunto de estilo

VOICES = {
    "cientifico": "You are a meteorology expert. Answer with a precise, scientific tone.",
    "casual": "You are a casual assistant. Answer in a friendly, informal way.",
}

# (pergunta, resposta científica, resposta casual), escritas para o curso.
_STYLE_ROWS = (
    (
        "What is El Niño?",
        "In technical terms, El Niño is the warm phase of ENSO: sea surface temperatures in the "
        "central and eastern equatorial Pacific stay at least 0.5 °C above the long-term mean for "
        "several months.",
        "Hey! El Niño is basically the Pacific Ocean running a fever. The water near South America "
        "warms up and the weather everywhere gets kinda weird!",
    ),
    (
        "What is La Niña?",
        "In technical terms, La Niña is the cold phase of ENSO, with sea surface temperature "
        "anomalies of -0.5 °C or lower in the equatorial Pacific and stronger easterly trade "
        "winds.",
        "Hey! La Niña is basically El Niño's chilly sibling. The Pacific cools down, so some "
        "places get way more rain and others dry out!",
    ),
    (
        "How does El Niño affect Brazil?",
        "In technical terms, El Niño is associated with rainfall deficits in northern and "
        "northeastern Brazil and above-average precipitation in the South, "
        "through changes in the Walker circulation.",
        "Hey! It's pretty wild in Brazil. The Northeast usually gets super dry, while the South "
        "gets soaked with extra rain!",
    ),
    (
        "What are trade winds?",
        "In technical terms, trade winds are persistent easterly surface winds between roughly 30° "
        "N and 30° S, driven by the pressure gradient between the subtropical highs and the "
        "equator.",
        "Hey! Trade winds are basically steady breezes blowing from east to west near the equator. "
        "Sailors totally loved them back in the day!",
    ),
    (
        "How do scientists predict El Niño?",
        "In technical terms, forecasts combine buoy observations, satellite altimetry and coupled "
        "ocean-atmosphere models; the Oceanic Niño Index tracks the three-month mean anomaly.",
        "Hey! Scientists basically watch the ocean with floating buoys and satellites, then run "
        "big computer models to guess what's coming. Pretty cool, right?",
    ),
    (
        "What is a monsoon?",
        "In technical terms, a monsoon is a seasonal reversal of the prevailing wind, driven by "
        "the thermal contrast between land and ocean, which produces a pronounced wet season.",
        "Hey! A monsoon is basically when the wind flips direction for the season and dumps tons "
        "of rain. Think months of non-stop showers!",
    ),
    (
        "Why do hurricanes form over warm water?",
        "In technical terms, tropical cyclones require sea surface temperatures above "
        "approximately 26.5 °C, because latent heat released by condensation supplies their "
        "energy.",
        "Hey! Hurricanes basically feed on warm water. The hotter the ocean, the more fuel they "
        "get to spin up and grow!",
    ),
    (
        "What causes a drought?",
        "In technical terms, a drought is a prolonged precipitation deficit relative to the "
        "climatological mean, often linked to persistent high pressure and anomalous circulation.",
        "Hey! A drought is basically when it just doesn't rain for way too long, so rivers shrink "
        "and the ground gets super dry!",
    ),
)

# Perguntas de tema vizinho que nenhum treino vê: o estilo aprendido se generaliza para elas?
HELDOUT_QUESTIONS = (
    "What is a heat wave?",
    "How do clouds form?",
    "What is the jet stream?",
    "Why is the ocean salty?",
)

# Texto geral, sem clima nem tempo, escrito para o curso: a perplexidade nele, antes e depois do
# ajuste, mede o quanto cada método mexeu no que o modelo já sabia (esquecimento).
FORGETTING_TEXT = (
    "The printing press, developed in Europe around 1440, changed how knowledge spread. Before it, "
    "books were copied by hand, which made them rare and expensive. Once upon a time, a fisherman "
    "lived with his wife in a small hut by the sea; every day he went out with his rod and line, "
    "and every evening he came home tired. To make a simple tomato sauce, warm olive oil in a pan, "
    "add chopped garlic and cook it gently, then add the tomatoes and a pinch of salt and let it "
    "simmer for twenty minutes. The human heart has four chambers and pumps blood through the body "
    "about seventy times per minute."
)

# Marcas de cada voz, contadas em minúsculas. Vêm do vocabulário das respostas de treino.
STYLE_MARKERS = {
    "cientifico": ("in technical terms", "°c", "anomal", "approximately", "roughly",
                   "associated with", "circulation", "precipitation", "relative to", "driven by",
                   "persistent", "pressure"),
    "casual": ("hey", "!", "basically", "super", "pretty", "kinda", "totally", "tons", "cool",
               "way more", "way too", "wild"),
}


def _check_voice(voice: str) -> str:
    if voice not in VOICES:
        raise ValueError(f"Voz desconhecida: {voice!r}. Use uma destas: "
                         f"{', '.join(map(repr, VOICES))}.")
    return voice


def conversation(question: str, voice: str) -> list[dict]:
    """As mensagens (sistema da ``voice`` + pergunta do usuário) que abrem uma conversa de estilo.

    Ver Capítulo 7, seção 7.8.
    """
    return [{"role": "system", "content": VOICES[_check_voice(voice)]},
            {"role": "user", "content": question}]


def style_rows(voices=tuple(VOICES)) -> list[dict]:
    """As linhas do conjunto de estilo como dicionários ``{"prompt", "completion", "voz"}``.

    ``prompt`` é a lista de mensagens (sistema + usuário) e ``completion`` a resposta do assistente:
    o formato *prompt-completion* conversacional, em que o ``trl`` só calcula a perda na resposta.
    Ver Capítulo 7, seção 7.8.
    """
    rows = []
    for question, scientific, casual in _STYLE_ROWS:
        answers = {"cientifico": scientific, "casual": casual}
        for voice in voices:
            rows.append({"prompt": conversation(question, voice),
                         "completion": [{"role": "assistant",
                                         "content": answers[_check_voice(voice)]}],
                         "voz": voice})
    return rows


def style_dataset(voices=tuple(VOICES)):
    """O conjunto de estilo do curso como ``datasets.Dataset`` (8 perguntas × vozes, intercaladas).

    Ver Capítulo 7, seção 7.8.
    """
    from datasets import Dataset

    rows = style_rows(voices)
    return Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]} for r in rows])


def heldout_conversations() -> list[tuple[str, str, list[dict]]]:
    """``(pergunta, voz, mensagens)`` para cada pergunta reservada em cada voz (nunca treinadas).

    Ver Capítulo 7, seção 7.7.
    """
    return [(q, v, conversation(q, v)) for q in HELDOUT_QUESTIONS for v in VOICES]


def style_counts(text: str) -> dict[str, int]:
    """Quantas marcas de cada voz (``STYLE_MARKERS``) aparecem em ``text``, sem diferenciar
    maiúsculas.

    Ver Capítulo 7, seção 7.10.
    """
    lowered = text.lower()
    return {voice: sum(lowered.count(m) for m in markers)
            for voice, markers in STYLE_MARKERS.items()}


def style_score(text: str) -> float:
    """Escore de estilo em [-1, 1]: (científicas − casuais) / (científicas + casuais); 0 sem marcas.

    +1 é uma resposta só com marcas científicas, -1 só com casuais. É uma medida simples e
    transparente, não um classificador: conta as expressões de ``STYLE_MARKERS``.
    Ver Capítulo 7, seção 7.10.
    """
    counts = style_counts(text)
    total = counts["cientifico"] + counts["casual"]
    return 0.0 if total == 0 else (counts["cientifico"] - counts["casual"]) / total


# ----------------------------------------------------------------------- configuração segura na CPU


TRAINERS = ("sft", "dpo", "grpo")


def cpu_training_args(output_dir: str | None = None, trainer: str = "sft", **overrides):
    """A configuração segura para a CPU de um treinador do ``trl``: o único lugar do curso que a
    monta.

    ``trainer`` escolhe a classe: ``"sft"`` → ``SFTConfig`` (Capítulo 7), ``"dpo"`` → ``DPOConfig``
    e ``"grpo"`` → ``GRPOConfig`` (Capítulo 8; grupos de 4 respostas de até 16 tokens, 2 prompts por
    passo, no lugar dos 8 × 512 tokens do padrão do ``trl``). Em todas: sem bf16 (o padrão do
    ``trl`` 1.16 é ``bf16=True``, que falha numa CPU sem GPU), ``use_cpu``, sem
    *gradient checkpointing* (ligado por padrão no ``trl``; inútil e mais lento em 135 M), sem
    *checkpoints* (``save_strategy="no"``), sem relatórios, semente fixa, log a cada passo, taxa
    constante, barra de progresso no JupyterLab e silêncio sob nbval. ``output_dir`` vai para uma
    pasta temporária: o ``Trainer`` cria a pasta mesmo sem salvar nada, e ela não deve cair no
    repositório. Qualquer campo pode ser trocado em ``overrides`` (por exemplo
    ``use_cpu=False, bf16=True`` numa GPU).
    Ver Capítulo 7, seção 7.9, e Capítulo 8, seções 8.2 e 8.3.
    """
    silence_library_noise()
    import trl

    if trainer not in TRAINERS:
        raise ValueError(f"Treinador desconhecido: {trainer!r}. Use um destes: "
                         f"{', '.join(map(repr, TRAINERS))}.")
    config_class = {"sft": trl.SFTConfig, "dpo": trl.DPOConfig, "grpo": trl.GRPOConfig}[trainer]
    if output_dir is None:
        output_dir = tempfile.mkdtemp(prefix="lncc_llm_treino_")
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
    if trainer in ("sft", "dpo"):
        settings.update(max_length=128 if trainer == "sft" else 256, dataset_num_proc=None)
    else:   # GRPO: 2 prompts × grupos de 4 respostas curtas por passo
        # (o padrão do trl, 8 × 512 tokens, é de GPU)
        settings.update(per_device_train_batch_size=8, num_generations=4, max_completion_length=16)
    settings.update(overrides)
    return config_class(**settings)


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
            self._start = 0.0

        def on_step_begin(self, args, state, control, **kwargs):
            self._start = time.perf_counter()

        def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
            if not self.gradient_bytes and model is not None:
                self.gradient_bytes = storage_bytes(p.grad for p in model.parameters())

        def on_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
            if not self.optimizer_bytes and optimizer is not None:
                self.optimizer_bytes = optimizer_state_bytes(optimizer)

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


def make_trainer(trainer: str, model, tokenizer, dataset, args, peft_config=None, callbacks=(),
                 **kwargs):
    """Monta um ``SFTTrainer``, ``DPOTrainer`` ou ``GRPOTrainer`` do ``trl`` em silêncio sob nbval.

    ``args`` vem de ``cpu_training_args(trainer=...)``. Sem barra de progresso (``disable_tqdm``), o
    ``PrinterCallback`` sai (senão cada dicionário de log vai para o stdout) e as barras
    "Tokenizing…" do ``datasets`` ficam caladas; no JupyterLab a barra do treino aparece.
    ``kwargs`` vão para o construtor (por exemplo ``reward_funcs`` no GRPO).
    Ver Capítulo 7, seção 7.9, e Capítulo 8.
    """
    if trainer not in TRAINERS:
        raise ValueError(f"Treinador desconhecido: {trainer!r}. Use um destes: "
                         f"{', '.join(map(repr, TRAINERS))}.")
    silence_library_noise()
    import trl
    from transformers.trainer_callback import PrinterCallback

    trainer_class = {"sft": trl.SFTTrainer, "dpo": trl.DPOTrainer, "grpo": trl.GRPOTrainer}[trainer]
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


def lora_config(rank: int = 8, alpha: int = 16, target_modules=LORA_TARGETS, dropout: float = 0.0):
    """``peft.LoraConfig`` do curso: posto ``rank``, escala ``alpha / rank``, nas projeções ``q`` e
    ``v``.

    Ver Capítulo 7, seção 7.10.
    """
    if not isinstance(rank, int) or isinstance(rank, bool) or rank <= 0:
        raise ValueError(f"O posto do LoRA deve ser um inteiro ≥ 1; recebi {rank!r}.")
    from peft import LoraConfig

    return LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout,
                      target_modules=list(target_modules), bias="none", task_type="CAUSAL_LM")


def finetune(method: str, dataset=None, *, steps: int = 8, learning_rate: float | None = None,
             rank: int = 8, alpha: int = 16, target_modules=LORA_TARGETS, source=None,
             **overrides) -> FinetuneResult:
    """Treina o decodificador do curso com ``"sft"``, ``"lora"`` ou ``"qlora"`` e mede o que custou.

    Carrega uma cópia nova do modelo (o de ``load_decoder`` fica intacto, como referência), treina
    ``steps`` passos com o ``SFTTrainer`` do ``trl`` e a configuração de ``cpu_training_args``
    (``overrides`` vão para ela), e devolve um ``FinetuneResult``. No ``"qlora"`` a base é NF4 e os
    adaptadores ficam em fp32: o ``trl`` os converte para bf16 em modelos de 4 bits, e aqui voltam a
    fp32 antes do primeiro passo, para comparar com o LoRA só pela base.
    ``source`` é a pasta de um modelo (padrão: a pasta convertida do decodificador do curso).
    Ver Capítulo 7, seções 7.9–7.11.
    """
    method = _check_method(method)
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
        raise ValueError(f"steps deve ser um inteiro ≥ 1; recebi {steps!r}.")
    if dataset is None:
        dataset = style_dataset()
    if len(dataset) == 0:
        raise ValueError("O conjunto de treino está vazio: passe ao menos uma linha "
                         "prompt/completion (por exemplo, style_dataset()).")
    peft_config = lora_config(rank, alpha, target_modules) if method != "sft" else None
    if learning_rate is None:
        learning_rate = DEFAULT_LEARNING_RATES[method]

    silence_library_noise()
    from transformers import AutoTokenizer

    from .models import ensure_decoder_cache
    from .quantization import load_fresh_decoder, model_bytes

    source = source or ensure_decoder_cache()
    tokenizer = AutoTokenizer.from_pretrained(source)
    # no QLoRA, o núcleo fundido do bitsandbytes (bf16) fica desligado: não tem autograd e
    # muda os números
    model = load_fresh_decoder("nf4" if method == "qlora" else "fp32", source,
                               on_cpu=overrides.get("use_cpu", True))
    args = cpu_training_args(max_steps=steps, learning_rate=learning_rate, **overrides)
    probe = _callback_class()()
    trainer = make_trainer("sft", model, tokenizer, dataset, args, peft_config=peft_config,
                           callbacks=[probe])
    model = trainer.model
    if method == "qlora":
        for p in model.parameters():
            if p.requires_grad:
                p.data = p.data.float()
    run_training(trainer, remove_output_dir="output_dir" not in overrides)
    model.eval()
    trainable, total = trainable_parameters(model)
    losses = [float(entry["loss"]) for entry in trainer.state.log_history if "loss" in entry]
    return FinetuneResult(
        method=method, model=model, tokenizer=tokenizer, losses=losses,
        step_seconds=probe.step_seconds, trainable=trainable, total=total,
        weight_bytes=model_bytes(model), gradient_bytes=probe.gradient_bytes,
        optimizer_bytes=probe.optimizer_bytes, learning_rate=learning_rate,
        log_history=list(trainer.state.log_history), train_dataset=trainer.train_dataset,
    )



# ----------------------------------------------------------------------------- antes e depois


@torch.no_grad()
def greedy_answers(model, tokenizer, conversations, max_new_tokens: int = 48) -> list[str]:
    """Respostas gulosas do modelo a várias conversas de uma vez (lote com preenchimento à
    esquerda).

    Gulosa e em lote fixo: o mesmo modelo dá o mesmo texto a cada execução.
    Ver Capítulo 7, seção 7.7.
    """
    if not conversations:
        raise ValueError("A lista de conversas está vazia: passe ao menos uma lista de mensagens.")
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
