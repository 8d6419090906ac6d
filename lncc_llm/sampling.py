"""A matemática da geração, como biblioteca: temperatura, top-k, top-p, penalidade de repetição e um
laço de geração próprio.

O laço (``generate``) faz, token a token, o que o texto do Capítulo 4 descreve:
calcula os logits do próximo token, penaliza os tokens já usados (se pedido), aplica
a temperatura, recorta o top-k e o núcleo do top-p, sorteia com um ``torch.Generator``
na CPU (a mesma semente dá os mesmos tokens na CPU e na GPU) e usa o KV cache do
modelo, ou recalcula o prefixo inteiro a cada passo quando o cache está desligado.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

# ----------------------------------------------------------------------------- validação


def _check_temperature(temperature: float) -> float:
    try:
        value = float(temperature)
    except (TypeError, ValueError):
        raise ValueError(f"temperature deve ser um número > 0; recebi {temperature!r}.") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(
            f"temperature deve ser > 0 (e finita); recebi {temperature!r}. Para sempre escolher o "
            "token mais provável, use greedy=True em vez de temperatura 0."
        )
    return value


def _check_top_p(p: float) -> float:
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise ValueError(f"top_p deve ser um número no intervalo (0, 1]; recebi {p!r}.") from None
    if not (0.0 < value <= 1.0):
        raise ValueError(
            f"top_p deve estar no intervalo (0, 1]; recebi {p!r}. "
            "Use 1.0 para desligar o recorte do núcleo."
        )
    return value


def _check_top_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"top_k deve ser um inteiro ≥ 1; recebi {k!r}. "
                         "Use top_k=None para desligar o recorte.")
    return k


def _check_penalty(penalty) -> float:
    try:
        value = float(penalty)
    except (TypeError, ValueError):
        raise ValueError(
            f"repetition_penalty deve ser um número > 0; recebi {penalty!r}.") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError("repetition_penalty deve ser > 0 (1.0 desliga; > 1 penaliza a "
                         f"repetição); recebi {penalty!r}.")
    return value


# ----------------------------------------------------------------------------- distribuições


def apply_temperature(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Divide os logits pela temperatura τ > 0: ``softmax(z/τ)`` concentra (τ < 1) ou espalha
    (τ > 1).

    Ver Capítulo 4, seção 4.9.
    """
    return logits / _check_temperature(temperature)


def entropy(probs: torch.Tensor) -> torch.Tensor:
    """Entropia de Shannon, em nats, de distribuições na última dimensão (termos com p = 0 contam
    zero).

    Ver Capítulo 4, seção 4.9.
    """
    p = probs.double()
    return -(torch.where(p > 0, p * p.log(), torch.zeros_like(p))).sum(-1)


class Nucleus(NamedTuple):
    """Resultado de ``top_p_filter``: ids do núcleo (do mais provável ao menos) e a distribuição
    renormalizada.
    """

    indices: torch.Tensor
    probs: torch.Tensor


def top_p_filter(logits: torch.Tensor, p: float, temperature: float = 1.0) -> Nucleus:
    """Núcleo do top-p: o menor conjunto S_p de tokens cuja probabilidade somada é ≥ p,
    renormalizado.

    ``logits`` é um vetor ``(|V|,)``. Devolve ``Nucleus(indices, probs)``: os ids de S_p,
    em ordem decrescente de probabilidade, e o vetor ``(|V|,)`` com p̃(v) = p(v)/Σ_{S_p} p
    dentro do núcleo e 0 fora dele. ``temperature`` é aplicada antes do softmax.
    Ver Capítulo 4, seção 4.10.
    """
    p = _check_top_p(p)
    if logits.dim() != 1:
        raise ValueError("top_p_filter espera um vetor de logits (|V|,); "
                         f"recebi forma {tuple(logits.shape)}.")
    probs = torch.softmax(apply_temperature(logits.double(), temperature), dim=-1)
    sorted_probs, order = torch.sort(probs, descending=True)
    cumulative = torch.cumsum(sorted_probs, dim=-1)
    # número de tokens necessários: a primeira posição em que a massa acumulada atinge p
    size = int(torch.searchsorted(
        cumulative, torch.tensor([p], dtype=cumulative.dtype, device=cumulative.device)
    ).item()) + 1
    size = min(size, probs.numel())
    # sem recorte: a soma em ponto flutuante chega a 1 antes da cauda de probabilidades ínfimas
    if p >= 1.0:
        size = probs.numel()
    keep = order[:size]
    filtered = torch.zeros_like(probs)
    filtered[keep] = probs[keep] / probs[keep].sum()
    return Nucleus(keep, filtered.to(logits.dtype if logits.is_floating_point() else torch.float32))


def _top_k_mask(z: torch.Tensor, k: int) -> torch.Tensor:
    """True nos tokens com logit ≥ o k-ésimo maior (os empatados com ele ficam)."""
    return z >= torch.topk(z, min(k, z.numel())).values[-1]


def top_k_filter(logits: torch.Tensor, k: int, temperature: float = 1.0) -> Nucleus:
    """Os k tokens de maior logit, renormalizados; os empatados com o k-ésimo também ficam.

    ``logits`` é um vetor ``(|V|,)``. Devolve ``Nucleus(indices, probs)`` como ``top_p_filter``:
    os ids mantidos, do mais provável ao menos, e a distribuição ``(|V|,)`` com zero fora deles.
    Empates no k-ésimo valor mantêm todos os empatados (a regra do ``TopKLogitsWarper``). A
    temperatura não muda quais tokens ficam, só a distribuição entre eles.
    Ver Capítulo 4, seção 4.10.
    """
    k = _check_top_k(k)
    if logits.dim() != 1:
        raise ValueError("top_k_filter espera um vetor de logits (|V|,); "
                         f"recebi forma {tuple(logits.shape)}.")
    z = apply_temperature(logits.double(), temperature)
    kept = _top_k_mask(z, k)
    probs = torch.zeros_like(z)
    probs[kept] = torch.softmax(z[kept], dim=-1)
    order = torch.argsort(probs, descending=True, stable=True)[: int(kept.sum())]
    return Nucleus(order, probs.to(logits.dtype if logits.is_floating_point() else torch.float32))


def min_p_logits(logits: torch.Tensor, min_p: float) -> torch.Tensor:
    """O corte min-p: fica todo token com probabilidade ≥ ``min_p`` × (a do mais provável).

    ``logits`` é um vetor ``(|V|,)`` (já dividido pela temperatura, se houver); devolve os mesmos
    logits com ``-inf`` nos tokens cortados, como o ``MinPLogitsWarper`` do ``transformers``. O
    limiar acompanha a confiança do modelo: sobe quando o primeiro token domina e desce quando a
    distribuição é plana [Nguyen et al., 2025].
    Ver Capítulo 4, seção 4.10.3.
    """
    if isinstance(min_p, bool) or not isinstance(min_p, (int, float)) or not 0.0 <= min_p <= 1.0:
        raise ValueError(f"min_p deve ser um número entre 0 e 1; recebi {min_p!r}.")
    if not isinstance(logits, torch.Tensor) or logits.dim() != 1:
        got = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
        raise ValueError(f"min_p_logits espera um vetor de logits (|V|,) do PyTorch; recebi {got}.")
    probs = torch.softmax(logits, dim=-1)          # no tipo dos logits, como o transformers
    return logits.masked_fill(probs < min_p * probs.max(), float("-inf"))


def penalize_repetition(logits: torch.Tensor, previous_ids, penalty: float) -> torch.Tensor:
    """A penalidade de repetição do CTRL: os logits dos tokens que já apareceram encolhem.

    Para cada token em ``previous_ids`` (contado uma vez, por mais que se repita), um logit
    positivo é dividido por ``penalty`` e um negativo é multiplicado por ele: com ``penalty > 1``,
    os dois ficam menos prováveis. ``penalty = 1`` não muda nada. É a regra do
    ``RepetitionPenaltyLogitsProcessor`` do ``transformers``. Devolve uma cópia.
    Ver Capítulo 4, seção 4.13.
    """
    penalty = _check_penalty(penalty)
    if logits.dim() != 1:
        raise ValueError("penalize_repetition espera um vetor de logits (|V|,); "
                         f"recebi forma {tuple(logits.shape)}.")
    out = logits.clone()
    seen = torch.as_tensor(sorted(set(int(i) for i in previous_ids)), dtype=torch.long)
    if seen.numel():
        if int(seen.min()) < 0 or int(seen.max()) >= logits.numel():
            raise ValueError(f"Há ids fora do vocabulário de {logits.numel()} tokens em "
                             "previous_ids.")
        values = out[seen]
        out[seen] = torch.where(values < 0, values * penalty, values / penalty)
    return out


def sampling_distribution(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                          top_p: float = 1.0) -> torch.Tensor:
    """A distribuição de onde o próximo token é sorteado: temperatura, depois top-k, depois top-p.

    É a ordem do ``transformers``: o top-p age sobre a distribuição já cortada pelo top-k (e
    renormalizada). ``logits`` é ``(|V|,)`` ou ``(lote, |V|)``; devolve probabilidades em float64
    da mesma forma, com zero fora dos candidatos.
    Ver Capítulo 4, seção 4.10.
    """
    temperature = _check_temperature(temperature)
    top_p = _check_top_p(top_p)
    if top_k is not None:
        top_k = _check_top_k(top_k)
    if logits.dim() not in (1, 2):
        raise ValueError("sampling_distribution espera logits (|V|,) ou (lote, |V|); "
                         f"recebi forma {tuple(logits.shape)}.")
    rows = []
    for z in logits.double().reshape(-1, logits.shape[-1]):
        z = apply_temperature(z, temperature)
        if top_k is not None:
            z = z.masked_fill(~_top_k_mask(z, top_k), float("-inf"))   # a regra de top_k_filter
        rows.append(top_p_filter(z, top_p).probs.double() if top_p < 1.0
                    else torch.softmax(z, dim=-1))
    return torch.stack(rows).reshape(logits.shape)


# ----------------------------------------------------------------------------- laço de geração


@dataclass
class Generation:
    """O que ``generate`` devolve: o texto novo, os ids e, opcionalmente, as distribuições de cada
    passo.
    """

    text: str
    new_ids: list[int]
    prompt_ids: list[int]
    stopped_at_eos: bool
    chosen_probs: list[float] = field(default_factory=list)
    entropies: list[float] = field(default_factory=list)
    step_probs: torch.Tensor | None = None
    truncated_tokens: int = 0
    step_seconds: list[float] = field(default_factory=list)


def encode_prompt(tokenizer, prompt, chat: bool) -> list[int]:
    """Os ids de ``prompt`` (um texto, ou com ``chat=True`` um texto ou uma lista de mensagens que
    passa pelo template de chat), como ``generate`` os monta; erro em pt-BR para um prompt vazio.

    Ver Capítulo 4, seção 4.11.
    """
    if isinstance(prompt, str):
        if not prompt.strip():
            raise ValueError("O prompt está vazio: escreva algum texto para o modelo continuar.")
        if chat:
            messages = [{"role": "user", "content": prompt}]
        else:
            return tokenizer(prompt)["input_ids"]
    elif isinstance(prompt, (list, tuple)) and prompt and all(isinstance(m, dict) for m in prompt):
        if not chat:
            raise ValueError("Uma lista de mensagens exige chat=True "
                             "(ela passa pelo template de chat).")
        messages = list(prompt)
    else:
        raise ValueError(
            "O prompt deve ser um texto não vazio ou, com chat=True, uma lista de mensagens "
            '[{"role": "user", "content": "..."}].'
        )
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("Este tokenizador não tem template de chat; use chat=False.")
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return list(ids)


def context_window(model) -> int:
    """Janela de contexto do modelo (``max_position_embeddings`` ou ``n_positions`` da
    configuração).

    Ver Capítulo 5, seção 5.7.
    """
    cfg = model.config
    for name in ("max_position_embeddings", "n_positions", "n_ctx"):
        value = getattr(cfg, name, None)
        if isinstance(value, int) and value > 0:
            return value
    raise ValueError("Não encontrei a janela de contexto na configuração do modelo.")


@torch.no_grad()
def generate(
    model,
    tokenizer,
    prompt,
    max_new_tokens: int = 40,
    temperature: float = 1.0,
    top_p: float = 1.0,
    greedy: bool = False,
    top_k: int | None = None,
    repetition_penalty: float = 1.0,
    use_cache: bool = True,
    seed: int = 0,
    generator: torch.Generator | None = None,
    stop_at_eos: bool = True,
    chat: bool = False,
    return_probs: bool = False,
    on_overflow: str = "truncate",
) -> Generation:
    """Gera token a token com temperatura, top-k, top-p, penalidade de repetição, modo guloso, KV
    cache e parada no EOS.

    A ordem é a do ``transformers``: a penalidade de repetição (sobre os tokens do prompt e os já
    gerados) age nos logits; depois vêm a temperatura, o top-k e o top-p.

    O sorteio usa um ``torch.Generator`` na CPU semeado com ``seed`` (ou o ``generator``
    dado), então a mesma semente dá os mesmos tokens na CPU e na GPU. Com
    ``use_cache=False`` o prefixo inteiro é recalculado a cada passo (mesmo texto,
    mais lento). ``chat=True`` passa o prompt pelo template de chat do tokenizador.
    Se prompt + ``max_new_tokens`` não cabem na janela do modelo, os tokens mais
    antigos do prompt são descartados com um aviso (``on_overflow="truncate"``) ou
    a chamada é recusada (``on_overflow="error"``). ``return_probs=True`` guarda a
    distribuição usada em cada passo.
    Ver Capítulo 4, seção 4.11.
    """
    if (not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool)
            or max_new_tokens < 1):
        raise ValueError(f"max_new_tokens deve ser um inteiro ≥ 1; recebi {max_new_tokens!r}.")
    if not greedy:
        temperature = _check_temperature(temperature)
        top_p = _check_top_p(top_p)
        if top_k is not None:
            top_k = _check_top_k(top_k)
    repetition_penalty = _check_penalty(repetition_penalty)
    if on_overflow not in ("truncate", "error"):
        raise ValueError(f"on_overflow deve ser 'truncate' ou 'error'; recebi {on_overflow!r}.")
    ids = encode_prompt(tokenizer, prompt, chat)

    window = context_window(model)
    if max_new_tokens >= window:
        raise ValueError(f"max_new_tokens = {max_new_tokens} não cabe na janela de {window} tokens "
                         "do modelo.")
    overflow = len(ids) + max_new_tokens - window
    if overflow > 0:
        if on_overflow == "error":
            raise ValueError(
                f"O prompt tem {len(ids)} tokens; com max_new_tokens = {max_new_tokens} passaria "
                f"da janela de {window} tokens do modelo. "
                "Encurte o prompt ou use on_overflow='truncate'."
            )
        warnings.warn(
            f"Prompt de {len(ids)} tokens + {max_new_tokens} novos passaria da janela de {window}: "
            f"descartei os {overflow} tokens mais antigos do prompt.",
            stacklevel=2,
        )
        ids = ids[overflow:]

    if generator is None:
        generator = torch.Generator(device="cpu").manual_seed(int(seed))
    device = next(model.parameters()).device
    eos = tokenizer.eos_token_id
    sequence = torch.tensor([ids], device=device)
    new_ids: list[int] = []
    chosen, entropies, all_probs = [], [], []
    past = None
    stopped = False

    step_seconds: list[float] = []
    for _ in range(max_new_tokens):
        step_start = time.perf_counter()
        if use_cache and past is not None:
            out = model(input_ids=sequence[:, -1:], past_key_values=past, use_cache=True)
        else:
            out = model(input_ids=sequence, use_cache=use_cache)
        past = out.past_key_values if use_cache else None
        logits = out.logits[0, -1].float().cpu()
        if repetition_penalty != 1.0:
            logits = penalize_repetition(logits, ids + new_ids, repetition_penalty)

        if greedy:
            probs = torch.softmax(logits.double(), dim=-1)
            next_id = int(torch.argmax(logits).item())
        else:
            probs = sampling_distribution(logits, temperature, top_k, top_p)
            next_id = int(torch.multinomial(probs, 1, generator=generator).item())

        step_seconds.append(time.perf_counter() - step_start)   # logits já na CPU: o passo terminou
        new_ids.append(next_id)
        chosen.append(float(probs[next_id]))
        entropies.append(float(entropy(probs)))
        if return_probs:
            all_probs.append(probs.float())
        if stop_at_eos and eos is not None and next_id == eos:
            stopped = True
            break
        sequence = torch.cat([sequence, torch.tensor([[next_id]], device=device)], dim=1)

    text = tokenizer.decode(new_ids, skip_special_tokens=True)
    return Generation(
        text=text,
        new_ids=new_ids,
        prompt_ids=ids,
        stopped_at_eos=stopped,
        chosen_probs=chosen,
        entropies=entropies,
        step_probs=torch.stack(all_probs) if return_probs else None,
        truncated_tokens=max(overflow, 0),
        step_seconds=step_seconds,
    )


@torch.no_grad()
def sample_many(model, tokenizer, prompt, n: int, max_new_tokens: int = 40,
                temperature: float = 1.0, top_k: int | None = None, top_p: float = 1.0,
                seed: int = 0, chat: bool = False) -> list[str]:
    """``n`` continuações sorteadas do mesmo prompt, geradas juntas num lote (com *KV cache*).

    Cada passo roda o modelo uma vez para as ``n`` linhas: os pesos são lidos uma vez por passo
    para todas elas, em vez de uma vez por linha (Capítulo 4, seção 4.14.1). Os sorteios
    usam um ``torch.Generator`` da CPU semeado com ``seed``; com ``n = 1`` o resultado é o de
    ``generate(..., seed=seed)``. Uma linha que chega ao EOS para ali. Devolve os textos.
    Ver Capítulo 5, seção 5.6.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n deve ser um inteiro ≥ 1; recebi {n!r}.")
    if (not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool)
            or max_new_tokens < 1):
        raise ValueError(f"max_new_tokens deve ser um inteiro ≥ 1; recebi {max_new_tokens!r}.")
    sampling_distribution(torch.zeros(2), temperature, top_k, top_p)   # confere os controles
    ids = encode_prompt(tokenizer, prompt, chat)
    if len(ids) + max_new_tokens > context_window(model):
        raise ValueError(f"O prompt ({len(ids)} tokens) mais {max_new_tokens} novos não cabe na "
                         "janela do modelo; encurte um dos dois.")
    return _sample_rows(model, tokenizer, torch.tensor([ids] * n), max_new_tokens, temperature,
                        top_k, top_p, seed)


def _sample_rows(model, tokenizer, step_input, max_new_tokens, temperature, top_k, top_p, seed,
                 mask=None, positions=None) -> list[str]:
    """O laço de ``sample_many`` e ``sample_batch``: sorteia as linhas de ``step_input`` juntas, com
    *KV cache* e um gerador da CPU semeado com ``seed``; com ``mask``/``positions`` (preenchimento à
    esquerda), estende os dois a cada passo. Uma linha que chega ao EOS para ali."""
    generator = torch.Generator(device="cpu").manual_seed(int(seed))
    device = next(model.parameters()).device
    eos = tokenizer.eos_token_id
    rows = step_input.shape[0]
    past, new, done = None, [[] for _ in range(rows)], [False] * rows
    with torch.no_grad():
        for _ in range(max_new_tokens):
            extra = {} if mask is None else {"attention_mask": mask.to(device),
                                              "position_ids": positions.to(device)}
            out = model(input_ids=step_input.to(device), past_key_values=past, use_cache=True,
                        **extra)
            past = out.past_key_values
            logits = out.logits[:, -1].float().cpu()
            probs = sampling_distribution(logits, temperature, top_k, top_p)
            chosen = torch.multinomial(probs, 1, generator=generator)[:, 0].tolist()
            for row, token in enumerate(chosen):
                if not done[row]:
                    new[row].append(token)
                    done[row] = eos is not None and token == eos
            if all(done):
                break
            step_input = torch.tensor([[t] for t in chosen])
            if mask is not None:
                mask = torch.cat([mask, torch.ones(rows, 1, dtype=mask.dtype)], dim=1)
                positions = positions[:, -1:] + 1
    return [tokenizer.decode(row, skip_special_tokens=True) for row in new]


def sample_batch(model, tokenizer, prompts, n: int = 1, max_new_tokens: int = 40,
                 temperature: float = 1.0, top_k: int | None = None, top_p: float = 1.0,
                 seed: int = 0, chat: bool = False) -> list[list[str]]:
    """``n`` continuações sorteadas de **cada** prompt de ``prompts``, todas num lote só (com *KV
    cache*).

    Os prompts, de comprimentos diferentes, são preenchidos à esquerda; a máscara de atenção e as
    posições (``position_ids``) fazem cada linha ver só o seu texto. Com um prompt só, o resultado é
    o de ``sample_many(..., n=n, seed=seed)``. Devolve uma lista por prompt, com ``n`` textos.
    Ver Capítulo 5, seção 5.6.1.
    """
    prompts = list(prompts)
    if not prompts:
        raise ValueError("A lista de prompts está vazia: passe ao menos um.")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n deve ser um inteiro ≥ 1; recebi {n!r}.")
    if (not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool)
            or max_new_tokens < 1):
        raise ValueError(f"max_new_tokens deve ser um inteiro ≥ 1; recebi {max_new_tokens!r}.")
    sampling_distribution(torch.zeros(2), temperature, top_k, top_p)   # confere os controles
    rows = [encode_prompt(tokenizer, p, chat) for p in prompts for _ in range(n)]
    longest = max(len(r) for r in rows)
    if longest + max_new_tokens > context_window(model):
        raise ValueError(f"O prompt mais longo ({longest} tokens) mais {max_new_tokens} novos não "
                         "cabe na janela do modelo; encurte um dos dois.")
    eos = tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
    mask = torch.tensor([[0] * (longest - len(r)) + [1] * len(r) for r in rows])
    step_input = torch.tensor([[pad] * (longest - len(r)) + r for r in rows])
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    texts = _sample_rows(model, tokenizer, step_input, max_new_tokens, temperature, top_k, top_p,
                         seed, mask=mask, positions=positions)
    return [texts[i * n:(i + 1) * n] for i in range(len(prompts))]
