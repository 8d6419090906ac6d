"""Exercícios conferíveis do Capítulo 4, primeira parte: o corte min-p (núcleo), o tamanho de um núcleo
previsto antes de medido e, para ir além, o top-k no laço de geração. O exercício 3 (a atividade do
texto-base) é de observação: fica sem verificador."""
from __future__ import annotations

from .contexto import celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap04_inferencia_causal"
# As células da lição que a solução usa: o modelo e o prompt da seção 4.8.
_contexto = celulas_do_notebook(NOTEBOOK, ("35b1cfb5", "2bebc82c", "f8222262"))


# ---------------------------------------------------------------- exercício 1 (núcleo): o corte min-p
_PROMPTS_EX1 = ("The best way to learn a new language is", "Rio de Janeiro is famous for its",
                "def add(a, b):\n    return")


def _logits_do_modelo(ns, prompt):
    import torch

    model, tokenizer = ns["model"], ns["tokenizer"]
    device = next(model.parameters()).device

    def calcular():
        with torch.no_grad():
            return model(**tokenizer(prompt, return_tensors="pt").to(device)).logits[0, -1].double().cpu()
    return memorizar(("logits do próximo token", id(model), prompt), calcular)


def _entradas_ex1(ns):
    """Logits que a lição não mostra: três prompts do SmolLM2, com e sem temperatura, e dois vetores
    sorteados (um com empate no topo, um quase plano). Cada chamada recebe uma cópia."""
    import torch

    g = torch.Generator().manual_seed(41)
    empate = torch.randn(80, generator=g, dtype=torch.float64) * 2
    empate[[5, 17]] = empate.max() + 1.0                          # dois tokens empatados no topo
    plano = torch.randn(80, generator=g, dtype=torch.float64) * 0.2
    z1, z2, z3 = (_logits_do_modelo(ns, p) for p in _PROMPTS_EX1)
    return [(z1.clone(), 0.1), (z2 / 0.7, 0.05), (z3.clone(), 0.2), (z1 / 1.5, 0.02), (empate, 0.3),
            (plano, 0.5)]


def _min_p_transformers(logits, min_p):
    """A referência: o ``MinPLogitsWarper`` do ``transformers``."""
    import torch
    from transformers.generation.logits_process import MinPLogitsWarper

    return MinPLogitsWarper(min_p=min_p)(torch.zeros(1, 1, dtype=torch.long), logits[None].clone())[0]


def _min_p_errado(tipo):
    def cortar(logits, min_p):
        import torch

        probs = torch.softmax(logits, dim=-1)
        if tipo == "absoluto":
            return logits.masked_fill(probs < min_p, float("-inf"))
        if tipo == "logits":
            return logits.masked_fill(logits < min_p * logits.max(), float("-inf"))
        cortados = probs < min_p * probs.max()
        if tipo == "zero":
            return logits.masked_fill(cortados, 0.0)
        mantidas = probs.masked_fill(cortados, 0.0)
        return mantidas / mantidas.sum() if tipo == "probabilidades" else mantidas
    return cortar


ex1 = Exercicio(
    "cap04_inferencia_causal.ex1", "o corte min-p", ("my_min_p",),
    dicas=(
        "Passe os logits pelo softmax e ache a maior probabilidade, `p_max`; o limiar é `min_p * p_max`.",
        "Ficam os tokens com probabilidade ≥ limiar (o mais provável sempre fica); os outros recebem `-inf` com "
        "`logits.masked_fill(mascara, float(\"-inf\"))`, que devolve uma cópia.",
        "Devolva os **logits** (não as probabilidades): a lição, como o `transformers`, aplica o softmax depois "
        "do corte, e `-inf` vira probabilidade 0.",
    ),
    esperado=lambda ns: {"my_min_p": _min_p_transformers},
    entradas=_entradas_ex1,
    erros_comuns=(
        ErroComum("o limiar ficou absoluto (`p ≥ min_p`): no min-p ele é relativo ao token mais provável, "
                  "`min_p × p_max`, e por isso acompanha a confiança do modelo.",
                  lambda ns: {"my_min_p": _min_p_errado("absoluto")}),
        ErroComum("o limiar foi aplicado aos logits (`z ≥ min_p × z_max`): logits não são probabilidades, podem ser "
                  "negativos, e a razão entre eles não quer dizer nada. Passe pelo softmax primeiro.",
                  lambda ns: {"my_min_p": _min_p_errado("logits")}),
        ErroComum("os tokens cortados ficaram com logit 0, que é um logit como outro qualquer (probabilidade "
                  "exp(0)/Σ, não zero): use `float(\"-inf\")`.",
                  lambda ns: {"my_min_p": _min_p_errado("zero")}),
        ErroComum("a função devolveu probabilidades: devolva os logits com `-inf` nos cortados, como o "
                  "`MinPLogitsWarper`; o softmax (e a renormalização) vem depois, no laço.",
                  lambda ns: {"my_min_p": _min_p_errado("probabilidades")}),
        ErroComum("a função devolveu probabilidades com zeros nos cortados: devolva os logits, com `-inf` nos "
                  "cortados; o softmax vem depois, no laço.",
                  lambda ns: {"my_min_p": _min_p_errado("zeros")}),
    ),
    proibidas=("transformers.generation.logits_process.MinPLogitsWarper", "transformers.MinPLogitsWarper",
               "lncc_llm.sampling.min_p_logits"),
    tipo="nucleo",
    inicio="""
def my_min_p(logits, min_p):
    \"\"\"O corte min-p (seção 4.10.3): os logits (|V|,), com -inf em todo token de probabilidade
    menor que min_p vezes a do mais provável.\"\"\"
    return ____
""",
    seguir="min_p_logits = my_min_p",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: prever antes de medir
def _entradas_ex2(ns):
    """(logits, p, τ) que a lição não mostra: dois prompts do exercício 1 e um vetor sorteado."""
    import torch

    z1, z2 = (_logits_do_modelo(ns, p) for p in _PROMPTS_EX1[:2])
    sorteado = torch.randn(200, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 2
    return [(z1.clone(), 0.6, 0.5), (z2.clone(), 0.9, 0.7), (z1.clone(), 0.3, 1.5), (sorteado, 0.75, 0.8)]


def _nucleo(multiplica=False, sem_tau=False, menos_um=False):
    """O tamanho do núcleo pela definição (sem `top_p_filter`, que o leitor não pode usar), ou um erro comum."""
    def tamanho(logits, p, tau):
        import torch

        t = 1.0 if sem_tau else (1 / tau if multiplica else tau)
        acumulada = torch.softmax(logits.double() / t, dim=-1).sort(descending=True).values.cumsum(0)
        return int((acumulada < p).sum()) + (0 if menos_um else 1)
    return tamanho


ex2 = Exercicio(
    "cap04_inferencia_causal.ex2", "prever o tamanho de um núcleo e conferi-lo", ("prediction", "nucleus_size"),
    dicas=(
        "Para a previsão: na seção 4.9, τ < 1 aumenta a razão entre o primeiro token e os outros e baixa a "
        "entropia. Uma distribuição mais concentrada precisa de mais ou de menos tokens para somar 0,6?",
        "Para o núcleo: divida os logits por τ, passe pelo softmax, ordene em ordem decrescente e acumule "
        "(`cumsum`); o núcleo é o menor prefixo cuja massa chega a p.",
        "O token que faz a massa cruzar p entra no núcleo: conte os que ficam abaixo de p e some esse um.",
    ),
    esperado=lambda ns: {"prediction": "menos", "nucleus_size": _nucleo()},
    entradas=_entradas_ex2,
    erros_comuns=(
        ErroComum("a previsão não se confirmou, e vale entender por quê: com τ = 0,5 os logits dobram, o primeiro "
                  "token ganha massa (a razão da seção 4.9 vai ao quadrado) e bastam menos tokens para somar 0,6. "
                  "Anote o que você tinha previsto e a razão, troque `prediction` para \"menos\" e confira com "
                  "nucleus_size(z, 0.6, 0.5).",
                  lambda ns: {"prediction": "mais"}),
        ErroComum("o núcleo foi contado sem a temperatura: divida os logits por τ antes do softmax.",
                  lambda ns: {"nucleus_size": _nucleo(sem_tau=True)}),
        ErroComum("faltou o token que faz a massa chegar a p: o núcleo é o menor prefixo com massa ≥ p, e o "
                  "último token contado é o que cruza p.",
                  lambda ns: {"nucleus_size": _nucleo(menos_um=True)}),
        ErroComum("a temperatura multiplicou os logits em vez de dividir: a conta é z/τ.",
                  lambda ns: {"nucleus_size": _nucleo(multiplica=True)}),
    ),
    proibidas=("lncc_llm.sampling.top_p_filter", "lncc_llm.sampling.sampling_distribution",
               "transformers.generation.logits_process.TopPLogitsWarper", "transformers.TopPLogitsWarper"),
    inicio="""
prediction = ____     # "mais" ou "menos", em minúsculas: decida antes de escrever a função


def nucleus_size(logits, p, tau):
    # quantos tokens entram no núcleo de p com a temperatura tau (um int), sem top_p_filter
    return ____
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 4: top-k na generate_ids
def _entradas_ex4(ns):
    p = ns["prompt"]
    # (prompt, n_new, temperature, top_k, top_p, seed), 4 tokens cada (o laço sem cache é caro): os controles do
    # enunciado, o top-k sozinho com τ alto,
    # top-k e top-p juntos com um núcleo pequeno (a ordem importa) e top_k = 1 (tem de dar a gulosa)
    return [(p, 4, 0.8, 20, 0.9, 3), (p, 4, 1.5, 20, 1.0, 0), (p, 4, 1.0, 10, 0.5, 0), (p, 4, 3.0, 1, 1.0, 0)]


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


ex4 = Exercicio(
    "cap04_inferencia_causal.ex4", "top-k na função de geração", ("generate_ids_k",),
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
    entradas=_entradas_ex4,
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
