"""Exercícios conferíveis do Capítulo 4, segunda parte: a penalidade de repetição do CTRL (núcleo, na seção 4.13) e,
para ir além, o KV cache de 7 B. O exercício 2 (a escolha de parâmetros) é de julgamento: fica sem verificador."""
from __future__ import annotations

from .contexto import celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap04_feixe_cache"
# As células da lição que as soluções usam: o modelo, o prompt, os logits z e os 20 tokens gulosos (o
# contexto recomposto no início da parte) e o cache medido na seção 4.14 (n_prompt, real). O `extra` refaz o
# que a solução 1 usa das células caras: o contexto da seção 4.13 (o prompt e os 20 tokens gulosos), a
# contagem de trigramas repetidos e a execução de `looping` com τ = 0,7 e p = 0,3.
_contexto = celulas_do_notebook(NOTEBOOK, ("cap04b-setup", "cap04b-contexto", "ee3e1342"), extra='''
from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

context = prompt_ids["input_ids"][0].tolist() + greedy_ids


def repeated_trigrams(ids):
    trigrams = [tuple(ids[i:i + 3]) for i in range(len(ids) - 2)]
    return 1 - len(set(trigrams)) / len(trigrams)


looping = ("Transformers are models that are used in games. The following models are used in games. "
           "The following models are used in games.")
looping_runs = {"τ = 0,7, p = 0,3": generate(model, tokenizer, looping, max_new_tokens=50, seed=0,
                                              stop_at_eos=False, temperature=0.7, top_p=0.3)}
''')


# ---------------------------------------------------------------- exercício 1: a penalidade do CTRL
def _penalidade_do_transformers(logits, context_ids, theta):
    import torch
    from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

    return RepetitionPenaltyLogitsProcessor(penalty=float(theta))(torch.tensor([list(context_ids)]),
                                                                  logits[None].clone())[0]


_PROMPTS_EX1 = ("The history of the city of Rome", "My favourite recipe for a quick dinner is",
                "Machine learning is a field that")


def _entradas_ex1(ns):
    import torch

    z = ns["z"]
    sintetico = z.clone()                       # logits de sinais conhecidos em 5 ids, dois deles repetidos
    sintetico[torch.tensor([10, 20, 30, 40, 50])] = torch.tensor([2.0, -1.0, 0.5, -3.0, 0.0], dtype=z.dtype)
    g = torch.Generator().manual_seed(7)
    sorteado = torch.randn(300, generator=g) * 4           # um vocabulário pequeno, ids repetidos e o id 0
    contexto = torch.randint(0, 300, (40,), generator=g).tolist() + [0, 0, 299]
    contexto_da_licao = ns["prompt_ids"]["input_ids"][0].tolist() + list(ns["greedy_ids"])
    return [(z, contexto_da_licao, 1.3), (sintetico, [10, 20, 20, 40, 50, 10, 30], 1.5),
            (sorteado, contexto, 1.2), (sorteado, contexto[:5], 2.0)]


def _gulosa_com(penalidade, ns, prompt, theta, n_new=12):
    """O laço guloso com KV cache em que a penalidade do leitor escolhe cada token."""
    import torch

    model, tokenizer = ns["model"], ns["tokenizer"]
    device = next(model.parameters()).device
    ids = tokenizer(prompt)["input_ids"]
    novos, cache, entrada = [], None, torch.tensor([ids], device=device)
    with torch.no_grad():
        for _ in range(n_new):
            out = model(entrada, past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            z = penalidade(out.logits[0, -1].float().cpu(), ids + novos, theta)
            token = int(torch.as_tensor(z).argmax())
            novos.append(token)
            if token == tokenizer.eos_token_id:
                break
            entrada = torch.tensor([[token]], device=device)
    return novos


def _gulosa_do_transformers(ns, prompt, theta, n_new=12):
    import torch

    model, tokenizer = ns["model"], ns["tokenizer"]
    device = next(model.parameters()).device

    def calcular():
        ids = torch.tensor([tokenizer(prompt)["input_ids"]], device=device)
        with torch.no_grad():
            saida = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                   max_new_tokens=n_new, repetition_penalty=theta)
        return saida[0, ids.shape[1]:].tolist()
    return memorizar(("generate com penalidade", id(model), prompt, theta, n_new), calcular)


def _conferir_ex1(respostas, ns):
    """Saída por saída contra o `RepetitionPenaltyLogitsProcessor`; depois, a função do leitor dentro de um laço
    guloso de 12 tokens, em três prompts que a lição não mostra, contra o `model.generate(repetition_penalty=1,3)`."""
    import torch

    from .comparar import Incorreto, comparar

    casos = _entradas_ex1(ns)
    logits, contexto, theta = casos[0]
    entrada = logits.clone()
    ns["my_penalty"](entrada, list(contexto), theta)
    if not torch.equal(entrada, logits):
        raise Incorreto("a sua função mudou os logits que recebeu: na lição, eles são o `z` do prompt, usado de novo "
                        "nas células seguintes. Trabalhe numa cópia (`out = logits.clone()`) e devolva a cópia.")
    for i, ((logits, contexto, theta), obtido) in enumerate(zip(casos, respostas["my_penalty"]), start=1):
        comparar(obtido, _penalidade_do_transformers(logits, contexto, theta), rtol=1e-6, atol=1e-6,
                 nome=f"a saída de `my_penalty` na chamada de teste {i} de {len(casos)}")
    for prompt in _PROMPTS_EX1:
        certo = _gulosa_do_transformers(ns, prompt, 1.3)
        obtido = _gulosa_com(ns["my_penalty"], ns, prompt, 1.3)
        if obtido != certo:
            k = next((i for i, (a, b) in enumerate(zip(obtido, certo)) if a != b), min(len(obtido), len(certo)))
            raise Incorreto(f"com a sua penalidade (θ = 1,3), um laço guloso num prompt que a lição não mostra se "
                            f"separa do `model.generate(repetition_penalty=1.3)` no token {k + 1}: confira os dois "
                            "casos da regra e se cada id do contexto conta uma vez só.")


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


ex1 = Exercicio(
    "cap04_feixe_cache.ex1", "a penalidade de repetição do CTRL", ("my_penalty",),
    dicas=(
        "A regra da seção 4.13 tem dois casos, conforme o sinal do logit, e vale uma vez para cada token que "
        "já apareceu, por mais vezes que ele se repita no contexto.",
        "`seen = torch.tensor(sorted(set(context_ids)))` dá os ids sem repetição; trabalhe numa cópia "
        "(`logits.clone()`) e mude só essas posições.",
        "Com `v = out[seen]`, `torch.where(v > 0, v / theta, v * theta)` aplica os dois casos de uma vez.",
    ),
    esperado=lambda ns: {"my_penalty": _penalidade_do_transformers},
    conferir=_conferir_ex1,
    entradas=_entradas_ex1,
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
    proibidas=("lncc_llm.sampling.penalize_repetition",
               "transformers.generation.logits_process.RepetitionPenaltyLogitsProcessor",
               "transformers.RepetitionPenaltyLogitsProcessor"),
    tipo="nucleo",
    inicio="""
def my_penalty(logits, context_ids, theta):
    \"\"\"A penalidade de repetição do CTRL (seção 4.13). logits: tensor [|V|]; context_ids: lista de ids
    (int), o prompt e o que já foi gerado; theta: float > 1. Devolve um tensor [|V|] novo.\"\"\"
    return ____
""",
    seguir="penalize_repetition = my_penalty",
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
    "cap04_feixe_cache.ex3", "o KV cache de duas configurações de 7 B", ("kv_cache_bytes", "gib_mha", "gib_gqa", "seqs_mha",
                                                             "seqs_gqa"),
    dicas=(
        "A conta é a da seção 4.14: o cache guarda K e V, em cada camada, para cada cabeça de K/V, d_cabeça "
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
