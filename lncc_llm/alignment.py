"""Alinhamento por preferências e por recompensa, do jeito que o Capítulo 8 mede.

* ``preference_rows`` / ``preference_dataset``: o conjunto de preferências do curso (pergunta,
  resposta preferida, resposta rejeitada), feito das perguntas do Capítulo 7; ``preference_inputs``
  confere os pares de treino e de avaliação de um treinador de preferências;
* ``sequence_logprob``: log π(resposta | prompt), a soma das log-probabilidades dos tokens da
  resposta (a definição única, de ``likelihood``);
* ``dpo_loss``: a perda do DPO, as recompensas implícitas e a margem, a partir das
  log-probabilidades da política e da referência;
* ``dpo_trainer`` e ``batch_logprobs``: o ``DPOTrainer`` do ``trl`` com LoRA, na CPU, e a conta dele
  refeita à mão;
* ``reinforce`` e ``policy_gradient_variance``: uma política categorical treinada por REINFORCE, com
  e sem *baseline*, e a variância do gradiente que o *baseline* corta;
* ``grpo_advantages``: as vantagens relativas ao grupo, com a normalização do ``trl``;
* ``grpo_trainer``: o ``GRPOTrainer`` do ``trl`` com uma recompensa verificável, guardando o que
  a função de recompensa viu (só a interface pública); ``grpo_surrogate_value`` refaz a perda
  registrada; ``reward_rate`` mede a recompensa em prompts fixos, antes e depois do treino.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from .likelihood import masked_logprob_sums, sequence_logprob  # noqa: F401  (reexportadas)
from .style import style_questions
from .trainers import cpu_training_args, lora_config, make_trainer
from .training import mean_and_se

# ----------------------------------------------------------------------- o conjunto de preferências


def preference_rows(split: str = "treino") -> list[dict]:
    """As linhas ``{"prompt", "chosen", "rejected"}`` do conjunto de preferências do curso.

    ``split="treino"``: as 8 perguntas de treino do Capítulo 7; ``"validacao"``: as 4 perguntas
    de validação, que o DPO não vê (pares reservados).

    O prompt é só a pergunta do usuário, sem mensagem de sistema (o template do SmolLM2 põe a sua);
    ``chosen`` é a resposta na voz científica do Capítulo 7 e ``rejected`` a resposta casual à mesma
    pergunta. A preferência codificada é de tom: o DPO deve levar o modelo à voz científica quando
    ninguém pede uma voz.
    Ver Capítulo 8, seção 8.2.
    """
    return [{"prompt": [{"role": "user", "content": q}],
             "chosen": [{"role": "assistant", "content": sci}],
             "rejected": [{"role": "assistant", "content": cas}]}
            for q, sci, cas in style_questions(split)]


def preference_dataset(split: str = "treino"):
    """``preference_rows(split)`` como ``datasets.Dataset``, no formato conversacional que o ``trl``
    lê.

    Ver Capítulo 8, seção 8.2.
    """
    from datasets import Dataset

    return Dataset.from_list(preference_rows(split))


def preference_inputs(dataset=None, eval_datasets: dict | None = None):
    """Os pares de treino e os de avaliação de um treinador de preferências (DPO ou modelo de
    recompensa), conferidos: devolve ``(dataset, extra)``, com ``dataset`` =
    ``preference_dataset()`` se nenhum vier, e ``extra`` = ``{"eval_dataset": {...}}`` (ou ``{}``)
    para o construtor do ``trl``. Conjunto vazio, ou ``eval_datasets`` que não seja um dicionário
    de conjuntos não vazios, dá erro.
    Ver Capítulo 8, seções 8.2.3 e 8.2.5.
    """
    if dataset is None:
        dataset = preference_dataset()
    if len(dataset) == 0:
        raise ValueError("O conjunto de preferências está vazio: passe linhas "
                         "prompt/chosen/rejected (por exemplo, preference_dataset()).")
    if not eval_datasets:
        return dataset, {}
    if not isinstance(eval_datasets, dict) or any(len(d) == 0 for d in eval_datasets.values()):
        raise ValueError("eval_datasets deve ser um dicionário {'nome': Dataset} de conjuntos "
                         "não vazios, por exemplo {'reservados': preference_dataset('validacao')}.")
    return dataset, {"eval_dataset": dict(eval_datasets)}


# ----------------------------------------------------------------------------- a perda do DPO


@dataclass
class DPOLoss:
    """O que ``dpo_loss`` devolve: a perda média, as perdas por par, as recompensas e a margem.

    Ver Capítulo 8, seção 8.2.
    """

    loss: torch.Tensor
    losses: torch.Tensor
    chosen_rewards: torch.Tensor
    rejected_rewards: torch.Tensor
    margins: torch.Tensor

    @property
    def accuracy(self) -> float:
        """Fração dos pares em que a recompensa da preferida supera a da rejeitada."""
        return float((self.chosen_rewards > self.rejected_rewards).double().mean())


def dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected,
             beta: float = 0.1) -> DPOLoss:
    """A perda do DPO (sigmoide) a partir das log-probabilidades somadas de cada resposta.

    Recompensa implícita de uma resposta: β·(log π_θ − log π_ref). Perda de um par:
    −log σ(recompensa da preferida − recompensa da rejeitada); a média vai sobre os pares. Com
    π_θ = π_ref as recompensas são zero e a perda é ln 2. É a conta do ``loss_type="sigmoid"`` do
    ``DPOTrainer`` (``trl`` 1.16), e as recompensas são as que ele registra (já com β).
    Ver Capítulo 8, seção 8.2.
    """
    if beta <= 0:
        raise ValueError("beta deve ser > 0 (β = 0 desliga o sinal: a perda fica em ln 2); "
                         f"recebi {beta!r}.")
    values = [torch.as_tensor(v, dtype=torch.float64).reshape(-1) for v in
              (policy_chosen, policy_rejected, ref_chosen, ref_rejected)]
    if len({v.numel() for v in values}) != 1 or values[0].numel() == 0:
        raise ValueError("As quatro log-probabilidades devem ter o mesmo número (≥ 1) de pares; "
                         f"recebi {[v.numel() for v in values]}.")
    pc, pr, rc, rr = values
    chosen_rewards = beta * (pc - rc)
    rejected_rewards = beta * (pr - rr)
    margins = chosen_rewards - rejected_rewards
    losses = -F.logsigmoid(margins)
    return DPOLoss(losses.mean(), losses, chosen_rewards, rejected_rewards, margins)


# ----------------------------------------------------------------------------- DPO com o trl


def dpo_trainer(model, tokenizer, dataset=None, *, steps: int = 6,
                learning_rate: float = 5e-4, beta: float = 0.1, batch_size: int = 2, rank: int = 8,
                alpha: int = 16, eval_datasets: dict | None = None, **overrides):
    """Um ``DPOTrainer`` do ``trl`` com LoRA, pronto para a CPU (treine com ``run_training``).

    ``model`` deve ser uma cópia nova do decodificador
    (``quantization.load_fresh_decoder("fp32")``): com ``peft_config`` o ``trl`` usa o próprio
    modelo com os adaptadores desligados como referência π_ref, sem uma segunda cópia. A
    configuração vem de ``cpu_training_args(trainer="dpo")``; a taxa de aprendizado padrão do
    ``trl`` (1e-6, pensada para o ajuste completo de modelos grandes) quase não move adaptadores
    LoRA em poucos passos. Depois do treino, ``trainer.state.log_history`` tem perda, recompensas e
    margens por passo.

    ``eval_datasets`` (``{"nome": Dataset}``) ficam prontos para a API pública de avaliação:
    ``trainer.evaluate(eval_dataset="nome")`` devolve ``eval_loss``, ``eval_rewards/chosen``,
    ``eval_rewards/margins``… desses pares, num lote só (até 16 pares), sem mudar os pesos.
    Ver Capítulo 8, seção 8.2.
    """
    dataset, extra = preference_inputs(dataset, eval_datasets)
    if extra:
        overrides.setdefault("per_device_eval_batch_size", 16)      # cada conjunto num lote só
    args = cpu_training_args(trainer="dpo", max_steps=steps, learning_rate=learning_rate, beta=beta,
                             per_device_train_batch_size=batch_size, **overrides)
    return make_trainer("dpo", model, tokenizer, dataset, args,
                        peft_config=lora_config(rank, alpha), **extra)


def batch_logprobs(model, batch) -> torch.Tensor:
    """Log-probabilidades somadas das respostas de um lote do ``DPOTrainer`` (preferidas, depois
    rejeitadas).

    Uma passagem para frente comum (logits), e ``likelihood.masked_logprob_sums`` com a
    ``completion_mask`` do lote: a mesma conta que o ``trl`` faz por dentro, escrita às claras.
    Ver Capítulo 8, seção 8.2.
    """
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    return masked_logprob_sums(logits, batch["input_ids"], batch["completion_mask"])


# ------------------------------------------------------------------ REINFORCE numa política pequena


@dataclass
class ReinforceRun:
    """O que ``reinforce`` devolve: probabilidades a cada passo, ações, recompensas e gradientes.

    Ver Capítulo 8, seção 8.3.
    """

    probs: torch.Tensor            # (passos + 1, ações): a política antes de cada passo e no fim
    actions: list[int]
    rewards: list[float]
    baselines: list[float]
    gradients: torch.Tensor        # (passos, ações): o gradiente estimado em cada passo


def _check_rewards(mean_rewards) -> torch.Tensor:
    r = torch.as_tensor(mean_rewards, dtype=torch.float64).reshape(-1)
    if r.numel() < 2:
        raise ValueError("Dê a recompensa média de pelo menos duas ações.")
    return r


def reinforce(mean_rewards, *, steps: int = 300, learning_rate: float = 0.1, baseline: bool = True,
              noise: float = 0.5, momentum: float = 0.9, seed: int = 0,
              logits=None) -> ReinforceRun:
    """Treina uma política categórica π = softmax(θ) por REINFORCE, uma ação por passo.

    A cada passo: amostra a ~ π (gerador de CPU com ``seed``), recebe r = ``mean_rewards[a]`` +
    ruído gaussiano de desvio ``noise`` e sobe θ na direção (r − b)·∇θ log π(a). Sem *baseline*,
    b = 0; com ele, b é a média móvel das recompensas já vistas (fator ``momentum``), que não
    depende da ação e por isso não muda o gradiente esperado, só a variância (no 1º passo ainda não
    há média: b = 0; depois do 1º passo, b começa na primeira recompensa). O gradiente vem do
    autograd.
    Ver Capítulo 8, seção 8.3.
    """
    r_mean = _check_rewards(mean_rewards)
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps deve ser um inteiro ≥ 1; recebi {steps!r}.")
    gen = torch.Generator().manual_seed(seed)
    theta = (torch.zeros_like(r_mean) if logits is None
             else torch.as_tensor(logits, dtype=torch.float64).clone())
    theta.requires_grad_(True)
    b, probs, actions, rewards, baselines, grads = 0.0, [], [], [], [], []
    for _ in range(steps):
        logp = torch.log_softmax(theta, dim=0)
        probs.append(logp.detach().exp())
        a = int(torch.multinomial(logp.detach().exp(), 1, generator=gen))
        r = float(r_mean[a] + noise * torch.randn((), generator=gen, dtype=torch.float64))
        used = b if baseline else 0.0
        (grad,) = torch.autograd.grad((r - used) * logp[a], theta)
        with torch.no_grad():
            theta += learning_rate * grad
        actions.append(a)
        rewards.append(r)
        baselines.append(used)
        grads.append(grad.detach())
        b = momentum * b + (1 - momentum) * r if actions[1:] else r
    probs.append(torch.softmax(theta.detach(), dim=0))
    return ReinforceRun(torch.stack(probs), actions, rewards, baselines, torch.stack(grads))


def policy_gradient_variance(mean_rewards, *, baseline: float = 0.0, noise: float = 0.5,
                             samples: int = 20000, seed: int = 0, logits=None) -> float:
    """Variância total (soma sobre as componentes) do estimador (r − b)·∇θ log π(a), com θ fixo.

    Amostra ``samples`` ações e recompensas e mede a variância empírica de cada componente do
    gradiente. Com ``baseline`` igual à recompensa esperada ela cai; a média do estimador não muda.
    Ver Capítulo 8, seção 8.3.
    """
    r_mean = _check_rewards(mean_rewards)
    gen = torch.Generator().manual_seed(seed)
    theta = (torch.zeros_like(r_mean) if logits is None
             else torch.as_tensor(logits, dtype=torch.float64))
    pi = torch.softmax(theta, dim=0)
    a = torch.multinomial(pi, samples, replacement=True, generator=gen)
    r = r_mean[a] + noise * torch.randn(samples, generator=gen, dtype=torch.float64)
    score = F.one_hot(a, r_mean.numel()).double() - pi          # ∇θ log π(a) = one_hot(a) − π
    g = (r - baseline).unsqueeze(1) * score
    return float(g.var(dim=0).sum())


# ----------------------------------------------------------------------------- GRPO


def grpo_advantages(rewards, group_size: int, scale: str = "group",
                    eps: float = 1e-4) -> torch.Tensor:
    """Vantagens relativas ao grupo, como o ``GRPOTrainer`` do ``trl`` 1.16 as calcula.

    As recompensas vêm em grupos consecutivos de ``group_size`` respostas ao mesmo prompt.
    Vantagem = (r − média do grupo) / (desvio + ``eps``), com o desvio-padrão corrigido de Bessel
    (n − 1): do grupo (``scale="group"``, o padrão do ``trl``), do lote inteiro (``"batch"``) ou
    nenhum (``"none"``, só centra). Um grupo de recompensas iguais dá vantagens zero: nada a
    aprender.
    Ver Capítulo 8, seção 8.3.
    """
    r = torch.as_tensor(rewards, dtype=torch.float64).reshape(-1)
    if not isinstance(group_size, int) or group_size < 2:
        raise ValueError("group_size deve ser um inteiro ≥ 2 (o GRPO compara respostas); "
                         f"recebi {group_size!r}.")
    if r.numel() == 0 or r.numel() % group_size:
        raise ValueError(f"{r.numel()} recompensas não formam grupos de {group_size}: o total deve "
                         "ser um múltiplo positivo do tamanho do grupo.")
    if scale not in ("group", "batch", "none"):
        raise ValueError(f"scale deve ser 'group', 'batch' ou 'none'; recebi {scale!r}.")
    groups = r.view(-1, group_size)
    centred = (groups - groups.mean(dim=1, keepdim=True)).reshape(-1)
    if scale == "none":
        return centred
    std = (groups.std(dim=1, keepdim=True).expand_as(groups).reshape(-1) if scale == "group"
           else r.std().expand_as(r))
    return centred / (std + eps)


@dataclass
class GRPORun:
    """O que ``grpo_trainer`` devolve: o *trainer* e o que a função de recompensa viu a cada passo.

    ``rewards[i]``, ``completions[i]``, ``lengths[i]`` e ``prompts[i]`` são as listas do passo
    ``i``, na ordem das respostas (grupos consecutivos de ``num_generations``): a recompensa, o
    texto, o número de tokens de cada resposta (o ``<|im_end|>`` incluído, se ela terminou) e o
    prompt que a gerou. Tudo chega pela interface
    pública do ``trl``: a função de recompensa recebe ``completions`` e ``completion_ids``.
    ``advantages`` recalcula as vantagens com ``grpo_advantages`` (a fórmula do artigo, com os
    padrões do ``trl``) e ``logged(chave)`` lê o registro de treino (``trainer.state.log_history``).
    Ver Capítulo 8, seção 8.3.
    """

    trainer: object
    num_generations: int
    rewards: list = field(default_factory=list)
    completions: list = field(default_factory=list)
    lengths: list = field(default_factory=list)
    prompts: list = field(default_factory=list)

    @property
    def mean_rewards(self) -> list[float]:
        """A recompensa média de cada passo."""
        return [sum(r) / len(r) for r in self.rewards]

    @property
    def advantages(self) -> list[list[float]]:
        """As vantagens de cada passo pela fórmula do GRPO (``grpo_advantages``, ``scale`` do
        ``trl``)."""
        # o GRPOConfig já converte True/False em "group"/"none"
        scale = getattr(getattr(self.trainer, "args", None), "scale_rewards", "group")
        return [grpo_advantages(r, self.num_generations, scale=scale).tolist()
                for r in self.rewards]

    def logged(self, key: str) -> list[float]:
        """Os valores de ``key`` (``"loss"``, ``"reward"``, ``"reward_std"``…) em cada passo do
        registro de treino."""
        values = [e[key] for e in self.trainer.state.log_history if key in e and "step" in e
                  and not any(k.startswith("train_") for k in e)]
        if not values:
            history = self.trainer.state.log_history
            raise KeyError(f"O registro de treino não tem {key!r}; chaves do 1º passo: "
                           f"{sorted(history[0]) if history else []}.")
        return values


def grpo_surrogate_value(advantages, lengths) -> float:
    """O valor da perda do GRPO num passo com razão de importância 1, ``loss_type="dapo"``, β = 0.

    Cada token da resposta i contribui com −A_i·razão e a razão vale 1 (a política que gerou é a
    que treina), então a perda é −Σ_i A_i·n_i / Σ_i n_i, com n_i os tokens da resposta i. O
    gradiente não é zero: é o de −A_i·log π, o do REINFORCE. Serve para conferir o registro do
    ``trl``.
    Ver Capítulo 8, seção 8.3.
    """
    a = torch.as_tensor(advantages, dtype=torch.float64).reshape(-1)
    n = torch.as_tensor(lengths, dtype=torch.float64).reshape(-1)
    if a.numel() == 0 or a.numel() != n.numel() or bool((n < 0).any()) or float(n.sum()) == 0:
        raise ValueError("Dê uma vantagem e um número de tokens (≥ 0, não todos zero) por "
                         f"resposta; recebi {a.numel()} vantagens e {n.numel()} tamanhos.")
    return float(-(a * n).sum() / n.sum())


def grpo_trainer(model, tokenizer, dataset, reward_fn, *, steps: int = 6,
                 learning_rate: float = 1e-3, num_generations: int = 4, prompts_per_step: int = 2,
                 max_completion_length: int = 16, rank: int = 8, alpha: int = 16,
                 **overrides) -> GRPORun:
    """Um ``GRPOTrainer`` do ``trl`` com LoRA e uma recompensa verificável, pronto para a CPU.

    ``reward_fn(completions, completion_ids) -> list[float]`` pontua cada resposta. A cada passo o
    *trainer* gera ``num_generations`` respostas para cada um de ``prompts_per_step`` prompts (com
    amostragem, na temperatura 1 do ``GRPOConfig``, salvo outra em ``overrides``, como
    ``temperature=0.7``), pontua, calcula as vantagens do grupo e dá um passo (treine com
    ``run_training(run.trainer)``). O ``GRPORun`` guarda o que a função de recompensa recebeu
    (textos, tamanhos) e devolveu, só pela interface pública do ``trl``: as vantagens e a perda se
    refazem disso (``GRPORun.advantages``, ``grpo_surrogate_value``) e se conferem com o registro
    de treino. Com os padrões do ``trl`` (``beta=0``, ``num_iterations=1``) a razão de importância
    é 1 e o passo é um REINFORCE com *baseline* do grupo, normalizado.
    Ver Capítulo 8, seção 8.3.
    """
    if len(dataset) == 0:
        raise ValueError("O conjunto de prompts está vazio: passe linhas com a coluna 'prompt'.")
    if not callable(reward_fn):
        raise TypeError("reward_fn deve ser uma função (completions, completion_ids) -> "
                        f"list[float]; recebi {type(reward_fn).__name__}.")
    run = GRPORun(trainer=None, num_generations=num_generations)

    columns = [c for c in dataset.column_names if c != "prompt"]

    def reward(prompts, completions, completion_ids, **kwargs):
        extra = {c: kwargs[c] for c in columns if c in kwargs}
        texts = [c[0]["content"] if isinstance(c, list) else c for c in completions]
        values = [float(v) for v in reward_fn(texts, completion_ids, **extra)]
        if len(values) != len(completion_ids):
            raise ValueError(f"A função de recompensa devolveu {len(values)} valores para "
                             f"{len(completion_ids)} respostas: devolva um por resposta.")
        run.rewards.append(values)
        run.completions.append(texts)
        run.prompts.append(list(prompts))
        run.lengths.append([len(ids) for ids in completion_ids])
        return values

    reward.__name__ = getattr(reward_fn, "__name__", "recompensa")
    args = cpu_training_args(trainer="grpo", max_steps=steps, learning_rate=learning_rate,
                             per_device_train_batch_size=num_generations * prompts_per_step,
                             num_generations=num_generations,
                             max_completion_length=max_completion_length, **overrides)
    run.trainer = make_trainer("grpo", model, tokenizer, dataset, args,
                               peft_config=lora_config(rank, alpha), reward_funcs=reward)
    return run


@dataclass
class RewardRate:
    """O que ``reward_rate`` devolve: as recompensas por prompt, os textos e a taxa com o seu erro.

    Ver Capítulo 8, seção 8.3.
    """

    rewards: list            # por prompt, a recompensa de cada amostra
    completions: list        # por prompt, os textos

    @property
    def n(self) -> int:
        return sum(len(r) for r in self.rewards)

    @property
    def rate(self) -> float:
        """A recompensa média sobre todas as amostras."""
        return sum(map(sum, self.rewards)) / self.n

    @property
    def se(self) -> float:
        """Erro-padrão da taxa por agrupamento nos prompts (as amostras de um prompt não são
        independentes): desvio das médias por prompt / √(número de prompts)."""
        means = [sum(r) / len(r) for r in self.rewards]
        return mean_and_se(means)[1] if len(means) > 1 else float("nan")


@torch.no_grad()
def reward_rate(model, tokenizer, prompts, reward_fn, *, samples: int = 16,
                temperature: float = 0.7, max_new_tokens: int = 16, seed: int = 0,
                columns: dict | None = None) -> RewardRate:
    """Amostra ``samples`` respostas para cada prompt, como o ``GRPOTrainer`` amostra, e pontua.

    Cada prompt (uma lista de mensagens) passa pelo template de chat; a amostragem usa
    ``temperature``, sem top-k nem top-p (os padrões do ``GRPOConfig``), até ``max_new_tokens``
    tokens; todos os prompts vão num lote só (preenchido à esquerda), com a semente ``seed`` fixada
    antes (o mesmo sorteio antes e depois do treino). ``reward_fn(completions, completion_ids)``
    recebe os textos e os ids até o fim de cada resposta (o ``<|im_end|>`` incluído, se ela
    terminou), como no ``trl``, e mais as ``columns`` do prompt (por exemplo ``answer``, o
    gabarito), uma por amostra. Com um dicionário ``{"nome": função}`` no lugar de uma função,
    todas pontuam as **mesmas** amostras, e volta um ``{"nome": RewardRate}``.
    Ver Capítulo 8, seção 8.3.
    """
    prompts = list(prompts)
    if not prompts:
        raise ValueError("Passe ao menos um prompt (uma lista de mensagens {'role', 'content'}).")
    if not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples deve ser um inteiro ≥ 1; recebi {samples!r}.")
    if not temperature > 0:
        raise ValueError(f"temperature deve ser > 0 (amostragem do GRPO); recebi {temperature!r}.")
    columns = dict(columns or {})
    if any(len(v) != len(prompts) for v in columns.values()):
        sizes = {k: len(v) for k, v in columns.items()}
        raise ValueError("Cada coluna de columns deve ter um valor por prompt; recebi "
                         f"{sizes} para {len(prompts)} prompts.")
    from .likelihood import left_padded_batch

    eos = tokenizer.eos_token_id
    device = next(model.parameters()).device
    texts_in = [tokenizer.apply_chat_template(m, add_generation_prompt=True, tokenize=False)
                for m in prompts]
    batch = left_padded_batch(tokenizer, texts_in)       # todos os prompts num lote só
    ids = batch["input_ids"].repeat_interleave(samples, dim=0).to(device)
    mask = batch["attention_mask"].repeat_interleave(samples, dim=0).to(device)
    torch.manual_seed(seed)
    out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True,
                         temperature=temperature, top_k=0, top_p=1.0,
                         max_new_tokens=max_new_tokens, pad_token_id=eos, eos_token_id=eos)
    rows = out[:, ids.shape[1]:].tolist()
    functions = reward_fn if isinstance(reward_fn, dict) else {None: reward_fn}
    rewards, texts = {name: [] for name in functions}, []
    for k in range(len(prompts)):
        completion_ids = [row[: row.index(eos) + 1] if eos in row else row
                          for row in rows[k * samples:(k + 1) * samples]]
        completions = [tokenizer.decode(c, skip_special_tokens=True) for c in completion_ids]
        extra = {name: [values[k]] * samples for name, values in columns.items()}
        for name, fn in functions.items():
            rewards[name].append([float(v) for v in fn(completions, completion_ids, **extra)])
        texts.append(completions)
    results = {name: RewardRate(values, texts) for name, values in rewards.items()}
    return results if isinstance(reward_fn, dict) else results[None]
