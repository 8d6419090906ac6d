"""Exercícios conferíveis do Capítulo 6, segunda parte: os bytes que uma camada de 4 bits move (núcleo, uma
previsão antes da medida) e o maior modelo que cabe numa placa de vídeo."""
from __future__ import annotations

import math

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap06_velocidade_memoria"
_CONFIGURACAO = ("6b2e0001", "6b2e0003")          # setup_notebook e as importações da seção 6.2


# ---------------------------------------------------------------- exercício 1 (núcleo): os bytes de uma camada
def _camadas_de_teste():
    """Camadas de 4 bits que a lição não usa: a q_proj (576 × 576) e a k_proj (576 × 192) do nf4, e a up_proj
    (576 → 1 536) e a o_proj do fp4, em camadas diferentes da 0."""
    from ..quantization import load_decoder_quantized

    nf4 = load_decoder_quantized("nf4")[0].model.layers
    fp4 = load_decoder_quantized("fp4")[0].model.layers
    return [nf4[3].self_attn.q_proj, nf4[17].self_attn.k_proj, fp4[8].mlp.up_proj, fp4[25].self_attn.o_proj]


def _entradas_ex1(ns):
    return [(camada,) for camada in _camadas_de_teste()]


def _bytes_dos_tensores(layer):
    """A referência, nos tensores: o armazenamento dos índices de 4 bits e dos absmax, e o da cópia float32 que a
    ``dequantize_4bit`` devolve de fato."""
    import bitsandbytes as bnb
    import torch

    from ..quantization import storage_bytes

    estado = layer.weight.quant_state
    with torch.no_grad():
        copia = bnb.functional.dequantize_4bit(layer.weight.data, estado)
    return {"quantizado": storage_bytes([layer.weight.data, estado.absmax]), "copia": storage_bytes([copia])}


def _bytes_errados(tipo):
    def contar(layer):
        n = layer.in_features * layer.out_features
        indices = n if tipo == "um byte por peso" else n // 2
        absmax = 0 if tipo == "sem absmax" else (n // 64 if tipo == "absmax de 1 byte" else 4 * (n // 64))
        copia = 2 * n if tipo == "cópia em 16 bits" else 4 * n
        return {"quantizado": indices + absmax, "copia": copia}
    return contar


ex1 = Exercicio(
    "cap06_velocidade_memoria.ex1", "os bytes que uma camada de 4 bits move", ("my_bytes_moved",),
    dicas=(
        "Conte pela forma da camada: n = `layer.in_features * layer.out_features` pesos. Cada índice tem 4 bits, "
        "então dois cabem num byte; e cada bloco de 64 pesos tem um `absmax` float32 (4 bytes).",
        "A cópia que a `dequantize_4bit` escreve é a matriz inteira em float32: 4 bytes por peso. Confira com os "
        "próprios tensores: `layer.weight.data.numel()` (bytes de índices, num tensor uint8) e "
        "`layer.weight.quant_state.absmax`.",
        "Devolva um dicionário com as duas chaves, `\"quantizado\"` e `\"copia\"`, em bytes (inteiros); a chamada "
        "lê o quantizado, escreve a cópia e a lê de novo no `F.linear`.",
    ),
    esperado=lambda ns: {"my_bytes_moved": _bytes_dos_tensores},
    entradas=_entradas_ex1,
    rtol=1e-3, atol=0,
    erros_comuns=(
        ErroComum("os índices ficaram com um byte por peso: são 4 bits, dois por byte (o tensor de pesos da camada "
                  "é uint8 com n/2 elementos).", lambda ns: {"my_bytes_moved": _bytes_errados("um byte por peso")}),
        ErroComum("faltou o `absmax`: a `dequantize_4bit` lê também um float32 por bloco de 64 pesos.",
                  lambda ns: {"my_bytes_moved": _bytes_errados("sem absmax")}),
        ErroComum("o `absmax` ficou com 1 byte por bloco, que é o da quantização dupla; estas camadas são nf4 e fp4 "
                  "simples, com o `absmax` em float32 (4 bytes).",
                  lambda ns: {"my_bytes_moved": _bytes_errados("absmax de 1 byte")}),
        ErroComum("a cópia ficou em 16 bits: as contas dos 4 bits do curso são em float32 "
                  "(`bnb_4bit_compute_dtype`), e a cópia tem 4 bytes por peso.",
                  lambda ns: {"my_bytes_moved": _bytes_errados("cópia em 16 bits")}),
    ),
    proibidas=("lncc_llm.quant4bit.linear4bit_bytes", "lncc_llm.quantization.model_bytes",
               "lncc_llm.quantization.storage_bytes"),
    tipo="nucleo",
    inicio="""
def my_bytes_moved(layer):
    \"\"\"Os bytes de uma chamada de `layer` (uma bnb.nn.Linear4bit, nf4 ou fp4 simples): "quantizado" (índices
    de 4 bits e absmax float32, que a dequantize_4bit lê) e "copia" (a matriz float32 que ela escreve).\"\"\"
    return ____
""",
    seguir="linear4bit_bytes = my_bytes_moved",
    # só o nf4, não os seis formatos da lição
    contexto=celulas_do_notebook(NOTEBOOK, _CONFIGURACAO, extra='models = {"nf4": load_decoder_quantized("nf4")[0]}\n'),
)


# ---------------------------------------------------------------- exercício 2: qual placa?
_contexto_ex2 = celulas_do_notebook(NOTEBOOK, _CONFIGURACAO, extra='''
from transformers import LlamaConfig

from lncc_llm import activation_model

methods = {"full": "completo", "lora": "LoRA", "qlora": "QLoRA"}   # da seção 6.7
architectures = {"Llama-2-7B": LlamaConfig()}                      # da seção 6.6
''')

_NF4_DUPLA = (4 + 8 / 64 + 32 / (64 * 256)) / 8   # bytes por peso: índice de 4 bits, absmax de 8 bits a cada
                                                  # 64 pesos e uma constante fp32 a cada 64 · 256
_ADAPTADORES = 0.01 * (4 + 4 + 8)                 # 1 % treinável em fp32: peso, gradiente e os dois momentos
_PLACA = 24e9


def _reserva(bytes_por_valor: int = 2, normas_treinam: bool = False) -> float:
    """As ativações do Llama-2-7B numa sequência de 1 024 tokens, contadas à parte de ``activation_model``:
    por camada e por token, as normas (4d, ou 6d se os pesos delas treinam), q, k e v (3d, sem GQA), a saída
    da atenção e a entrada de o_proj (2d) e a MLP SwiGLU (4 · d_ffn); na cabeça, a log-softmax (|V|)."""
    d, ffn, camadas, vocab, tokens = 4096, 11008, 32, 32000, 1024
    por_camada = (6 if normas_treinam else 4) * d + 3 * d + 2 * d + 4 * ffn
    return (camadas * por_camada + vocab) * tokens * bytes_por_valor


def _maiores(orcamento: float, passo_a_mais: int = 0) -> dict:
    """O maior modelo (em bilhões, inteiro) cujos bytes por parâmetro cabem em ``orcamento`` bytes."""
    return {metodo: math.floor(orcamento / (base + _ADAPTADORES) / 1e9) + passo_a_mais
            for metodo, base in (("lora", 2.0), ("qlora", _NF4_DUPLA))}


def _bytes_do_maior(orcamento: float, fracao: float = 1.0) -> dict:
    """Os bytes de treino do maior modelo que cabe, contados com ``fracao`` dos parâmetros."""
    maiores = _maiores(orcamento)
    return {metodo: fracao * maiores[metodo] * 1e9 * (base + _ADAPTADORES)
            for metodo, base in (("lora", 2.0), ("qlora", _NF4_DUPLA))}


ex2 = Exercicio(
    "cap06_velocidade_memoria.ex2", "o maior modelo que cabe numa RTX 4090", ("largest", "used_bytes"),
    dicas=(
        "A reserva é `activation_model(architectures[\"Llama-2-7B\"], 1024, bytes_per_value=2, "
        "trainable_norms=False)[\"total\"]`, em bytes; o orçamento é o que sobra de 24 × 10⁹ bytes, a unidade "
        "de `training_memory` que o enunciado manda usar.",
        "Percorra b = 1, 2, 3, … e guarde o maior b com `training_memory(b * 1e9, método)[\"total\"]` dentro do "
        "orçamento; os padrões de `training_memory` já são 1 % treinável e tudo quantizável.",
        "Por parâmetro, o LoRA gasta 2 bytes de base bf16 mais 1 % × 16 bytes de adaptadores; o QLoRA, cerca "
        "de 0,52 byte de base mais os mesmos 0,16.",
    ),
    esperado=lambda ns: {"largest": _maiores(_PLACA - _reserva()), "used_bytes": _bytes_do_maior(_PLACA - _reserva())},
    erros_comuns=(
        ErroComum("faltou a reserva: as ativações de uma sequência de 1 024 tokens saem da placa antes dos pesos.",
                  lambda ns: {"largest": _maiores(_PLACA)}),
        ErroComum("a reserva foi contada em fp32 (4 bytes por valor); o treino na GPU guarda as ativações em bf16: "
                  "`bytes_per_value=2`.", lambda ns: {"largest": _maiores(_PLACA - _reserva(bytes_por_valor=4))}),
        ErroComum("a reserva contou as normas como treináveis; no LoRA e no QLoRA elas ficam congeladas "
                  "(`trainable_norms=False`) e guardam menos.",
                  lambda ns: {"largest": _maiores(_PLACA - _reserva(normas_treinam=True))}),
        ErroComum("o orçamento foi contado como 24 GiB (24 × 2³⁰ bytes); o enunciado pede 24 × 10⁹ bytes, a unidade "
                  "de `training_memory` (a placa tem, de fato, 24 GiB: a diferença fica como folga).",
                  lambda ns: {"largest": _maiores(24 * 2**30 - _reserva())}),
        ErroComum("esses são os primeiros tamanhos que já não cabem: pede-se o maior que cabe.",
                  lambda ns: {"largest": _maiores(_PLACA - _reserva(), passo_a_mais=1)}),
    ),
    atalhos=(
        ErroComum("`used_bytes` não é a memória de treino do maior modelo: conte todos os parâmetros dele "
                  "(`training_memory(b * 1e9, método)[\"total\"]`), não uma parte; com 99 % dos parâmetros, "
                  "os mesmos dois inteiros de `largest` ainda aparecem, mas os bytes não.",
                  lambda ns: {"used_bytes": _bytes_do_maior(_PLACA - _reserva(), fracao=0.99)}),
    ),
    inicio="""
largest = ____      # {"lora": ..., "qlora": ...}: o maior modelo que cabe, em bilhões de parâmetros (inteiros)
used_bytes = ____   # {"lora": ..., "qlora": ...}: os bytes de treino desse maior modelo (training_memory, "total")
""",
    contexto=_contexto_ex2,
)
