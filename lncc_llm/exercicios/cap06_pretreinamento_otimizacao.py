"""Exercícios conferíveis do Capítulo 6, primeira parte: o quantizador de 4 bits por blocos (núcleo) e a
quantização dupla refeita à mão.

O exercício 3 (outro texto) fica sem verificador: o parágrafo é do leitor, e a resposta é a comparação. O
exercício da placa de vídeo está na segunda parte (``cap06_velocidade_memoria``).
"""
from __future__ import annotations

from .comparar import Incorreto, comparar
from .contexto import celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap06_pretreinamento_otimizacao"
_CONFIGURACAO = ("c970a1af", "e0eab8a1")          # setup_notebook e as importações da seção 6.2
MIB = 2**20
_PROIBIDAS_4BIT = ("bitsandbytes.functional.quantize_4bit", "bitsandbytes.functional.dequantize_4bit",
                   "bitsandbytes.functional.quantize_nf4", "bitsandbytes.functional.quantize_fp4",
                   "bitsandbytes.functional.dequantize_nf4", "bitsandbytes.functional.dequantize_fp4",
                   "bitsandbytes.nn.Params4bit", "torch.ops.bitsandbytes.quantize_4bit",
                   "torch.ops.bitsandbytes.dequantize_4bit", "lncc_llm.quant4bit.fake_quantize_4bit")


# ---------------------------------------------------------------- exercício 1 (núcleo): o quantizador
def _pesos_do_modelo():
    """Pesos do fp32 que a lição não mostra (a lição quantiza só a linha 0 de q_proj na camada 0)."""
    from ..quantization import load_decoder_quantized

    modelo, _ = load_decoder_quantized("fp32")       # em cache: o mesmo objeto que o notebook usa
    camadas = modelo.model.layers
    return {"v_proj 7": camadas[7].self_attn.v_proj.weight.detach()[:48].clone(),
            "down_proj 15": camadas[15].mlp.down_proj.weight.detach()[:6].clone(),
            "k_proj 3": camadas[3].self_attn.k_proj.weight.detach()[5:37].clone(),
            "gate_proj 26": camadas[26].mlp.gate_proj.weight.detach()[100:116].clone()}


def _tabela(tipo):
    import bitsandbytes as bnb

    return bnb.functional.get_4bit_type(tipo, device="cpu").float()


def _entradas_ex1(ns):
    """Quatro matrizes de pesos do SmolLM2 que a lição não mostra, em NF4 e em FP4, com blocos de 64 e de
    128, e uma matriz sorteada de caudas pesadas (t de Student). Cada chamada recebe uma cópia."""
    import torch

    w = memorizar(("pesos do cap06 ex1",), _pesos_do_modelo)
    g = torch.Generator().manual_seed(61)
    caudas = 0.05 * torch.randn(12, 128, generator=g) / torch.randn(12, 128, 4, generator=g).pow(2).mean(-1).sqrt()
    return [(w["v_proj 7"].clone(), _tabela("nf4")), (w["down_proj 15"].clone(), _tabela("fp4")),
            (w["k_proj 3"].clone(), _tabela("nf4"), 128), (w["gate_proj 26"].clone(), _tabela("fp4"), 128),
            (caudas, _tabela("nf4"))]


def _bnb_4bit(w, levels, blocksize=64):
    """A referência: ``quantize_4bit`` e ``dequantize_4bit`` do bitsandbytes, com o tipo da tabela."""
    import bitsandbytes as bnb
    import torch

    tipo = "nf4" if torch.equal(levels.sort().values, _tabela("nf4").sort().values) else "fp4"
    # achatado: os blocos são de pesos seguidos de qualquer jeito, e a dequantize_4bit da CPU erra com blocos
    # de 128 quando a linha da matriz não é múltipla deles (576 = 4,5 × 128)
    q, estado = bnb.functional.quantize_4bit(w.float().reshape(-1).contiguous(), blocksize=blocksize, quant_type=tipo)
    return bnb.functional.dequantize_4bit(q, estado).reshape(w.shape)


def _conferir_ex1(respostas, ns):
    """Cada peso reconstruído tem de ser um nível da tabela vezes o ``absmax`` do seu bloco e ficar tão perto do
    peso quanto o do bitsandbytes: num empate exato entre dois níveis (os pesos deste modelo vêm de uma grade,
    e há empates), vale qualquer um dos dois."""
    import torch

    casos = _entradas_ex1(ns)
    for i, (caso, obtido) in enumerate(zip(casos, respostas["my_quantize_4bit"]), start=1):
        w, levels, blocksize = (*caso, 64)[:3]
        certo = _bnb_4bit(w, levels, blocksize)
        comparar(obtido, certo, rtol=10.0, atol=10.0,                # aqui, só o formato e o tipo
                 nome=f"a saída de `my_quantize_4bit` na chamada de teste {i} de {len(casos)}")
        obtido = torch.as_tensor(obtido).float().reshape(-1, blocksize)
        blocos = w.float().reshape(-1, blocksize)
        absmax = blocos.abs().amax(dim=1, keepdim=True)
        nivel = ((obtido / absmax)[..., None] - levels.float()).abs().min(dim=-1).values
        if (nivel > 1e-5).any():
            raise Incorreto(f"na chamada de teste {i} de {len(casos)}, {int((nivel > 1e-5).sum())} pesos "
                            "reconstruídos não são um nível da tabela vezes o `absmax` do seu bloco: confira os "
                            "blocos (pesos seguidos, `w.reshape(-1, blocksize)`) e a volta, nível × absmax.")
        longe = (obtido - blocos).abs() > (certo.reshape(-1, blocksize) - blocos).abs() + 1e-6 * absmax
        if longe.any():
            raise Incorreto(f"na chamada de teste {i} de {len(casos)}, {int(longe.sum())} de {longe.numel()} pesos "
                            "não foram para o nível **mais próximo**: ache o índice com "
                            "`(x[..., None] - levels).abs().argmin(dim=-1)`, com x o peso dividido pelo absmax.")


def _quantizador_errado(tipo):
    def quantizar(w, levels, blocksize=64):
        import torch

        if tipo == "colunas":                        # blocos descendo pelas colunas, não pesos seguidos
            return _quantizador_errado("certo")(w.T.contiguous(), levels, blocksize).T
        if tipo == "linha":                          # um absmax por linha inteira
            return _quantizador_errado("certo")(w, levels, w.shape[-1])
        blocos = w.float().reshape(-1, blocksize)
        absmax = blocos.amax(dim=1, keepdim=True) if tipo == "sem abs" else blocos.abs().amax(dim=1, keepdim=True)
        niveis = torch.linspace(-1, 1, 16) if tipo == "uniforme" else levels.float()
        indice = ((blocos / absmax)[..., None] - niveis).abs().argmin(dim=-1)
        if tipo == "sem volta":
            return niveis[indice].reshape(w.shape)
        return (niveis[indice] * absmax).reshape(w.shape)
    return quantizar


ex1 = Exercicio(
    "cap06_pretreinamento_otimizacao.ex1", "o quantizador de 4 bits por blocos", ("my_quantize_4bit",),
    dicas=(
        "Leia os pesos em ordem e em blocos seguidos: `w.reshape(-1, blocksize)` dá uma linha por bloco. O "
        "`absmax` de cada bloco é `blocos.abs().amax(dim=1, keepdim=True)`, com o `abs` (um bloco cujo maior "
        "peso em módulo é negativo também conta).",
        "Divida cada bloco pelo seu `absmax` (os pesos vão para [−1, 1]) e, para cada valor, ache o índice "
        "do nível mais próximo: `(x[..., None] - levels).abs().argmin(dim=-1)` compara cada valor com os 16 "
        "níveis de uma vez.",
        "A volta é `levels[indice] * absmax`; termine com `.reshape(w.shape)`, para devolver a matriz no "
        "formato em que ela chegou.",
    ),
    esperado=lambda ns: {"my_quantize_4bit": _bnb_4bit},
    conferir=_conferir_ex1,
    entradas=_entradas_ex1,
    erros_comuns=(
        ErroComum("o `absmax` ficou por linha inteira: o bitsandbytes usa um por **bloco** de `blocksize` "
                  "pesos seguidos (64 por padrão), e é isso que os 4,5 bits por peso da tabela pagam.",
                  lambda ns: {"my_quantize_4bit": _quantizador_errado("linha")}),
        ErroComum("os blocos desceram pelas colunas: o bitsandbytes lê a matriz em ordem (linha após linha, "
                  "`w.reshape(-1, blocksize)`), sem transpor.",
                  lambda ns: {"my_quantize_4bit": _quantizador_errado("colunas")}),
        ErroComum("o `absmax` saiu sem o `abs`: um bloco cujo maior peso em módulo é negativo precisa do "
                  "`abs()` antes do `amax`, para todos os pesos caírem em [−1, 1].",
                  lambda ns: {"my_quantize_4bit": _quantizador_errado("sem abs")}),
        ErroComum("a grade ficou uniforme (16 pontos igualmente espaçados): use a tabela `levels` que a função "
                  "recebe, a do NF4 ou a do FP4.",
                  lambda ns: {"my_quantize_4bit": _quantizador_errado("uniforme")}),
        ErroComum("a função devolveu os níveis, em [−1, 1]: falta a volta, `levels[indice] * absmax`.",
                  lambda ns: {"my_quantize_4bit": _quantizador_errado("sem volta")}),
    ),
    proibidas=_PROIBIDAS_4BIT,
    tipo="nucleo",
    inicio="""
def my_quantize_4bit(w, levels, blocksize=64):
    \"\"\"Quantiza w em 4 bits por blocos (seção 6.5) e devolve os pesos reconstruídos. w: float32, de
    qualquer formato, com w.numel() múltiplo de blocksize; levels: (16,) float32 em [-1, 1]. Devolve um
    tensor float32 do formato de w.\"\"\"
    # 1. os pesos de w em ordem, em blocos de `blocksize` seguidos; 2. o maior |peso| de cada bloco (absmax);
    # 3. o índice do nível de `levels` mais próximo de cada peso dividido pelo absmax; 4. nível × absmax
    return ____
""",
    seguir="fake_quantize_4bit = my_quantize_4bit",
    # o fp32 da seção 6.3, o nf4 e o fp4 da 6.5 e a tabela NF4 (a da célula da lição, lida do bitsandbytes)
    contexto=celulas_do_notebook(NOTEBOOK, _CONFIGURACAO + ("f85e0885",), extra='''
models = {kind: load_decoder_quantized(kind)[0] for kind in ("nf4", "fp4")}
nf4_levels = models["nf4"].model.layers[0].self_attn.q_proj.weight.quant_state.code.sort().values
'''),
)


# ---------------------------------------------------------------- exercício 2: quantização dupla
# O capítulo carrega os seis formatos e compara cada um nos cinco trechos; aqui bastam o nf4 e um trecho
# (o que se confere são os absmax e os bytes, que não dependem do texto).
_contexto_ex2 = celulas_do_notebook(NOTEBOOK, _CONFIGURACAO + ("f85e0885",), extra='''
passages = passages[:1]
models = {"nf4": load_decoder_quantized("nf4")[0]}
with torch.no_grad():
    fp32_logits = {tuple(p): reference(input_ids=torch.tensor([p])).logits for p in passages}


def stored_reference(input_ids):
    return SimpleNamespace(logits=fp32_logits[tuple(input_ids[0].tolist())])


stats = {"nf4": compare_to_reference(models["nf4"], stored_reference, passages)}
''')


def _camadas_4bit(modelo) -> list:
    import bitsandbytes as bnb

    return [m for m in modelo.modules() if isinstance(m, bnb.nn.Linear4bit)]


def _economia(ns) -> int:
    """Bytes que a quantização dupla tira, peça por peça do ``quant_state``: sai o ``absmax`` float32 do
    nf4 simples; entram o ``absmax`` de 8 bits, a média subtraída (``offset``) e o segundo nível (um
    ``absmax`` float32 a cada 256 blocos e a sua tabela)."""
    from ..quantization import load_decoder_quantized, storage_bytes

    simples, _ = load_decoder_quantized("nf4")
    dupla, _ = load_decoder_quantized("nf4", double_quant=True)   # em cache: o mesmo objeto do leitor
    antes = storage_bytes(m.weight.quant_state.absmax for m in _camadas_4bit(simples))
    depois = []
    for m in _camadas_4bit(dupla):
        estado = m.weight.quant_state
        depois += [estado.absmax, estado.offset, estado.state2.absmax, estado.state2.code]
    return antes - storage_bytes(depois)


def _absmax_das_camadas():
    """Os absmax (float32) de três camadas do nf4 simples que a lição não mostra: 1 728, 5 184 e 13 824
    blocos de 64 pesos, isto é, 6,75, 20,25 e 54 blocos de 256 (dois terminam num bloco incompleto)."""
    from ..quantization import load_decoder_quantized

    camadas = load_decoder_quantized("nf4")[0].model.layers
    return [camadas[11].self_attn.k_proj.weight.quant_state.absmax.clone(),
            camadas[22].self_attn.o_proj.weight.quant_state.absmax.clone(),
            camadas[4].mlp.gate_proj.weight.quant_state.absmax.clone()]


def _entradas_ex2(ns):
    import bitsandbytes as bnb

    absmax = memorizar(("absmax do cap06 ex2",), _absmax_das_camadas)
    return [(a.clone(), bnb.functional.create_dynamic_map().float()) for a in absmax]


def _dupla_bnb(absmax, code):
    """A referência: ``quantize_blockwise`` do bitsandbytes (blocos de 256) sobre os absmax menos a média,
    e a volta com ``dequantize_blockwise``, como ``quantize_4bit(..., compress_statistics=True)`` faz."""
    import bitsandbytes as bnb

    offset = absmax.mean()
    q, estado = bnb.functional.quantize_blockwise(absmax - offset, code=code, blocksize=256)
    return bnb.functional.dequantize_blockwise(q, estado) + offset


def _dupla_mais_proxima(absmax, code):
    """O nível mais próximo por outro caminho (``bucketize`` nos pontos médios da tabela ordenada), sem a busca
    binária do bitsandbytes, que na CPU fica, em poucos valores, com o vizinho um pouco mais distante."""
    import torch

    ordenada, ordem = code.float().sort()
    meios = (ordenada[1:] + ordenada[:-1]) / 2
    offset = absmax.float().mean()
    centrados = absmax.float() - offset
    saida = torch.empty_like(centrados)
    for i in range(0, len(centrados), 256):
        x = centrados[i:i + 256]
        escala = x.abs().max()
        saida[i:i + 256] = ordenada[torch.bucketize(x / escala, meios)] * escala
    return saida + offset


def _conferir_ex2(respostas, ns):
    import torch

    casos = _entradas_ex2(ns)
    for i, ((absmax, code), obtido) in enumerate(zip(casos, respostas["my_double_quant"]), start=1):
        certo_bnb, certo_perto = _dupla_bnb(absmax, code), _dupla_mais_proxima(absmax, code)
        comparar(obtido, certo_perto, rtol=1.0, atol=1.0,          # só o formato e o tipo, aqui
                 nome=f"a saída de `my_double_quant` na chamada de teste {i} de {len(casos)}")
        obtido = torch.as_tensor(obtido).float().reshape(certo_bnb.shape)
        bate = (obtido - certo_bnb).abs().le(1e-6) | (obtido - certo_perto).abs().le(1e-6)
        if not bate.all():
            raise Incorreto(f"na chamada de teste {i} de {len(casos)}, {int((~bate).sum())} dos {bate.numel()} "
                            "absmax reconstruídos não são nem os do bitsandbytes nem os do nível mais próximo da "
                            "tabela: confira a média (`offset`), os blocos de 256 (o último, menor) e a escala de "
                            "cada bloco (o maior |valor| dele).")
    comparar(respostas["saved"], _economia(ns) / MIB, rtol=1e-4, atol=1e-6, nome="`saved`")


def _dupla_errada(tipo):
    def quantizar(absmax, code):
        import torch

        from ..quant4bit import nearest_level

        offset = torch.zeros(()) if tipo == "sem média" else absmax.mean()
        centrados = absmax.float() - offset
        fim = len(centrados) - len(centrados) % 256 if tipo == "sem o resto" else len(centrados)
        saida = centrados.clone()
        bloco = 64 if tipo == "blocos de 64" else 256
        for i in range(0, fim, bloco):
            x = centrados[i:i + bloco]
            escala = x.abs().max()
            saida[i:i + bloco] = code[nearest_level(x / escala, code)] * escala
        return saida if tipo == "sem somar" else saida + offset
    return quantizar


def _esperado_ex2(ns):
    return {"my_double_quant": _dupla_bnb, "saved": _economia(ns) / MIB}


ex2 = Exercicio(
    "cap06_pretreinamento_otimizacao.ex2", "a quantização dupla refeita à mão", ("my_double_quant", "saved"),
    dicas=(
        "Tire a média de todos os `absmax` da camada (o `offset`, um número só) e trabalhe com `absmax - "
        "offset`: centrados, eles ocupam os dois lados da tabela dinâmica, que tem níveis negativos e positivos.",
        "Percorra os valores centrados em fatias de 256 (`range(0, n, 256)`; a última pode ser menor). Em cada "
        "fatia, divida pelo maior |valor| e ache o nível mais próximo de `code`, como no exercício 1; a volta "
        "é `code[indice] * escala`, e no fim soma-se o `offset` de volta.",
        "Para `saved`: carregue o modelo com `load_decoder_quantized(\"nf4\", double_quant=True)` e compare "
        "`model_bytes` dele com o de `models[\"nf4\"]`; passe para MiB com `mib`.",
    ),
    esperado=_esperado_ex2,
    conferir=_conferir_ex2,
    entradas=lambda ns: {"my_double_quant": _entradas_ex2(ns)},
    erros_comuns=(
        ErroComum("a média não foi tirada antes da quantização: o bitsandbytes subtrai o `offset` (a média dos "
                  "`absmax`) e o soma de volta; sem isso, os valores, todos positivos, usam só metade da tabela.",
                  lambda ns: {"my_double_quant": _dupla_errada("sem média")}),
        ErroComum("o `offset` não foi somado de volta: a ida subtrai a média, e a volta precisa somá-la.",
                  lambda ns: {"my_double_quant": _dupla_errada("sem somar")}),
        ErroComum("a última fatia, a incompleta, ficou sem quantizar: o bitsandbytes quantiza também o bloco "
                  "final com menos de 256 valores, com o seu próprio máximo.",
                  lambda ns: {"my_double_quant": _dupla_errada("sem o resto")}),
        ErroComum("os blocos do segundo nível ficaram de 64: a quantização dupla agrupa os `absmax` de 256 em "
                  "256.", lambda ns: {"my_double_quant": _dupla_errada("blocos de 64")}),
        ErroComum("a economia deu zero: `get_memory_footprint` só soma parâmetros e buffers, e o `absmax` fica "
                  "no `quant_state`, fora dos dois; conte com `model_bytes`.",
                  lambda ns: {"saved": 0.0}),
    ),
    proibidas=("bitsandbytes.functional.quantize_blockwise", "bitsandbytes.functional.dequantize_blockwise",
               "bitsandbytes.functional.quantize_4bit", "bitsandbytes.functional.dequantize_4bit",
               "torch.ops.bitsandbytes.quantize_blockwise", "torch.ops.bitsandbytes.dequantize_blockwise",
               "lncc_llm.quant4bit.double_quantize_absmax"),
    inicio="""
def my_double_quant(absmax, code):
    \"\"\"Os absmax de uma camada nf4 depois da ida e volta da quantização dupla (exercício 2).\"\"\"
    return ____


saved = ____        # MiB economizados: nf4 simples − nf4 com quantização dupla (um número)
""",
    contexto=_contexto_ex2,
)
