"""Exercícios conferíveis do Capítulo 7, segunda parte (o LoRA só em q e v).

O exercício 1 (a escala do adaptador) fica sem verificador: ele mede o LoRA treinado no notebook, e um treino
não cabe na conferência. Do exercício 2, confere-se a contagem; a junção do adaptador treinado à base
(``merge_and_unload``) fica na célula seguinte, com a saída recolhida.
"""
from __future__ import annotations

from .contexto import celulas_do_notebook
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap07_sft_lora_qlora"


# ---------------------------------------------------------------- exercício 2: o LoRA só em q e v
def _contagem_qv(ns, camadas: bool = True, gqa: bool = True, matriz_inteira: bool = False) -> int:
    cfg = ns["base"].config
    d = cfg.hidden_size
    kv = cfg.num_key_value_heads * (d // cfg.num_attention_heads) if gqa else d
    r = 8
    por_camada = d * d + d * kv if matriz_inteira else r * (d + d) + r * (d + kv)
    return por_camada * (cfg.num_hidden_layers if camadas else 1)


ex2 = Exercicio(
    "cap07_sft_lora_qlora.ex2", "os parâmetros do LoRA só em q e v", ("qv_by_hand",),
    dicas=(
        "Uma matriz d × k adaptada com posto r ganha A (r × k) e B (d × r): r(d + k) parâmetros.",
        "`q_proj` é 576 × 576, mas `v_proj` tem a saída das cabeças de chave/valor, que o SmolLM2 agrupa "
        "(GQA): use o dicionário `shapes` da seção 7.10.",
        "Some q e v de uma camada, multiplique pelas `cfg.num_hidden_layers` camadas e confira com "
        "`get_peft_model(copy.deepcopy(base), lora_config(target_modules=[\"q_proj\", \"v_proj\"]))`.",
    ),
    esperado=lambda ns: {"qv_by_hand": _contagem_qv(ns)},
    erros_comuns=(
        ErroComum("`v_proj` não é 576 × 576: com GQA, as projeções de valor saem com 3 cabeças × 64 = 192.",
                  lambda ns: {"qv_by_hand": _contagem_qv(ns, gqa=False)}),
        ErroComum("essa é a conta de um bloco só: multiplique pelas 30 camadas.",
                  lambda ns: {"qv_by_hand": _contagem_qv(ns, camadas=False)}),
        ErroComum("essa é a contagem das matrizes inteiras (d · k): o LoRA treina só A e B, r(d + k) por matriz.",
                  lambda ns: {"qv_by_hand": _contagem_qv(ns, matriz_inteira=True)}),
    ),
    inicio="""
qv_by_hand = ____   # parâmetros do LoRA de posto 8 só em q_proj e v_proj, nas 30 camadas (um inteiro)
""",
    # a base e as formas da seção 7.10, sem os treinos: a célula de lá também confere o LoRA treinado
    contexto=celulas_do_notebook(NOTEBOOK, ("2a6c0d12", "2a6c0d14"), extra='''
import copy

from lncc_llm import load_decoder

base, tokenizer = load_decoder()
cfg = base.config
kv = cfg.num_key_value_heads * cfg.hidden_size // cfg.num_attention_heads
d, ffn, r = cfg.hidden_size, cfg.intermediate_size, 8
shapes = {"q": (d, d), "k": (d, kv), "v": (d, kv), "o": (d, d), "gate": (d, ffn), "up": (d, ffn), "down": (ffn, d)}
'''),
)
