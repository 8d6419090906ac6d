"""Exercícios conferíveis do Capítulo 4 (top-k no laço de geração, penalidade de repetição e o KV cache de 7 B)."""
from __future__ import annotations

from .contexto import celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio

NOTEBOOK = "cap04_inferencia_causal"
# As células da lição que as soluções usam: o modelo, o prompt da seção 4.8, o GPT-2 e a tabela da seção 4.6
# (dc) e o cache medido na seção 4.11 (n_prompt, real). O `extra` refaz, sem a busca em feixe, o que as
# soluções 2 usam das células caras: o contexto da seção 4.12.7 (o prompt e os 20 tokens gulosos), a
# contagem de trigramas repetidos e a execução de `looping` com τ = 0,7 e p = 0,3.
_contexto = celulas_do_notebook(NOTEBOOK, (
    "35b1cfb5", "2bebc82c", "ac434ee7", "e6237020", "f8222262", "ee3e1342"), extra='''
from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

context = (tokenizer([prompt], return_tensors="pt")["input_ids"][0].tolist()
           + generate(model, tokenizer, prompt, max_new_tokens=20, greedy=True).new_ids)


def repeated_trigrams(ids):
    trigrams = [tuple(ids[i:i + 3]) for i in range(len(ids) - 2)]
    return 1 - len(set(trigrams)) / len(trigrams)


looping = ("Transformers are models that are used in games. The following models are used in games. "
           "The following models are used in games.")
looping_runs = {"τ = 0,7, p = 0,3": generate(model, tokenizer, looping, max_new_tokens=50, seed=0,
                                              stop_at_eos=False, temperature=0.7, top_p=0.3)}
''')


# ---------------------------------------------------------------- exercício 1: top-k na generate_ids
def _entradas_ex1(ns):
    p = ns["prompt"]
    # (prompt, n_new, temperature, top_k, top_p, seed): a conferência do enunciado, o top-k sozinho com τ alto,
    # top-k e top-p juntos com um núcleo pequeno (a ordem importa) e top_k = 1 (tem de dar a gulosa)
    return [(p, 20, 0.8, 20, 0.9, 3), (p, 20, 1.5, 20, 1.0, 0), (p, 20, 1.0, 10, 0.5, 0), (p, 20, 3.0, 1, 1.0, 0)]


def _pela_biblioteca(ns, k_a_mais=0, ignora_k=False):
    """A geração de `lncc_llm.sampling.generate` (a referência), ou com o corte errado de propósito."""
    def gerar(prompt, n_new=20, temperature=1.0, top_k=None, top_p=1.0, seed=0):
        from ..sampling import generate

        k = None if (ignora_k or top_k is None) else top_k + k_a_mais
        chave = ("biblioteca", id(ns["model"]), prompt, n_new, temperature, k, top_p, seed)
        return list(memorizar(chave, lambda: generate(ns["model"], ns["tokenizer"], prompt, max_new_tokens=n_new,
                                                  temperature=temperature, top_k=k, top_p=top_p,
                                                  seed=seed).new_ids))
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
    novos, cache = [], None
    with torch.no_grad():
        for _ in range(n_new):
            out = model(seq[:, -1:] if cache is not None else seq, past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            z = out.logits[0, -1].double().cpu() / temperature
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
    "cap04.ex1", "top-k na função de geração", ("generate_ids_k",),
    dicas=(
        "Copie a `generate_ids` da seção 4.12.2 e mexa só no trecho do sorteio: o resto do laço (o cache, o "
        "mesmo `rng`, um `torch.multinomial` por passo) fica igual, e é isso que faz a mesma semente dar os "
        "mesmos tokens da biblioteca.",
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


# ---------------------------------------------------------------- exercício 2: a penalidade do CTRL
def _penalidade_do_transformers(logits, context_ids, theta):
    import torch
    from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

    return RepetitionPenaltyLogitsProcessor(penalty=float(theta))(torch.tensor([list(context_ids)]),
                                                                  logits[None].clone())[0]


def _entradas_ex2(ns):
    import torch

    z = ns["z"]
    sintetico = z.clone()                       # logits de sinais conhecidos em 5 ids, dois deles repetidos
    sintetico[torch.tensor([10, 20, 30, 40, 50])] = torch.tensor([2.0, -1.0, 0.5, -3.0, 0.0], dtype=z.dtype)
    return [(z, list(ns["context"]), 1.3), (sintetico, [10, 20, 20, 40, 50, 10, 30], 1.5)]


def _sempre_divide(logits, context_ids, theta):
    vistos = sorted(set(context_ids))
    out = logits.clone()
    out[vistos] = out[vistos] / theta
    return out


def _uma_vez_por_ocorrencia(logits, context_ids, theta):
    out = logits.clone()
    for t in context_ids:
        out[t] = out[t] / theta if out[t] > 0 else out[t] * theta
    return out


def _invertida(logits, context_ids, theta):
    import torch

    vistos = sorted(set(context_ids))
    out = logits.clone()
    v = out[vistos]
    out[vistos] = torch.where(v > 0, v * theta, v / theta)
    return out


ex2 = Exercicio(
    "cap04.ex2", "a penalidade de repetição do CTRL", ("my_penalty",),
    dicas=(
        "A regra da seção 4.12.7 tem dois casos, conforme o sinal do logit, e vale uma vez para cada token que "
        "já apareceu, por mais vezes que ele se repita no contexto.",
        "`seen = torch.tensor(sorted(set(context_ids)))` dá os ids sem repetição; trabalhe numa cópia "
        "(`logits.clone()`) e mude só essas posições.",
        "Com `v = out[seen]`, `torch.where(v > 0, v / theta, v * theta)` aplica os dois casos de uma vez.",
    ),
    esperado=lambda ns: {"my_penalty": _penalidade_do_transformers},
    entradas=_entradas_ex2,
    erros_comuns=(
        ErroComum("um logit negativo foi dividido por θ, e isso o aproxima de zero: o token ficou mais provável. "
                  "Para z ≤ 0 a regra multiplica por θ.",
                  lambda ns: {"my_penalty": _sempre_divide}),
        ErroComum("um token que aparece duas vezes no contexto foi penalizado duas vezes: a regra vale uma vez por "
                  "token, por mais que ele se repita (use `set`).",
                  lambda ns: {"my_penalty": _uma_vez_por_ocorrencia}),
        ErroComum("a regra está invertida: multiplicar um logit positivo por θ > 1 deixa o token mais provável. "
                  "Positivos se dividem por θ; negativos se multiplicam.",
                  lambda ns: {"my_penalty": _invertida}),
    ),
    inicio="""
def my_penalty(logits, context_ids, theta):
    # logits: tensor [|V|]; context_ids: lista de ids (int); theta: float > 1
    return ____     # um tensor [|V|]: os logits com a regra do CTRL nos ids do contexto
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 3: o KV cache de 7 B
def _kv_referencia(config, n_tokens, bytes_per_number=2):
    """Os números de cada família, lidos pelos nomes dela, e a conta de `lncc_llm.llama_block`."""
    from ..llama_block import kv_cache_bytes

    if config.model_type == "gpt2":
        camadas, cabecas_kv, d = config.n_layer, config.n_head, config.n_embd // config.n_head
    else:                                       # família Llama (o SmolLM2 e as duas de 7 B)
        camadas, cabecas_kv = config.num_hidden_layers, config.num_key_value_heads
        d = config.hidden_size // config.num_attention_heads
    return kv_cache_bytes(camadas, cabecas_kv, d, n_tokens, bytes_per_value=bytes_per_number)


def _kv_sem_v(config, n_tokens, bytes_per_number=2):
    return _kv_referencia(config, n_tokens, bytes_per_number) // 2


def _kv_cabecas_de_consulta(config, n_tokens, bytes_per_number=2):
    cabecas = config.num_attention_heads
    return 2 * config.num_hidden_layers * cabecas * (config.hidden_size // cabecas) * n_tokens * bytes_per_number


def _configs_7b():
    from transformers import LlamaConfig

    return (LlamaConfig(num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32, hidden_size=4096),
            LlamaConfig(num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, hidden_size=4096))


def _entradas_ex3(ns):
    from transformers import GPT2Config

    mha, gqa = _configs_7b()
    # (config, n_tokens, bytes_per_number): o SmolLM2 em fp32, as duas de 7 B e o GPT-2, sem cabeças de K/V
    # próprias na configuração
    return [(ns["model"].config, 16, 4), (mha, 8192, 2), (gqa, 8192, 2), (GPT2Config(), 1024, 2)]


def _gib_7b():
    return tuple(_kv_referencia(cfg, 8192, 2) / 2**30 for cfg in _configs_7b())


def _esperado_ex3(ns):
    gib_mha, gib_gqa = _gib_7b()
    livres = 24 - 13.5
    return {"kv_cache_bytes": _kv_referencia, "gib_mha": gib_mha, "gib_gqa": gib_gqa,
            "seqs_mha": int(livres // gib_mha), "seqs_gqa": int(livres // gib_gqa)}


ex3 = Exercicio(
    "cap04.ex3", "o KV cache de duas configurações de 7 B", ("kv_cache_bytes", "gib_mha", "gib_gqa", "seqs_mha",
                                                             "seqs_gqa"),
    dicas=(
        "A conta é a da seção 4.11: o cache guarda K e V, em cada camada, para cada cabeça de K/V, d_cabeça "
        "números por token; falta só ler cada número da configuração.",
        "Os nomes no `transformers`: `num_hidden_layers`, `num_key_value_heads` e `hidden_size // "
        "num_attention_heads`. Nem toda configuração tem `num_key_value_heads` (a do GPT-2 não tem): use "
        "`getattr(config, 'num_key_value_heads', None) or config.num_attention_heads`.",
        "Monte as duas com `LlamaConfig(num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=..., "
        "hidden_size=4096)`. Um GiB são 2³⁰ bytes; depois dos pesos sobram 10,5 GiB, e só cabem sequências "
        "inteiras (`//`).",
    ),
    esperado=_esperado_ex3,
    entradas=_entradas_ex3,
    erros_comuns=(
        ErroComum("faltou o fator 2: o cache guarda K e também V.",
                  lambda ns: {"kv_cache_bytes": _kv_sem_v}),
        ErroComum("com GQA, o cache guarda só as cabeças de K/V (`num_key_value_heads`), não as de consulta.",
                  lambda ns: {"kv_cache_bytes": _kv_cabecas_de_consulta}),
        ErroComum("faltou descontar os 13,5 GiB dos pesos: só 24 − 13,5 = 10,5 GiB ficam para o cache.",
                  lambda ns: {"seqs_mha": int(24 // _gib_7b()[0]), "seqs_gqa": int(24 // _gib_7b()[1])}),
    ),
    inicio="""
def kv_cache_bytes(config, n_tokens, bytes_per_number=2):
    # camadas, cabeças de K/V e d_cabeça, lidos da config
    return ____     # os bytes do cache (int)


gib_mha = ____      # GiB de uma sequência de 8 192 tokens em 16 bits, 32 cabeças de K/V
gib_gqa = ____      # o mesmo com GQA (8 cabeças de K/V)
seqs_mha = ____     # sequências inteiras nos 24 − 13,5 GiB livres (int)
seqs_gqa = ____     # o mesmo com GQA (int)
""",
    contexto=_contexto,
)
