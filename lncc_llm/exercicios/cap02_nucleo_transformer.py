"""Exercícios conferíveis do Capítulo 2, primeira parte (tokens repetidos e BPE); os da atenção à mão,
√d_k, [PAD] e da contagem de parâmetros estão em ``cap02_atencao_camada``."""
from __future__ import annotations

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap02_nucleo_transformer"
# A preparação, as importações (com o MiniLM), a frase de trabalho e o corpus e a tabela do BPE.
_contexto = celulas_do_notebook(NOTEBOOK, (
    "a2b65785", "b752b9fa", "fa8ad85d", "387ce1f6", "3241cfa2"))


# ---------------------------------------------------------------- exercício 1: tokens repetidos
_FRASE_EX1 = "The teddy bear likes the teddy."


def _teddy(ns, camada=-1):
    """As duas posições de `teddy` e o cosseno entre elas em ``hidden_states[camada]`` (em float64)."""
    import torch

    tokenizer, model = ns["tokenizer"], ns["model"]
    enc = tokenizer(_FRASE_EX1, return_tensors="pt").to(ns["device"])
    alvo = tokenizer.convert_tokens_to_ids("teddy")
    i, j = [p for p, t in enumerate(enc["input_ids"][0].tolist()) if t == alvo]
    with torch.no_grad():
        h = model(**enc, output_hidden_states=True).hidden_states[camada][0].double()
    return i, j, float(h[i] @ h[j] / (h[i].norm() * h[j].norm()))


def _esperado_ex1(ns):
    i, j, cos = _teddy(ns)
    return {"first": i, "second": j, "cosine": cos}


ex1 = Exercicio(
    "cap02_nucleo_transformer.ex1", "as duas ocorrências de teddy na última camada", ("first", "second", "cosine"),
    dicas=(
        "Tokenize a frase nova com `tokenizer(sentence, return_tensors=\"pt\").to(device)` e liste os tokens com "
        "`tokenizer.convert_ids_to_tokens`: as posições pedidas são índices dessa lista, a mesma que o "
        "modelo lê.",
        "Rode `model(**enc_ex, output_hidden_states=True)`; a última camada é `last_hidden_state`, com forma "
        "(1, n, 384), e a linha de cada `teddy` é o seu vetor contextual.",
        "`torch.nn.functional.cosine_similarity(u, v, dim=0)` dá o cosseno entre dois vetores de 384 números; "
        "guarde-o como float com `.item()`.",
    ),
    esperado=_esperado_ex1,
    erros_comuns=(
        ErroComum("essas posições não contam o `[CLS]`: o modelo lê `[CLS]` na posição 0, e as posições pedidas "
                  "são índices de `input_ids`.",
                  lambda ns: {"first": _teddy(ns)[0] - 1, "second": _teddy(ns)[1] - 1}),
        ErroComum("esse cosseno é o das linhas de E, que é 1 para o mesmo token: o pedido é o dos vetores da "
                  "última camada (`last_hidden_state`).",
                  lambda ns: {"cosine": 1.0}),
        ErroComum("esse é o cosseno na entrada da camada 0 (`hidden_states[0]`): o pedido é o da última camada, "
                  "depois que a atenção misturou o contexto.",
                  lambda ns: {"cosine": _teddy(ns, camada=0)[2]}),
    ),
    inicio="""
sentence = "The teddy bear likes the teddy."   # a frase do enunciado
first = ____        # posição (int) da 1ª ocorrência de teddy nos input_ids
second = ____       # posição (int) da 2ª ocorrência
cosine = ____       # cosseno (float) entre os vetores das duas na última camada
""",
    contexto=_contexto, rtol=1e-3, atol=1e-6,
)


# ---------------------------------------------------------------- exercício 2: "infelizmente" no corpus
def _aplicar(palavra, juncoes):
    simbolos = list(palavra)
    for a, b in juncoes:
        i, saida = 0, []
        while i < len(simbolos):
            if simbolos[i:i + 2] == [a, b]:
                saida.append(a + b)
                i += 2
            else:
                saida.append(simbolos[i])
                i += 1
        simbolos = saida
    return simbolos


def _bpe_ex5(ns):
    """As tabelas do ``BpeTrainer`` (a biblioteca), antes e depois de "infelizmente": 10."""
    from ..bpe import bpe_corpus, library_bpe_merges

    corpus = bpe_corpus()                   # o da lição, mesmo que o leitor tenha mudado o `corpus` dele
    antiga = library_bpe_merges(corpus, 12)
    nova = library_bpe_merges({**corpus, "infelizmente": 10}, 12)
    def texto(pares):
        return [f"{a} + {b}" for a, b in pares]

    return {
        "new_merges": texto(p for p in nova if p not in antiga),
        "lost_merges": texto(p for p in antiga if p not in nova),
        "seg_new": _aplicar("infelizmente", nova),
        "seg_old": _aplicar("infelizmente", antiga),
    }


ex2 = Exercicio(
    "cap02_nucleo_transformer.ex2", "uma palavra a mais no corpus do BPE", ("new_merges", "lost_merges", "seg_new"),
    dicas=(
        "Monte o corpus maior com `{**corpus, \"infelizmente\": 10}` e aprenda de novo 12 junções com "
        "`learn_bpe`, como na seção 2.2.",
        "Compare as listas `.merges` das duas tabelas (pares `(a, b)`): uma junção nova está na tabela nova e "
        "não na antiga; uma perdida, o contrário. Escreva cada par como o texto `f\"{a} + {b}\"`.",
        "`segment(\"infelizmente\", tabela.merges)` segmenta com uma tabela; a pedida é a nova. Confira as 12 "
        "junções com `library_bpe_merges(corpus_maior, 12)`.",
    ),
    esperado=_bpe_ex5,
    erros_comuns=(
        ErroComum("a tabela não mudou: ela foi aprendida de novo no corpus antigo; passe a `learn_bpe` o corpus "
                  "com \"infelizmente\".",
                  lambda ns: {"new_merges": [], "lost_merges": []}),
        ErroComum("as listas estão trocadas: as novas estão na tabela nova e não na antiga; as perdidas, o "
                  "contrário.",
                  lambda ns: {"new_merges": _bpe_ex5(ns)["lost_merges"], "lost_merges": _bpe_ex5(ns)["new_merges"]}),
        ErroComum("essa é a segmentação com a tabela antiga (`table.merges`): segmente com a tabela nova.",
                  lambda ns: {"seg_new": _bpe_ex5(ns)["seg_old"]}),
    ),
    inicio="""
new_merges = ____   # junções da tabela nova que não estão na antiga, na ordem da nova, como textos "a + b"
lost_merges = ____  # junções da tabela antiga que saíram, na ordem da antiga, como textos "a + b"
seg_new = ____      # a segmentação de "infelizmente" com a tabela nova: lista de textos
""",
    contexto=_contexto,
)


