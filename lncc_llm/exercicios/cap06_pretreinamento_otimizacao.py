"""Exercícios conferíveis do Capítulo 6, primeira parte (os bytes da quantização dupla).

O exercício 2 (outro texto) fica sem verificador: o parágrafo é do leitor, e a resposta é a comparação. O
exercício da placa de vídeo está na segunda parte (``cap06_velocidade_memoria``).
"""
from __future__ import annotations

import math

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap06_pretreinamento_otimizacao"
_CONFIGURACAO = ("c970a1af", "e0eab8a1")          # setup_notebook e as importações da seção 6.2
MIB = 2**20


# ---------------------------------------------------------------- exercício 1: quantização dupla
# O capítulo carrega os seis formatos e compara cada um nos cinco trechos; aqui bastam o nf4 e um trecho
# (o que se confere são bytes, que não dependem do texto).
_contexto_ex1 = celulas_do_notebook(NOTEBOOK, _CONFIGURACAO + ("f85e0885",), extra='''
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


def _blocos(modelo) -> int:
    """Blocos de 64 pesos nas camadas de 4 bits: cada um tem o seu ``absmax``."""
    return sum(math.ceil(m.in_features * m.out_features / 64) for m in _camadas_4bit(modelo))


def _bytes_guardados(tensores) -> int:
    """Bytes dos armazenamentos distintos de ``tensores``, cada um contado uma vez."""
    import torch

    vistos, total = set(), 0
    for t in tensores:
        if torch.is_tensor(t):
            armazenamento = t.untyped_storage()
            if armazenamento.data_ptr() not in vistos:
                vistos.add(armazenamento.data_ptr())
                total += armazenamento.nbytes()
    return total


def _economia(ns) -> int:
    """Bytes que a quantização dupla tira, peça por peça do ``quant_state``: sai o ``absmax`` float32 do
    nf4 simples; entram o ``absmax`` de 8 bits, a média subtraída (``offset``) e o segundo nível (um
    ``absmax`` float32 a cada 256 blocos e a sua tabela)."""
    from ..quantization import load_decoder_quantized

    simples = ns["models"]["nf4"]
    dupla, _ = load_decoder_quantized("nf4", double_quant=True)   # em cache: o mesmo objeto do leitor
    antes = _bytes_guardados(m.weight.quant_state.absmax for m in _camadas_4bit(simples))
    depois = []
    for m in _camadas_4bit(dupla):
        estado = m.weight.quant_state
        depois += [estado.absmax, estado.offset, estado.state2.absmax, estado.state2.code]
    return antes - _bytes_guardados(depois)


def _esperado_ex1(ns):
    from ..quantization import model_bytes

    economia = _economia(ns)
    return {"double_mib": (model_bytes(ns["models"]["nf4"]) - economia) / MIB,
            "absmax_mib": 4 * _blocos(ns["models"]["nf4"]) / MIB,
            "saved": economia / MIB}


ex1 = Exercicio(
    "cap06_pretreinamento_otimizacao.ex1", "os bytes da quantização dupla", ("double_mib", "absmax_mib", "saved"),
    dicas=(
        "A quantização dupla só muda o `quant_state` de cada camada de 4 bits: carregue o modelo com "
        "`double_quant=True` e compare `model_bytes` dele com o de `models[\"nf4\"]`.",
        "O `absmax` do nf4 simples é um float32 por bloco de 64 pesos: some "
        "`absmax.numel() * absmax.element_size()` sobre as camadas `bnb.nn.Linear4bit` de `models[\"nf4\"]` "
        "(o `absmax` mora em `m.weight.quant_state`).",
        "Passe os bytes para MiB com `mib` (2²⁰ bytes). A economia fica abaixo de ¾ do `absmax`: "
        "cada um passa a custar 1 byte, e o segundo nível guarda uma constante float32 a cada 256 blocos e, em "
        "cada camada de 4 bits, uma tabela de 256 valores float32 (1 KiB).",
    ),
    esperado=_esperado_ex1,
    erros_comuns=(
        ErroComum("a economia deu zero: `get_memory_footprint` só soma parâmetros e buffers, e o `absmax` fica "
                  "no `quant_state`, fora dos dois; conte com `model_bytes`.",
                  lambda ns: {"saved": 0.0}),
        ErroComum("esse é o `absmax` do modelo com quantização dupla (1 byte por bloco); pede-se o do nf4 "
                  "simples, em float32.",
                  lambda ns: {"absmax_mib": _blocos(ns["models"]["nf4"]) / MIB}),
        ErroComum("o `absmax` está em MB (10⁶ bytes); a pergunta é em MiB (2²⁰ bytes), a unidade da função `mib`.",
                  lambda ns: {"absmax_mib": 4 * _blocos(ns["models"]["nf4"]) / 1e6}),
    ),
    inicio="""
double_mib = ____   # MiB do nf4 com quantização dupla, contados com model_bytes (um número)
absmax_mib = ____   # MiB dos absmax (float32) do nf4 simples, models["nf4"] (um número)
saved = ____        # MiB economizados: nf4 simples − nf4 com quantização dupla (um número)
""",
    contexto=_contexto_ex1,
)
