"""Exercício conferível do Capítulo 4, primeira parte: o top-k no laço de geração."""
from __future__ import annotations

from .contexto import celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap04_inferencia_causal"
# As células da lição que a solução usa: o modelo e o prompt da seção 4.8.
_contexto = celulas_do_notebook(NOTEBOOK, ("35b1cfb5", "2bebc82c", "f8222262"))


# ---------------------------------------------------------------- exercício 1: top-k na generate_ids
def _entradas_ex1(ns):
    p = ns["prompt"]
    # (prompt, n_new, temperature, top_k, top_p, seed), 6 tokens cada (o laço sem cache é caro): os controles do
    # enunciado, o top-k sozinho com τ alto,
    # top-k e top-p juntos com um núcleo pequeno (a ordem importa) e top_k = 1 (tem de dar a gulosa)
    return [(p, 6, 0.8, 20, 0.9, 3), (p, 6, 1.5, 20, 1.0, 0), (p, 6, 1.0, 10, 0.5, 0), (p, 6, 3.0, 1, 1.0, 0)]


def _pela_biblioteca(ns, k_a_mais=0, ignora_k=False):
    """A geração de `lncc_llm.sampling.generate` sem cache (a referência: o mesmo laço da seção 4.11), ou com o
    corte errado de propósito."""
    def gerar(prompt, n_new=20, temperature=1.0, top_k=None, top_p=1.0, seed=0):
        from ..sampling import generate

        k = None if (ignora_k or top_k is None) else top_k + k_a_mais
        chave = ("biblioteca", id(ns["model"]), prompt, n_new, temperature, k, top_p, seed)
        return list(memorizar(chave, lambda: generate(ns["model"], ns["tokenizer"], prompt, max_new_tokens=n_new,
                                                  temperature=temperature, top_k=k, top_p=top_p,
                                                  seed=seed, use_cache=False).new_ids))
    return gerar


def _top_p_antes_do_top_k(ns):
    """O erro de ordem: o núcleo do top-p medido na distribuição inteira, e só depois o corte do top-k."""
    def gerar(prompt, n_new=20, temperature=1.0, top_k=None, top_p=1.0, seed=0):
        chave = ("p antes do k", id(ns["model"]), prompt, n_new, temperature, top_k, top_p, seed)
        return list(memorizar(chave, lambda: _laco_p_antes_do_k(ns, prompt, n_new, temperature, top_k, top_p, seed)))
    return gerar


def _laco_p_antes_do_k(ns, prompt, n_new, temperature, top_k, top_p, seed):
    import torch

    from ..sampling import top_p_filter

    model, tokenizer = ns["model"], ns["tokenizer"]
    device = next(model.parameters()).device
    rng = torch.Generator().manual_seed(seed)
    seq = torch.tensor([tokenizer(prompt)["input_ids"]], device=device)
    novos = []
    with torch.no_grad():
        for _ in range(n_new):
            z = model(seq).logits[0, -1].double().cpu() / temperature
            probs = top_p_filter(z, top_p).probs.double() if top_p < 1.0 else torch.softmax(z, dim=-1)
            if top_k is not None:
                probs = probs.masked_fill(z < torch.topk(z, top_k).values[-1], 0.0)
            token = int(torch.multinomial(probs, 1, generator=rng))
            novos.append(token)
            if token == tokenizer.eos_token_id:
                break
            seq = torch.cat([seq, torch.tensor([[token]], device=device)], dim=1)
    return novos


ex1 = Exercicio(
    "cap04_inferencia_causal.ex1", "top-k na função de geração", ("generate_ids_k",),
    dicas=(
        "Copie a `generate_ids` da seção 4.11 e mexa só no trecho do sorteio: o resto do laço (o prefixo inteiro "
        "a cada passo, o mesmo `rng`, um `torch.multinomial` por passo) fica igual, e é isso que faz a mesma "
        "semente dar os mesmos tokens da biblioteca.",
        "O corte entra depois de dividir pela temperatura e antes do softmax: ache o k-ésimo maior logit com "
        "`torch.topk(z, top_k).values[-1]` e troque por `-inf` os logits menores que ele (os empatados com ele "
        "ficam).",
        "O top-p vem depois e mede a massa do que o top-k deixou, já renormalizada pelo softmax. Teste: com "
        "`top_k=1`, a sua função tem de dar a gulosa, qualquer que seja τ.",
    ),
    esperado=lambda ns: {"generate_ids_k": _pela_biblioteca(ns)},
    entradas=_entradas_ex1,
    erros_comuns=(
        ErroComum("o `top_k` não mudou nada: a sua função dá os mesmos tokens que a geração sem corte. Confira se "
                  "o corte roda quando `top_k` não é `None`.",
                  lambda ns: {"generate_ids_k": _pela_biblioteca(ns, ignora_k=True)}),
        ErroComum("o top-p foi medido sobre a distribuição inteira: corte primeiro o top-k e aplique o top-p à "
                  "massa que sobrou, renormalizada (a ordem do `transformers`).",
                  lambda ns: {"generate_ids_k": _top_p_antes_do_top_k(ns)}),
        ErroComum("o corte deixou k + 1 tokens no sorteio: em ordem decrescente, o k-ésimo maior está no índice "
                  "k − 1 (`torch.topk(z, k).values[-1]`), não no índice k.",
                  lambda ns: {"generate_ids_k": _pela_biblioteca(ns, k_a_mais=1)}),
    ),
    inicio="""
def generate_ids_k(prompt, n_new=20, temperature=1.0, top_k=None, top_p=1.0, seed=0):
    # o laço da generate_ids, com o corte top-k entre a temperatura e o softmax
    return ____     # a lista de ids novos (int), como a generate_ids
""",
    contexto=_contexto,
)
