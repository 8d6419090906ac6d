"""Log-verossimilhança de uma continuação: a conta que os Capítulos 5 e 8 compartilham.

* ``sequence_logprob``: log p(continuação | prompt), a soma das log-probabilidades dos tokens da
  continuação, numa passagem para frente. É a definição única do curso: o Capítulo 5 pontua rótulos
  com ela (``prompting.label_logprob``), o Capítulo 8 calcula a perda do DPO e pontua questões de
  múltipla escolha com ela;
* ``sequence_logprobs``: a mesma conta para muitos pares, em lote;
* ``masked_logprob_sums``: a mesma soma para um lote já tokenizado, com uma máscara que marca os
  tokens da continuação (o formato dos lotes do ``trl``);
* ``prompt_ids`` e ``completion_ids``: como prompt e continuação viram ids;
* ``left_padded_batch``: textos num lote preenchido à esquerda (geração e juiz leem a última
  posição).
"""
from __future__ import annotations

import torch

from .sampling import encode_prompt


def _is_ids(x) -> bool:
    return isinstance(x, (list, tuple)) and bool(x) and all(
        isinstance(i, int) and not isinstance(i, bool) for i in x
    )


def _is_messages(x) -> bool:
    return isinstance(x, (list, tuple)) and bool(x) and all(isinstance(m, dict) for m in x)


def prompt_ids(tokenizer, prompt, chat: bool = False) -> list[int]:
    """Ids do prompt exatamente como ``generate`` os monta (com ``chat=True``, pelo template de
    chat).

    ``prompt`` também pode ser uma lista de ids já tokenizados (por exemplo, cortados
    para uma janela com ``truncate_ids``): ela é usada como está.
    Ver Capítulo 5, seção 5.3.
    """
    if _is_ids(prompt):
        if chat:
            raise ValueError("Uma lista de ids já está tokenizada: use chat=False.")
        return list(prompt)
    return encode_prompt(tokenizer, prompt, chat)


def completion_ids(tokenizer, prompt, completion, chat: bool = False) -> list[int]:
    """Ids da continuação, na forma em que ela segue o prompt.

    * texto: tokenizado sozinho, sem tokens especiais (um rótulo, uma alternativa " Paris");
    * mensagens (com ``chat=True``): a conversa inteira (prompt + resposta) passa pelo template de
      chat, e a continuação é o que vem depois do prompt — a resposta e o ``<|im_end|>`` que a
      fecha, como o ``DPOTrainer`` do ``trl`` recorta;
    * lista de ids: usada como está.
    Ver Capítulo 8, seção 8.2.
    """
    if _is_ids(completion):
        return list(completion)
    if _is_messages(completion):
        if not (chat and _is_messages(prompt)):
            raise ValueError("Uma continuação em mensagens pede um prompt em mensagens e "
                             "chat=True.")
        full = tokenizer.apply_chat_template(list(prompt) + list(completion), tokenize=False)
        start = tokenizer.apply_chat_template(list(prompt), tokenize=False,
                                              add_generation_prompt=True)
        if not full.startswith(start):
            raise ValueError("O template de chat não reproduz o prompt no início da conversa "
                             "completa.")
        completion = full[len(start):]
    if not isinstance(completion, str) or not completion:
        raise ValueError("A continuação deve ser um texto não vazio, mensagens ou ids; "
                         f"recebi {completion!r}.")
    ids = tokenizer(completion, add_special_tokens=False)["input_ids"]
    if not ids:
        raise ValueError(f"A continuação {completion!r} não produziu nenhum token.")
    return ids


def masked_logprob_sums(logits, input_ids, completion_mask) -> torch.Tensor:
    """Para cada linha do lote, a soma de log p(token) nas posições que ``completion_mask`` marca.

    A posição ``t`` dos ``logits`` prevê o token ``t + 1``: os logits perdem a última posição e os
    ids e a máscara perdem a primeira. As contas vão em float64.
    Ver Capítulo 8, seção 8.2.
    """
    logp = torch.log_softmax(logits[:, :-1].double(), dim=-1)
    target = input_ids[:, 1:].to(logp.device)
    picked = logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return (picked * completion_mask[:, 1:].to(picked)).sum(dim=1)


@torch.no_grad()
def sequence_logprobs(model, tokenizer, prompts, completions, chat: bool = False,
                      batch_size: int = 64) -> list[float]:
    """``sequence_logprob`` para muitos pares (prompt, continuação), em lotes com preenchimento à
    direita.

    Cada linha é prompt + continuação; a máscara de atenção esconde o preenchimento (que fica depois
    dos tokens reais, então não muda nada antes dele) e só os tokens da continuação entram na soma
    (a conta de ``masked_logprob_sums``). O ``log_softmax`` em float64 só corre nas posições que
    preveem algum token de continuação do lote: o prompt, que nada pontua, fica de fora (os logits
    são os mesmos; as somas, as mesmas a menos de ~1e-15). Um par sozinho vai sem preenchimento nem
    máscara, exatamente como numa passagem comum.
    Ver Capítulo 8, seção 8.4.
    """
    prompts, completions = list(prompts), list(completions)
    if len(prompts) != len(completions):
        raise ValueError(f"{len(prompts)} prompts para {len(completions)} completações: as listas "
                         "devem ter o mesmo tamanho.")
    if not prompts:
        raise ValueError("Nada para pontuar: passe ao menos um par (prompt, continuação).")
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    rows = []
    for prompt, completion in zip(prompts, completions):
        p_ids = prompt_ids(tokenizer, prompt, chat)
        rows.append((p_ids + completion_ids(tokenizer, prompt, completion, chat), len(p_ids)))
    out = []
    for first in range(0, len(rows), batch_size):
        chunk = rows[first : first + batch_size]
        width = max(len(ids) for ids, _ in chunk)
        # a posição t prevê o token t + 1: a primeira que interessa é a anterior à continuação que
        # começa mais cedo no lote (a posição 0 não é prevista por ninguém)
        start = max(min(n_prompt for _, n_prompt in chunk) - 1, 0)
        input_ids = torch.full((len(chunk), width), pad, dtype=torch.long)
        attention = torch.zeros((len(chunk), width), dtype=torch.long)
        completion_mask = torch.zeros((len(chunk), width - 1 - start), dtype=torch.float64)
        for i, (ids, n_prompt) in enumerate(chunk):
            input_ids[i, : len(ids)] = torch.tensor(ids)
            attention[i, : len(ids)] = 1
            completion_mask[i, max(n_prompt - 1, 0) - start : len(ids) - 1 - start] = 1
        kwargs = {} if bool(attention.all()) else {"attention_mask": attention.to(device)}
        logits = model(input_ids=input_ids.to(device), **kwargs).logits[:, start:-1]
        logp = torch.log_softmax(logits.double().cpu(), dim=-1)
        picked = logp.gather(-1, input_ids[:, start + 1 :].unsqueeze(-1)).squeeze(-1)
        out.extend(float(v) for v in (picked * completion_mask).sum(dim=1))
    return out


def sequence_logprob(model, tokenizer, prompt, completion, chat: bool = False) -> float:
    """log p(continuação | prompt): a soma das log-probabilidades dos tokens da continuação.

    ``prompt`` é um texto, uma lista de mensagens (com ``chat=True``) ou uma lista de ids;
    ``completion`` é um texto, mensagens do assistente ou ids (ver ``completion_ids``). Uma
    passagem para frente sobre prompt + continuação; a posição ``t`` dos logits prevê o token
    ``t + 1``. Completações mais longas somam mais termos negativos: compare textos de tamanhos
    parecidos, ou normalize (``acc_norm`` divide pelo número de caracteres).
    Ver Capítulo 5, seção 5.3, e Capítulo 8, seções 8.2 e 8.4.
    """
    return sequence_logprobs(model, tokenizer, [prompt], [completion], chat=chat)[0]


def left_padded_batch(tokenizer, texts) -> dict:
    """Tokeniza ``texts`` num lote preenchido à **esquerda**, sem tokens especiais extras.

    Com o preenchimento à esquerda, a última posição de cada linha é o último token real: é dela
    que saem o próximo token gerado e o veredito do juiz. O ``padding_side`` do tokenizador volta
    ao que era.
    Ver Capítulo 7, seção 7.7, e Capítulo 8, seção 8.4.
    """
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        return tokenizer(list(texts), return_tensors="pt", padding=True, add_special_tokens=False)
    finally:
        tokenizer.padding_side = side


@torch.no_grad()
def last_token_logits(model, tokenizer, texts) -> torch.Tensor:
    """Os logits do próximo token depois de cada texto, ``[len(texts), |V|]`` em float32 na CPU,
    numa passagem em lote (preenchimento à esquerda, posições contadas só nos tokens reais).

    Ver Capítulo 5, seção 5.5.2, e Capítulo 8, seção 8.4.
    """
    batch = left_padded_batch(tokenizer, texts)
    device = next(model.parameters()).device
    mask = batch["attention_mask"]
    positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
    return model(input_ids=batch["input_ids"].to(device), attention_mask=mask.to(device),
                 position_ids=positions.to(device), logits_to_keep=1).logits[:, -1].float().cpu()


@torch.no_grad()
def token_logprobs(model, tokenizer, texts) -> list[list[float]]:
    """Para cada texto, log p(token | tokens anteriores) de cada token a partir do segundo.

    Uma passagem em lote, com preenchimento à esquerda e máscara de atenção; o primeiro token não
    tem contexto e fica de fora.
    Ver Capítulo 8, seção 8.4.3 (Min-K % prob).
    """
    texts = list(texts)
    if not texts or not all(isinstance(t, str) and t.strip() for t in texts):
        raise ValueError("Passe uma lista de textos não vazios.")
    batch = left_padded_batch(tokenizer, texts)
    device = next(model.parameters()).device
    mask = batch["attention_mask"]
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=batch["input_ids"].to(device), attention_mask=mask.to(device),
                   position_ids=positions.to(device)).logits.double().cpu()
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    target = batch["input_ids"][:, 1:]
    picked = logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    out = []
    for row, m in zip(picked, mask[:, 1:].bool() & mask[:, :-1].bool()):
        out.append([float(x) for x in row[m]])
    if any(len(r) == 0 for r in out):
        raise ValueError("Cada texto precisa de ao menos dois tokens para ter uma log p.")
    return out
