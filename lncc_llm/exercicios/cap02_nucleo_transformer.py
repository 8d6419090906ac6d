"""Exercícios conferíveis do Capítulo 2, primeira parte: o BPE de bytes (núcleo: ``encode`` e ``decode``,
conferidos contra o ``tiktoken``), tokens repetidos e BPE de caracteres; os da atenção à mão, √d_k,
[PAD] e da contagem de parâmetros estão em ``cap02_atencao_camada``."""
from __future__ import annotations

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap02_nucleo_transformer"
# A preparação, as importações (com o MiniLM), a frase de trabalho e o corpus e a tabela do BPE.
_contexto = celulas_do_notebook(NOTEBOOK, (
    "a2b65785", "b752b9fa", "fa8ad85d", "387ce1f6", "3241cfa2", "cap02-bpe-bytes-regex-codigo",
    "cap02-bpe-bytes-treino-codigo"))


# ---------------------------------------------------------------- exercício 1 (núcleo): encode e decode
# O verificador treina as suas próprias tabelas em textos que o notebook não mostra e confere o
# encode/decode do leitor contra um ``tiktoken.Encoding`` montado com a expressão do próprio tiktoken
# (``r50k_pat_str``) e as mesmas junções.
_TREINO_EX1 = (
    "A ação da atenção não é mágica: é conta. Cada posição olha para as outras, e a função softmax "
    "transforma notas em pesos que somam um. Coração, razão, canção, sertão, mão, pão e limão. "
    "def atencao(q, k, v):\n    pesos = softmax(q @ k.T / d ** 0.5)\n    return pesos @ v\n"
    "Não há informação sem codificação; o português tem ç, ã, õ, é, í e ú em muitas palavras.")
_TEXTOS_EX1 = (
    "Coração, ação e pão: três ãs num verso só. Não há limão no sertão 🙂🙃!",
    "def média(xs):\n    return sum(xs) / len(xs)  # 2026\n\n",
    "  espaços   demais\t\tentre\n\npalavras... e fim",
    "naïve café — 東京, 3,14159 e 'aspas' don't; o português",
    "",
)


def _treinar(texto, n):
    """Um treino de BPE de bytes independente do da lição (mesma regra: o par mais frequente, o primeiro
    visto nos empates)."""
    from collections import Counter

    import regex
    from tiktoken_ext.openai_public import r50k_pat_str

    pedacos = [list(p.encode("utf-8")) for p in regex.findall(r50k_pat_str, texto)]
    merges = {}
    for novo in range(256, 256 + n):
        contagem = Counter(par for ids in pedacos for par in zip(ids, ids[1:]))
        if not contagem:
            break
        melhor = max(contagem, key=contagem.get)
        merges[melhor] = novo
        saida = []
        for ids in pedacos:
            out, i = [], 0
            while i < len(ids):
                if i + 1 < len(ids) and (ids[i], ids[i + 1]) == melhor:
                    out.append(novo)
                    i += 2
                else:
                    out.append(ids[i])
                    i += 1
            saida.append(out)
        pedacos = saida
    return merges


def _vocab(merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), novo in sorted(merges.items(), key=lambda item: item[1]):
        vocab[novo] = vocab[a] + vocab[b]
    return vocab


def _tiktoken(merges):
    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str

    return tiktoken.Encoding("bpe_do_verificador", pat_str=r50k_pat_str,
                             mergeable_ranks={b: i for i, b in _vocab(merges).items()}, special_tokens={})


_TABELAS: dict = {}


def _tabelas():
    if not _TABELAS:
        _TABELAS["grande"] = _treinar(_TREINO_EX1, 150)
        _TABELAS["pequena"] = _treinar(_TREINO_EX1, 25)
    return _TABELAS["grande"], _TABELAS["pequena"]


def _casos_ex1(ns):
    grande, pequena = _tabelas()
    codificar = [(t, grande) for t in _TEXTOS_EX1] + [(_TEXTOS_EX1[0], pequena), (_TEXTOS_EX1[1], {})]
    ref = _tiktoken(grande)
    decodificar = ([(ref.encode_ordinary(t), grande) for t in _TEXTOS_EX1[:4]]
                   + [([195, 163, 111], grande), ([], grande)])    # "ão" com o ã em dois bytes soltos
    return {"bpe_encode": codificar, "bpe_decode": decodificar}


def _encode_ref(text, merges):
    return _tiktoken(merges).encode_ordinary(text)


def _decode_ref(ids, merges):
    return _tiktoken(merges).decode(ids)


def _aplicar_errado(chunk, merges, escolha):
    while len(chunk) > 1:
        pares = [p for p in zip(chunk, chunk[1:]) if p in merges]
        if not pares:
            break
        par = escolha(pares, merges)
        out, i = [], 0
        while i < len(chunk):
            if i + 1 < len(chunk) and (chunk[i], chunk[i + 1]) == par:
                out.append(merges[par])
                i += 2
            else:
                out.append(chunk[i])
                i += 1
        chunk = out
    return chunk


def _encode_errado(text, merges, escolha=lambda pares, m: min(pares, key=m.get), dividir=True):
    import regex
    from tiktoken_ext.openai_public import r50k_pat_str

    pedacos = regex.findall(r50k_pat_str, text) if dividir else ([text] if text else [])
    return [i for p in pedacos for i in _aplicar_errado(list(p.encode("utf-8")), merges, escolha)]


ex1 = Exercicio(
    "cap02_nucleo_transformer.ex1", "o encode e o decode do BPE de bytes", ("bpe_encode", "bpe_decode"),
    dicas=(
        "`encode`: para cada pedaço de `GPT2_SPLIT.findall(text)`, comece de `list(pedaco.encode(\"utf-8\"))` "
        "e, enquanto houver pares vizinhos que estão em `merges`, junte o de **menor id** (o aprendido "
        "primeiro) com `merge_ids`. `decode`: monte os bytes de cada id a partir das junções e decodifique "
        "tudo de uma vez.",
        "O par a juntar: `min(zip(chunk, chunk[1:]), key=lambda p: merges.get(p, float(\"inf\")))`; se ele "
        "não está em `merges`, o pedaço acabou. O vocabulário: `vocab = {i: bytes([i]) for i in range(256)}` "
        "e, para cada `(a, b), novo` em `merges.items()` (estão em ordem), `vocab[novo] = vocab[a] + vocab[b]`.",
        "No `decode`, junte os bytes de **todos** os ids (`b\"\".join(...)`) e só então chame "
        "`.decode(\"utf-8\")`: um caractere como `ã` pode ter os seus dois bytes em dois tokens (se o seu "
        "`decode` levanta `UnicodeDecodeError`, é isso: ele decodificou id por id).",
    ),
    esperado=lambda ns: {"bpe_encode": _encode_ref, "bpe_decode": _decode_ref},
    entradas=_casos_ex1,
    erros_comuns=(
        ErroComum("as junções foram aplicadas da mais recente para a mais antiga (o maior id primeiro): o "
                  "`encode` aplica sempre a junção aprendida **primeiro** entre os pares presentes, na ordem "
                  "do treino.",
                  lambda ns: {"bpe_encode": lambda t, m: _encode_errado(
                      t, m, escolha=lambda pares, mm: max(pares, key=mm.get))},
                  dica="Troque `max` por `min` na escolha do par: o id menor foi aprendido antes."),
        ErroComum("o `encode` junta o primeiro par da esquerda que tem junção, e não o de menor id: a ordem "
                  "das junções importa (ela é a ordem do treino).",
                  lambda ns: {"bpe_encode": lambda t, m: _encode_errado(t, m, escolha=lambda pares, mm: pares[0])}),
        ErroComum("o texto não foi cortado com `GPT2_SPLIT` antes das junções: assim um token pode juntar o "
                  "fim de uma palavra com o espaço da seguinte, o que o GPT-2 nunca faz.",
                  lambda ns: {"bpe_encode": lambda t, m: _encode_errado(t, m, dividir=False)}),
        ErroComum("o `encode` devolveu os bytes sem nenhuma junção.",
                  lambda ns: {"bpe_encode": lambda t, m: list(t.encode("utf-8"))}),
        ErroComum("o `decode` decodificou id por id: um caractere de dois bytes dividido entre dois tokens vira "
                  "`��`. Junte os bytes de todos os ids e decodifique uma vez.",
                  lambda ns: {"bpe_decode": lambda ids, m: "".join(
                      _vocab(m)[i].decode("utf-8", errors="replace") for i in ids)}),
        ErroComum("os bytes foram lidos como latin-1: o BPE do GPT-2 trabalha com bytes UTF-8.",
                  lambda ns: {"bpe_decode": lambda ids, m: b"".join(_vocab(m)[i] for i in ids).decode("latin-1")}),
    ),
    proibidas=("tiktoken.Encoding", "tiktoken.core.Encoding", "lncc_llm.bpe_bytes.byte_bpe_encode",
               "lncc_llm.bpe_bytes.byte_bpe_decode", "lncc_llm.bpe_bytes.byte_bpe_vocab",
               "lncc_llm.tokenization.gpt2_tokenizer"),
    erros_explicados=((UnicodeDecodeError, "Um caractere de vários bytes (como `ã`, 2 bytes, ou um emoji, 4) "
                       "pode estar dividido entre dois ids: junte os bytes de todos os ids antes de decodificar."),),
    tipo="nucleo",
    inicio="""
def bpe_encode(text, merges):
    \"\"\"Texto → ids (list[int]) com a tabela `merges`, um dict (a, b) → id novo (256, 257, …).

    Corte o texto com GPT2_SPLIT; cada pedaço começa como os seus bytes UTF-8 (ids 0 a 255) e, enquanto
    houver pares vizinhos que estão em `merges`, junta o de menor id (o aprendido primeiro).
    \"\"\"
    return ____


def bpe_decode(ids, merges):
    \"\"\"ids → texto (str): os bytes de cada id, a partir dos 256 bytes e das junções, em UTF-8.\"\"\"
    return ____
""",
    seguir='check("bpe_decode(bpe_encode(s)) = s no texto do treino", '
           'bpe_decode(bpe_encode(pt_text, merges), merges), pt_text)',
    contexto=_contexto,
)


# ---------------------------------------------------------------- exercício 2: tokens repetidos
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


ex2 = Exercicio(
    "cap02_nucleo_transformer.ex2", "as duas ocorrências de teddy na última camada", ("first", "second", "cosine"),
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


# ---------------------------------------------------------------- exercício 3: "infelizmente" no corpus
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


ex3 = Exercicio(
    "cap02_nucleo_transformer.ex3", "uma palavra a mais no corpus do BPE", ("new_merges", "lost_merges", "seg_new"),
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


