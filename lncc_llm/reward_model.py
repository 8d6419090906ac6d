"""O modelo de recompensa do RLHF: uma regressão de Bradley–Terry sobre pares de preferência.

* ``reward_model_trainer``: o ``RewardTrainer`` do ``trl`` com LoRA sobre o decodificador do curso
  com uma cabeça escalar (``AutoModelForSequenceClassification``, ``num_labels=1``), na CPU;
* ``pair_rewards``: a recompensa r(x, y) de cada resposta preferida e rejeitada, refeita à mão
  (o último estado oculto da conversa vezes o vetor da cabeça), para conferir o ``trl``;
* ``PairRewards``: as recompensas, a margem e a acurácia de pares.

É o primeiro modelo do RLHF clássico; o DPO (``alignment``) ajusta a mesma fórmula de
Bradley–Terry sem ele, com a recompensa implícita β log(π_θ/π_ref).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .trainers import cpu_training_args, lora_config, make_trainer


@dataclass
class PairRewards:
    """As recompensas de pares (preferida, rejeitada) de um modelo de recompensa.

    Ver Capítulo 8, seção 8.2.5.
    """

    chosen: torch.Tensor
    rejected: torch.Tensor

    @property
    def margins(self) -> torch.Tensor:
        """r(y_w) − r(y_l) de cada par."""
        return self.chosen - self.rejected

    @property
    def accuracy(self) -> float:
        """A fração de pares em que a preferida recebe a recompensa maior."""
        return float((self.margins > 0).double().mean())

    @property
    def loss(self) -> float:
        """A perda de Bradley–Terry, −log σ(r_w − r_l), média sobre os pares."""
        return float(-torch.nn.functional.logsigmoid(self.margins).mean())


def load_reward_model(seed: int = 0):
    """O decodificador do curso com uma cabeça escalar nova (``num_labels=1``), em float32.

    O corpo é o mesmo do ``load_decoder``; a cabeça ``score`` (um vetor do tamanho do estado
    oculto) começa aleatória, sorteada com a semente ``seed`` na CPU.
    Ver Capítulo 8, seção 8.2.5.
    """
    from transformers import AutoModelForSequenceClassification

    from .environment import silence_library_noise
    from .models import ensure_decoder_cache

    silence_library_noise()
    torch.manual_seed(seed)
    return AutoModelForSequenceClassification.from_pretrained(
        ensure_decoder_cache(), num_labels=1, dtype=torch.float32)


def reward_model_trainer(tokenizer, dataset=None, *, steps: int = 8, learning_rate: float = 1e-3,
                         batch_size: int = 2, rank: int = 8, alpha: int = 16, seed: int = 0,
                         eval_datasets: dict | None = None, model=None, **overrides):
    """Um ``RewardTrainer`` do ``trl`` com LoRA, pronto para a CPU (treine com ``run_training``).

    O modelo é ``load_reward_model(seed)`` (ou ``model``, um ``...ForSequenceClassification`` com
    ``num_labels=1``); o LoRA (posto ``rank`` em ``q_proj``/``v_proj``, como o
    DPO do capítulo) treina junto com a cabeça ``score`` inteira (``modules_to_save``). A perda é a
    de Bradley–Terry, −log σ(r(x, y_w) − r(x, y_l)). ``dataset`` tem linhas
    ``prompt``/``chosen``/``rejected`` (padrão: ``alignment.preference_dataset()``);
    ``eval_datasets`` (``{"nome": Dataset}``) ficam para ``trainer.evaluate(eval_dataset="nome")``,
    que devolve ``eval_accuracy`` e ``eval_margin``.
    Ver Capítulo 8, seção 8.2.5.
    """
    from .alignment import preference_inputs

    dataset, extra = preference_inputs(dataset, eval_datasets)
    if extra:
        overrides.setdefault("per_device_eval_batch_size", 16)      # cada conjunto num lote só
    args = cpu_training_args(trainer="reward", max_steps=steps, learning_rate=learning_rate,
                             per_device_train_batch_size=batch_size, seed=seed, **overrides)
    peft = lora_config(rank, alpha, task_type="SEQ_CLS", modules_to_save=["score"])
    model = load_reward_model(seed) if model is None else model
    return make_trainer("reward", model, tokenizer, dataset, args, peft_config=peft, **extra)


@torch.no_grad()
def pair_rewards(model, tokenizer, rows) -> PairRewards:
    """r(x, y_w) e r(x, y_l) de cada linha, à mão: a conversa inteira pelo template de chat, o
    estado oculto final (depois da última normalização) no último token que não é de
    preenchimento, vezes o vetor da cabeça ``score``.

    ``model`` é o modelo de recompensa (com ou sem LoRA); ``rows`` tem ``prompt``, ``chosen`` e
    ``rejected`` no formato conversacional. Uma conversa por vez, sem preenchimento. A regra do
    último token é a dos modelos de classificação do ``transformers``: o último token diferente do
    de preenchimento (no SmolLM2, o ``<|im_end|>``), aqui o ``\\n`` que o template põe depois dele.
    Ver Capítulo 8, seção 8.2.5.
    """
    rows = list(rows)
    if not rows:
        raise ValueError("Passe ao menos um par {'prompt', 'chosen', 'rejected'}.")
    model.eval()
    score = model.score if hasattr(model, "score") else model.base_model.model.score
    weight = (score.modules_to_save["default"] if hasattr(score, "modules_to_save")
              else score).weight[0].double()
    pad = tokenizer.pad_token_id
    out = {"chosen": [], "rejected": []}
    for row in rows:
        for key in out:
            text = tokenizer.apply_chat_template(row["prompt"] + row[key], tokenize=False)
            ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            last = max(i for i, t in enumerate(ids) if t != pad)
            hidden = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states
            out[key].append(float(hidden[-1][0, last].double() @ weight))
    return PairRewards(torch.tensor(out["chosen"], dtype=torch.float64),
                       torch.tensor(out["rejected"], dtype=torch.float64))
