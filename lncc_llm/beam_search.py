"""Busca em feixe (*beam search*) escrita à vista, para comparar com
``model.generate(num_beams=…)``.

A cada passo, cada um dos ``num_beams`` feixes vivos propõe todos os tokens do vocabulário; a
pontuação de uma continuação é a soma das log-probabilidades dos seus tokens. Ficam as
``2 · num_beams`` melhores continuações: as que terminam (no EOS ou no último passo) vão para a
lista de hipóteses prontas, com a pontuação dividida pelo comprimento gerado elevado a
``length_penalty``; as outras, até ``num_beams``, continuam. O resultado é a melhor hipótese pronta.

Os detalhes seguem o ``transformers`` (``GenerationMixin._beam_search``): as ``2 · num_beams``
candidatas, só as ``num_beams`` primeiras podendo entrar na lista de prontas, e a parada antecipada
quando a melhor pontuação viva, normalizada pelo comprimento atual, já não supera a pior pronta.

Ver Capítulo 4, seção 4.12.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .sampling import context_window, encode_prompt


@dataclass
class BeamResult:
    """O que ``beam_search`` devolve.

    ``new_ids`` e ``text``: a melhor hipótese (sem o prompt); ``score``: a soma das
    log-probabilidades dos tokens dela dividida por ``len ** length_penalty``; ``logprob``: a soma
    pura; ``finished``: todas as hipóteses prontas guardadas, ``(pontuação, ids novos)``, da melhor
    para a pior.
    Ver Capítulo 4, seção 4.12.
    """

    new_ids: list[int]
    text: str
    score: float
    logprob: float
    prompt_ids: list[int]
    finished: list[tuple[float, list[int]]] = field(default_factory=list)


@torch.no_grad()
def beam_search(model, tokenizer, prompt, num_beams: int = 4, max_new_tokens: int = 20,
                length_penalty: float = 1.0, chat: bool = False) -> BeamResult:
    """Busca em feixe com ``num_beams`` feixes; os mesmos tokens de
    ``model.generate(num_beams=num_beams, do_sample=False, length_penalty=length_penalty)``.

    Cada passo roda o modelo sobre os feixes vivos inteiros (sem *KV cache*: mais lento, mais fácil
    de ler). Com ``num_beams=1`` é a decodificação gulosa.
    Ver Capítulo 4, seção 4.12.
    """
    if isinstance(num_beams, bool) or not isinstance(num_beams, int) or num_beams < 1:
        raise ValueError(f"num_beams deve ser um inteiro ≥ 1; recebi {num_beams!r}.")
    if (isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int)
            or max_new_tokens < 1):
        raise ValueError(f"max_new_tokens deve ser um inteiro ≥ 1; recebi {max_new_tokens!r}.")
    prompt_ids = encode_prompt(tokenizer, prompt, chat)
    if len(prompt_ids) + max_new_tokens > context_window(model):
        raise ValueError(f"O prompt ({len(prompt_ids)} tokens) mais {max_new_tokens} novos não "
                         "cabe na janela do modelo; encurte um dos dois.")
    eos = tokenizer.eos_token_id
    device = next(model.parameters()).device

    running = [(list(prompt_ids), 0.0)]      # (ids, soma das log-probabilidades), do melhor ao pior
    finished: list[tuple[float, list[int], float]] = []   # (pontuação, ids, soma), da melhor à pior
    can_improve = True
    for step in range(1, max_new_tokens + 1):
        batch = torch.tensor([ids for ids, _ in running], device=device)
        log_probs = torch.log_softmax(model(input_ids=batch).logits[:, -1].float(), dim=-1).cpu()
        totals = torch.tensor([s for _, s in running], dtype=torch.float32)[:, None] + log_probs
        vocab = totals.shape[1]
        best = torch.topk(totals.flatten(), k=min(2 * num_beams, totals.numel()))

        next_running = []
        for rank, (total, flat) in enumerate(zip(best.values.tolist(), best.indices.tolist())):
            beam, token = divmod(flat, vocab)
            ids = running[beam][0] + [token]
            ends = token == eos or step == max_new_tokens
            if ends:
                if rank < num_beams and can_improve:       # só as num_beams primeiras entram
                    finished.append((total / step**length_penalty, ids, total))
            elif len(next_running) < num_beams:
                next_running.append((ids, total))
        finished = sorted(finished, key=lambda h: h[0], reverse=True)[:num_beams]
        running = next_running
        if step == max_new_tokens or not running:
            break
        # parada antecipada: com num_beams hipóteses prontas, a melhor viva ainda pode superá-las?
        if can_improve and len(finished) == num_beams:
            can_improve = running[0][1] / step**length_penalty > finished[-1][0]
        if not can_improve:
            break

    score, ids, logprob = finished[0]
    new_ids = ids[len(prompt_ids):]
    return BeamResult(
        new_ids=new_ids,
        text=tokenizer.decode(new_ids, skip_special_tokens=True),
        score=score,
        logprob=logprob,
        prompt_ids=list(prompt_ids),
        finished=[(s, i[len(prompt_ids):]) for s, i, _ in finished],
    )


@dataclass
class BeamNode:
    """Um candidato da árvore de ``beam_tree``: o feixe vivo de onde ele sai (``parent``, a posição
    desse feixe entre os mantidos do passo anterior, do mais provável ao menos; 0 no primeiro
    passo), o token, a soma dos log p até ele e a posição dele entre os mantidos do passo
    (``rank``; ``None`` se foi podado).
    Ver Capítulo 4, seção 4.12.
    """

    parent: int
    token: str
    total: float
    rank: int | None


@torch.no_grad()
def beam_tree(model, tokenizer, prompt, num_beams: int = 2, steps: int = 3) -> list[list[BeamNode]]:
    """Os primeiros ``steps`` passos de uma busca em feixe, candidato a candidato, para desenhar.

    A cada passo, cada feixe vivo propõe os seus ``num_beams`` tokens mais prováveis (os melhores
    ``num_beams`` de todo o passo estão sempre entre eles), e ficam os ``num_beams`` de maior soma
    dos log p. Devolve uma lista por passo com os candidatos (``BeamNode``), em ordem de feixe de
    origem e, dentro dele, de log p. Sem EOS nem parada antecipada: é o começo da busca de
    ``beam_search``.
    Ver Capítulo 4, seção 4.12.
    """
    if isinstance(num_beams, bool) or not isinstance(num_beams, int) or num_beams < 1:
        raise ValueError(f"num_beams deve ser um inteiro ≥ 1; recebi {num_beams!r}.")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 8:
        raise ValueError("steps deve ser um inteiro entre 1 e 8 (a árvore cresce depressa); "
                         f"recebi {steps!r}.")
    device = next(model.parameters()).device
    alive = [(list(encode_prompt(tokenizer, prompt, False)), 0.0)]     # do mais provável ao menos
    tree = []
    for _ in range(steps):
        batch = torch.tensor([ids for ids, _ in alive], device=device)
        logits = model(input_ids=batch).logits[:, -1]
        log_probs = torch.log_softmax(logits.float(), dim=-1).cpu()
        candidates = []                                       # (feixe de origem, token, soma)
        for parent, (_, total) in enumerate(alive):
            top = torch.topk(log_probs[parent], num_beams)
            candidates += [(parent, token, total + lp)
                           for lp, token in zip(top.values.tolist(), top.indices.tolist())]
        ranked = sorted(range(len(candidates)), key=lambda i: -candidates[i][2])[:num_beams]
        rank_of = {i: r for r, i in enumerate(ranked)}
        tree.append([BeamNode(parent, tokenizer.decode([token]), total, rank_of.get(i))
                     for i, (parent, token, total) in enumerate(candidates)])
        alive = [(alive[candidates[i][0]][0] + [candidates[i][1]], candidates[i][2])
                 for i in ranked]
    return tree
