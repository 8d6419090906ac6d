"""Exercícios conferíveis do Capítulo 6, segunda parte (o maior modelo que cabe numa placa de vídeo)."""
from __future__ import annotations

import math

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap06_velocidade_memoria"
_CONFIGURACAO = ("6b2e0001", "6b2e0003")          # setup_notebook e as importações da seção 6.2


# ---------------------------------------------------------------- exercício 1: qual placa?
_contexto_ex1 = celulas_do_notebook(NOTEBOOK, _CONFIGURACAO, extra='''
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


ex1 = Exercicio(
    "cap06_velocidade_memoria.ex1", "o maior modelo que cabe numa RTX 4090", ("largest", "used_bytes"),
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
    contexto=_contexto_ex1,
)
