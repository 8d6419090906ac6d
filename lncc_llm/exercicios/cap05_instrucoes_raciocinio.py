"""Exercícios conferíveis do Capítulo 5, segunda parte: a margem do primeiro token (núcleo), o voto em 10 + 5 e,
para ir além, um validador de formato e a janela."""
from __future__ import annotations

import re

from .contexto import celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap05_instrucoes_raciocinio"
# O modelo, as 48 críticas e as respostas com o prompt de sistema padrão (seção 5.5.1), o extrator `read_sum`
# (seção 5.6; da célula, só as definições, sem as gerações) e o prompt do cofre (seção 5.7.1).
# Da seção 5.5.1, só a medida com o sistema padrão (a da tarefa não entra nos exercícios).
_contexto = celulas_do_notebook(NOTEBOOK, (
    "cap05b-setup", "cap05b-imports", "cap05b-medida", "2e4673f7", "b85fcd2c"),
    extra='system_runs = {"sistema padrão": measure("sistema padrão", TASK)}\n',
    definicoes=("2e4673f7",))


# ---------------------------------------------------------------- exercício 1 (núcleo): a margem do 1º token
_contexto_margem = celulas_do_notebook(NOTEBOOK, (
    "cap05b-setup", "cap05b-imports", "cap05b-medida", "cap05b-margem-preparo"))
_PEDIDOS_EX1 = (
    ("Classify the sentiment of this review as positive or negative.\n\nReview: {text}\n\n"
     "Reply with a single word.", None),
    ("Is this review positive or negative?\n\n{text}", "You label movie reviews. Answer in one word."),
    ("Review: {text}\nSentiment (negative or positive):", None),
)


def _conversas_ex1(ns):
    """Conversas que a lição não mostra: as 16 críticas de exemplo (a lição usa as 48 de avaliação),
    com três pedidos diferentes dos da lição, um deles com mensagem de sistema."""
    from ..icl import icl_set

    demos = [item["text"] for item in icl_set("en").demo_items]
    conversas = []
    for i, texto in enumerate(demos):
        pedido, sistema = _PEDIDOS_EX1[i % len(_PEDIDOS_EX1)]
        cabeca = [{"role": "system", "content": sistema}] if sistema else []
        conversas.append(cabeca + [{"role": "user", "content": pedido.replace("{text}", texto)}])
    return conversas


def _entradas_ex1(ns):
    return [(conversa,) for conversa in _conversas_ex1(ns)]


def _margens_de_referencia(ns, rotulos=("negative", "positive")):
    from ..output_format import first_token_margins

    chave = ("margens do 1º token", id(ns["model"]), rotulos)
    return memorizar(chave, lambda: first_token_margins(ns["model"], ns["tokenizer"], _conversas_ex1(ns),
                                                         rotulos).tolist())


def _pela_referencia(ns, transformar=lambda m: m):
    margens = dict(zip((repr(c) for c in _conversas_ex1(ns)), _margens_de_referencia(ns)))
    return lambda conversation: transformar(margens[repr(conversation)])


def _margem_errada(ns, tipo):
    import torch

    model, tokenizer = ns["model"], ns["tokenizer"]
    device = next(model.parameters()).device

    def margem(conversation):
        def calcular():
            texto = tokenizer.apply_chat_template(conversation, add_generation_prompt=tipo != "sem prompt",
                                                  tokenize=False)
            ids = tokenizer(texto, add_special_tokens=False, return_tensors="pt")["input_ids"].to(device)
            with torch.no_grad():
                logp = torch.log_softmax(model(ids).logits[0, -1].float(), dim=-1)
            palavras = (" positive", " negative") if tipo == "espaço" else ("positive", "negative")
            pos, neg = (tokenizer(w, add_special_tokens=False)["input_ids"][0] for w in palavras)
            if tipo == "probabilidades":
                return (logp[pos].exp() - logp[neg].exp()).item()
            return (logp[pos] - logp[neg]).item()
        return memorizar(("margem errada", tipo, id(model), repr(conversation)), calcular)
    return margem


ex1 = Exercicio(
    "cap05_instrucoes_raciocinio.ex1", "a margem do primeiro token", ("my_first_token_margin",),
    dicas=(
        "Monte o texto com `tokenizer.apply_chat_template(conversation, add_generation_prompt=True, "
        "tokenize=False)`: o `add_generation_prompt` abre a vez do assistente, e é o primeiro token **dela** que "
        "se quer.",
        "Tokenize com `add_special_tokens=False` (o template já pôs as marcas), rode o modelo sob "
        "`torch.no_grad()` e fique com os logits da última posição, `[0, -1]`.",
        "`torch.log_softmax` nesses logits dá log p de cada token; a margem é "
        "`logp[positive_id] - logp[negative_id]`, um `float` (`.item()`).",
    ),
    esperado=lambda ns: {"my_first_token_margin": _pela_referencia(ns)},
    entradas=_entradas_ex1,
    atol=2e-3, rtol=1e-3,
    erros_comuns=(
        ErroComum("a margem saiu com o sinal trocado: ela é log p(positive) − log p(negative), positiva quando o "
                  "modelo pende para \"positive\".",
                  lambda ns: {"my_first_token_margin": _pela_referencia(ns, lambda m: -m)}),
        ErroComum("isso é a diferença das probabilidades, não dos logaritmos: use `torch.log_softmax` (a margem em "
                  "log-probabilidade é a da seção 5.3.1, e é ela que se compara com um limiar).",
                  lambda ns: {"my_first_token_margin": _margem_errada(ns, "probabilidades")}),
        ErroComum("a margem foi lida no fim do turno do usuário: sem `add_generation_prompt=True`, o texto não "
                  "abre a vez do assistente, e o próximo token previsto não é o primeiro da resposta.",
                  lambda ns: {"my_first_token_margin": _margem_errada(ns, "sem prompt")}),
        ErroComum("os ids são os de \" positive\" e \" negative\", com espaço: a resposta do assistente começa "
                  "sem espaço, e os ids certos são `positive_id` e `negative_id`, da célula acima.",
                  lambda ns: {"my_first_token_margin": _margem_errada(ns, "espaço")}),
    ),
    proibidas=("lncc_llm.output_format.first_token_margins", "lncc_llm.prompting.label_logprob",
               "lncc_llm.prompting.score_labels", "lncc_llm.likelihood.last_token_logits",
               "lncc_llm.likelihood.sequence_logprob", "lncc_llm.likelihood.sequence_logprobs",
               "lncc_llm.likelihood.token_logprobs", "lncc_llm.sampling.generate",
               "lncc_llm.icl.label_margins", "lncc_llm.icl.calibrated_margins", "lncc_llm.beam_search.beam_search",
               "lncc_llm.beam_search.beam_tree", "lncc_llm.likelihood.masked_logprob_sums",
               "lncc_llm.alignment.batch_logprobs"),
    tipo="nucleo",
    inicio="""
def my_first_token_margin(conversation):
    \"\"\"log p(positive) − log p(negative) no primeiro token da resposta do assistente a `conversation`
    (uma lista de mensagens), numa passagem do modelo, sem gerar nada (seção 5.5.2).\"\"\"
    return ____
""",
    seguir="first_token_margin = my_first_token_margin",
    contexto=_contexto_margem,
)


# ---------------------------------------------------------------- exercício 3: um validador para uma frase
def _frase(texto):
    achado = re.fullmatch(r"\s*The review is (positive|negative)\.\s*", texto)
    return achado.group(1) if achado else None


def _comeca_com_a_frase(texto):
    achado = re.match(r"\s*The review is (positive|negative)\.", texto)
    return achado.group(1) if achado else None


def _termina_com_a_frase(texto):
    achado = re.search(r"The review is (positive|negative)\.\s*$", texto)
    return achado.group(1) if achado else None


def _sem_espacos(texto):
    achado = re.fullmatch(r"The review is (positive|negative)\.", texto)
    return achado.group(1) if achado else None


def _em_qualquer_lugar(texto):
    achado = re.findall(r"\b(positive|negative)\b", texto)
    return achado[0] if len(set(achado)) == 1 else None


def _respostas_padrao(ns):
    return ns["system_runs"]["sistema padrão"]["answers"]


def _entradas_ex3(ns):
    difíceis = ["The review is positive.", "  The review is negative. ", "The review is positive",
                "The review is positive. The reviewer loved it.", "the review is positive.",
                "The review is Positive.", "I think the review is negative.", "negative",
                "The review is positive or negative.", "Sure. The review is positive.",
                "Answer: The review is negative.", "Sure! The review is negative. Thanks."]
    return [(t,) for t in difíceis + list(_respostas_padrao(ns))]


def _validas(ns, validador):
    return sum(validador(a) is not None for a in _respostas_padrao(ns))


ex3 = Exercicio(
    "cap05_instrucoes_raciocinio.ex3", "um validador para uma frase", ("sentence_label", "n_valid"),
    dicas=(
        "O formato pedido é uma frase exata: \"The review is positive.\" ou \"The review is negative.\", com espaços "
        "em volta tolerados e nada mais, nem antes nem depois.",
        "`re.fullmatch(r\"\\s*The review is (positive|negative)\\.\\s*\", text)` só casa se o texto inteiro for a "
        "frase; o rótulo fica em `.group(1)`, e sem casamento a função devolve `None`.",
        "`n_valid` conta as respostas de `system_runs[\"sistema padrão\"][\"answers\"]` (seção 5.5.1) em que "
        "`sentence_label` não devolve `None`.",
    ),
    esperado=lambda ns: {"sentence_label": _frase, "n_valid": _validas(ns, _frase)},
    entradas=_entradas_ex3,
    erros_comuns=(
        ErroComum("o validador aceitou uma resposta que continua depois da frase (\"The review is positive. The "
                  "reviewer…\"): o formato pedido é a frase e nada mais; use `re.fullmatch`, não `re.match`.",
                  lambda ns: {"sentence_label": _comeca_com_a_frase},
                  dica="`re.match` só ancora no começo; `re.fullmatch` exige que o texto inteiro seja a frase."),
        ErroComum("o validador aceitou uma resposta com algo antes da frase (\"Sure. The review is positive.\"): "
                  "a âncora do fim (`$`) não basta; o formato pedido é a frase e nada mais, dos dois lados.",
                  lambda ns: {"sentence_label": _termina_com_a_frase},
                  dica="Ancore nos dois lados: `re.fullmatch` (ou `^` no começo e `$` no fim) com espaços "
                       "opcionais `\\s*` em volta da frase."),
        ErroComum("isso lê o rótulo onde ele estiver, como o `parse_label`: mede o acerto, não o formato. O "
                  "validador só aceita a frase exata.",
                  lambda ns: {"sentence_label": _em_qualquer_lugar}),
        ErroComum("o validador recusou a frase certa com espaços em volta (\"  The review is negative. \"): o "
                  "formato tolera espaços e quebras de linha antes e depois da frase, e nada mais.",
                  lambda ns: {"sentence_label": _sem_espacos},
                  dica="Ponha `\\s*` no começo e no fim do padrão do `re.fullmatch`."),
    ),
    inicio="""
def sentence_label(text):
    return ____     # "positive" ou "negative" se o texto for exatamente a frase pedida; senão None


n_valid = ____      # quantas das 48 respostas com o sistema padrão (seção 5.5.1) passam no validador (int)
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: o voto em 10 + 5
def _cadeias(ns):
    from ..sampling import sample_many

    pergunta = "What is 10 + 5? Think step by step, then give the final answer."
    return memorizar(("cadeias", id(ns["model"])), lambda: sample_many(
        ns["model"], ns["tokenizer"], pergunta, n=10, max_new_tokens=32, temperature=0.7, top_p=0.9, seed=0,
        chat=True))


def _ler_soma(texto, a, b):
    """O extrator da seção 5.6 pela cópia testada (não pelo `read_sum` do leitor, que ele pode ter mudado)."""
    from ..prompting import read_sum

    return read_sum(texto, a, b)


def _esperado_ex2(ns):
    from ..prompting import majority_vote

    respostas = [_ler_soma(s, 10, 5) for s in _cadeias(ns)]
    return {"samples": list(_cadeias(ns)), "answers": respostas, "vote_label": majority_vote(respostas).label,
            "wrong_distinct": len({r for r in respostas if r is not None and r != 15})}


def _primeiro_numero(texto):
    achado = re.search(r"-?\d+", texto.replace(",", ""))
    return int(achado.group()) if achado else None


ex2 = Exercicio(
    "cap05_instrucoes_raciocinio.ex2", "a autoconsistência em 10 + 5",
    ("samples", "answers", "vote_label", "wrong_distinct"),
    dicas=(
        "É a receita da seção 5.6 com outra conta: troque 27 + 58 por 10 + 5 na pergunta passo a passo e nos argumentos de "
        "`read_sum` (a função fica como está), com cadeias de até 32 tokens.",
        "`sample_many(model, tokenizer, question, n=10, max_new_tokens=32, temperature=0.7, top_p=0.9, seed=0, "
        "chat=True)` sorteia as 10 cadeias num lote só; `read_sum(s, 10, 5)` lê cada uma.",
        "`majority_vote(answers)` faz o voto: o vencedor está em `.label`, e quantas respostas valeram, em "
        "`.valid`.",
    ),
    esperado=_esperado_ex2,
    erros_comuns=(
        ErroComum("o extrator ainda procura a conta 27 + 58: passe os números desta pergunta, "
                  "`read_sum(texto, 10, 5)`.",
                  lambda ns: {"answers": [_ler_soma(s, 27, 58) for s in _cadeias(ns)]}),
        ErroComum("esse extrator lê o primeiro número do texto, que é o eco do enunciado: use `read_sum`, que só "
                  "aceita a resposta declarada ou o resultado escrito logo depois da conta.",
                  lambda ns: {"answers": [_primeiro_numero(s) for s in _cadeias(ns)]}),
    ),
    atalhos=(
        ErroComum("`samples` não são as 10 cadeias que o modelo sorteia com essa receita (semente 0): gere-as "
                  "com `sample_many`, e as respostas e o voto saem delas; digitar `[15] * 10` não mede nada.",
                  lambda ns: {"samples": ["15"] * 10, "answers": [15] * 10, "vote_label": 15, "wrong_distinct": 0}),
    ),
    inicio="""
samples = ____      # as 10 cadeias sorteadas (uma lista de 10 textos, de sample_many)
answers = ____      # as 10 respostas lidas por read_sum (int, ou None quando não há resposta)
vote_label = ____   # o vencedor do voto da maioria (o .label de majority_vote)
wrong_distinct = ____   # quantas respostas erradas DIFERENTES as cadeias deram (None não conta; int)
""",
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 4: a janela no limite
def _sufixo_comum(ns):
    from ..prompting import truncate_ids

    a, b = ns["ids_with"], ns["ids_without"]
    return max(w for w in range(1, min(len(a), len(b)) + 1) if truncate_ids(a, w) == truncate_ids(b, w))


def _prefixo_comum(ns):
    a, b = ns["ids_with"], ns["ids_without"]
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _sufixo_em_caracteres(ns):
    a, b = ns["with_fact"], ns["without_fact"]
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


ex4 = Exercicio(
    "cap05_instrucoes_raciocinio.ex4", "até onde a janela não vê o fato", ("common",),
    dicas=(
        "Enquanto a janela só guarda o trecho final que os dois prompts têm em comum, os dois cortes são a mesma "
        "lista de ids, e os logits também, qualquer que seja o tamanho.",
        "Compare os finais das listas: `ids_with[-w:] == ids_without[-w:]` para w = 1, 2, …, e fique com o maior w "
        "em que a igualdade ainda vale.",
        "Com esse número, pontue `label_logprob(model, tokenizer, truncate_ids(ids_with, w), \" 4821\")` para "
        "alguns w acima dele e veja a partir de quando o número fica provável.",
    ),
    esperado=lambda ns: {"common": _sufixo_comum(ns)},
    erros_comuns=(
        ErroComum("esse é o primeiro tamanho em que os dois prompts já diferem; pede-se o maior em que eles ainda "
                  "são os mesmos ids.",
                  lambda ns: {"common": _sufixo_comum(ns) + 1}),
        ErroComum("isso mede o começo comum dos dois prompts; a janela guarda o fim (`truncate_ids` corta o "
                  "início), então compare os finais.",
                  lambda ns: {"common": _prefixo_comum(ns)}),
        ErroComum("isso conta caracteres; a janela se mede em tokens: compare as listas de ids, `ids_with` e "
                  "`ids_without`.",
                  lambda ns: {"common": _sufixo_em_caracteres(ns)}),
    ),
    inicio="""
common = ____       # o maior tamanho de janela (em tokens) em que os dois prompts ficam com os mesmos ids (int)
""",
    contexto=_contexto,
)
