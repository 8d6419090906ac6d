"""Exercícios conferíveis do Capítulo 7, segunda parte: o *forward* da camada LoRA (núcleo), as três
configurações do QLoRA escritas à mão e o LoRA só em q e v.

Do exercício do LoRA só em q e v, confere-se a contagem; a junção do adaptador treinado à base
(``merge_and_unload``) fica na célula seguinte, com a saída recolhida.
"""
from __future__ import annotations

import re

from .comparar import Incorreto
from .contexto import celula_da_resposta, celulas_do_notebook, memorizar
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap07_sft_lora_qlora"


# ---------------------------------------------------------------- exercício 1 (núcleo): o forward do LoRA
def _entradas_ex1(ns):
    """Camadas que a lição não mostra: pesos de verdade do SmolLM2 (a ``k_proj`` da camada 9, 192 × 576, e a
    ``down_proj`` da camada 21, 576 × 1536) com A e B sorteados, e duas camadas sorteadas com viés; entradas em
    lote (1, 2 ou 3 dimensões), postos 1, 4 e 8, escalas α/r diferentes de 1."""
    import torch

    from ..models import load_decoder

    base, _ = load_decoder()
    camadas = base.model.layers
    g = torch.Generator().manual_seed(7_10)

    def caso(W, r, alpha, forma_x, com_vies):
        d, k = W.shape
        A = 0.05 * torch.randn(r, k, generator=g)
        B = 0.05 * torch.randn(d, r, generator=g)
        x = torch.randn(*forma_x, k, generator=g)
        b = 0.1 * torch.randn(d, generator=g) if com_vies else None
        return (x, W.detach().clone(), A, B, alpha, r, b)
    return [caso(camadas[9].self_attn.k_proj.weight, 8, 16, (2, 5), False),
            caso(camadas[21].mlp.down_proj.weight, 4, 32, (3,), False),
            caso(0.1 * torch.randn(7, 5, generator=g), 1, 4, (2, 3), True),
            caso(0.1 * torch.randn(12, 9, generator=g), 8, 12, (4,), True),
            caso(0.1 * torch.randn(6, 10, generator=g), 2, 1, (), False)]


def _lora_peft(x, weight, A, B, alpha, r, bias=None):
    """A referência: uma ``nn.Linear`` com o adaptador do ``peft`` (dropout 0), com A e B dados."""
    import torch
    from peft import LoraConfig, get_peft_model

    d, k = weight.shape
    modelo = torch.nn.Sequential()
    modelo.add_module("proj", torch.nn.Linear(k, d, bias=bias is not None))
    camada = get_peft_model(modelo, LoraConfig(r=r, lora_alpha=alpha, target_modules=["proj"],
                                               lora_dropout=0.0)).base_model.model.proj
    with torch.no_grad():
        camada.base_layer.weight.copy_(weight)
        if bias is not None:
            camada.base_layer.bias.copy_(bias)
        camada.lora_A["default"].weight.copy_(A)
        camada.lora_B["default"].weight.copy_(B)
        return camada(x)


def _lora_errado(tipo):
    def forward(x, weight, A, B, alpha, r, bias=None):
        import torch

        base = torch.nn.functional.linear(x, weight, None if tipo == "sem viés" else bias)
        escala = {"sem escala": 1.0, "r/alpha": r / alpha}.get(tipo, alpha / r)
        desvio = escala * (x @ A.T) @ B.T
        return desvio if tipo == "só o desvio" else base + desvio
    return forward


ex1 = Exercicio(
    "cap07_sft_lora_qlora.ex1", "o forward de uma camada com LoRA", ("my_lora_forward",),
    dicas=(
        "A base congelada é a conta de um `nn.Linear`: `x @ weight.T` (mais o `bias`, se houver), ou "
        "`torch.nn.functional.linear(x, weight, bias)`.",
        "O desvio passa primeiro por A (r × k), que leva x de k para r dimensões, e depois por B (d × r): "
        "`(x @ A.T) @ B.T`. Escreva-o nessa ordem, da direita para a esquerda de BAx, e ele funciona para "
        "qualquer número de dimensões antes da última.",
        "O desvio é multiplicado por `alpha / r` (no capítulo, 16/8 = 2) e somado à saída da base; um "
        "`bias=None` quer dizer sem viés.",
    ),
    esperado=lambda ns: {"my_lora_forward": _lora_peft},
    entradas=_entradas_ex1,
    rtol=1e-5, atol=1e-6,
    erros_comuns=(
        ErroComum("o desvio saiu sem a escala: o LoRA soma (α/r)·BAx, e no capítulo α/r = 2.",
                  lambda ns: {"my_lora_forward": _lora_errado("sem escala")}),
        ErroComum("a escala ficou invertida: é α/r (`alpha / r`), não r/α.",
                  lambda ns: {"my_lora_forward": _lora_errado("r/alpha")}),
        ErroComum("a função devolveu só o desvio (α/r)·BAx: a saída da camada é a da base congelada, Wx + b, "
                  "mais o desvio.", lambda ns: {"my_lora_forward": _lora_errado("só o desvio")}),
        ErroComum("o viés da base ficou de fora: quando `bias` não é `None`, ele entra na saída da base.",
                  lambda ns: {"my_lora_forward": _lora_errado("sem viés")}),
    ),
    proibidas=("lncc_llm.lora_layer.lora_forward", "peft.tuners.lora.layer.Linear.forward",
               "peft.tuners.lora.Linear.forward", "peft.get_peft_model"),
    tipo="nucleo",
    inicio="""
def my_lora_forward(x, weight, A, B, alpha, r, bias=None):
    \"\"\"A saída de uma linear com adaptador LoRA (seção 7.10): a base congelada W (d × k), com o viés, mais o
    desvio B A x (A é r × k, B é d × r) multiplicado por alpha / r. x tem a última dimensão k.\"\"\"
    return ____
""",
    seguir="lora_forward = my_lora_forward",
    contexto=celulas_do_notebook(NOTEBOOK, ("2a6c0d12", "2a6c0d14"), extra='''
from lncc_llm import load_decoder

base, tokenizer = load_decoder()
'''),
)


# ---------------------------------------------------------------- exercício 2: o código do QLoRA
_CAMPOS_SFT = {"eval_strategy": "no", "max_steps": 2, "learning_rate": 2e-3, "lr_scheduler_type": "constant", "warmup_steps": 0,
               "per_device_train_batch_size": 4, "max_length": 128, "seed": 0, "use_cpu": True, "bf16": False,
               "gradient_checkpointing": False}


def _valor(config, campo):
    valor = getattr(config, campo, None)
    return getattr(valor, "value", valor)


_PRONTAS_EX2 = ("cpu_training_args", "lora_config", "quantization_config")


def _prontas_lidas(celula: str) -> list[str]:
    """Os nomes das configurações prontas do curso que a célula lê (importa, chama ou copia) sem tê-los
    definido ela mesma: um `lora_config = LoraConfig(...)` do leitor e o argumento `quantization_config=`
    não contam."""
    import ast

    try:
        arvore = ast.parse(celula)
    except SyntaxError:                       # uma mágica do IPython: só os nomes chamados
        return re.findall(r"\b(" + "|".join(_PRONTAS_EX2) + r")\s*\(", celula)
    definidos = {n.id for n in ast.walk(arvore) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    lidos = [n.id for n in ast.walk(arvore) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    importados = [a.name for n in ast.walk(arvore) if isinstance(n, ast.ImportFrom)
                  for a in n.names if a.name in _PRONTAS_EX2]        # com ou sem `as`
    return importados + [nome for nome in lidos if nome in _PRONTAS_EX2 and nome not in definidos]


def _conferir_ex2(valores, ns):
    import torch
    from peft import LoraConfig
    from transformers import BitsAndBytesConfig
    from trl import SFTConfig

    bnb_config, peft_config, args = valores["bnb_config"], valores["qlora_peft_config"], valores["qlora_args"]
    # as três configurações são o exercício: as do curso prontas (`cpu_training_args`, `lora_config`,
    # `quantization_config`) não valem. A célula da resposta, no histórico do IPython, não pode chamá-las, e
    # a pasta temporária de `cpu_training_args` denuncia o SFTConfig feito por ela em outra célula.
    from ..trainers import TEMP_PREFIX

    prontas = _prontas_lidas(celula_da_resposta(ns, "qlora_args"))
    if prontas or TEMP_PREFIX in str(getattr(args, "output_dir", "")):
        nome = prontas[0] if prontas else "cpu_training_args"
        raise Incorreto(f"a resposta usa a configuração pronta do curso (`{nome}`): o exercício é escrever as "
                        "três à mão, com `BitsAndBytesConfig`, `LoraConfig` e `SFTConfig` (a célula do LoRA "
                        "na seção 7.10 mostra o `SFTConfig`).")
    for nome, valor, classe in (("bnb_config", bnb_config, BitsAndBytesConfig),
                                ("qlora_peft_config", peft_config, LoraConfig), ("qlora_args", args, SFTConfig)):
        if not isinstance(valor, classe):
            raise Incorreto(f"`{nome}` deveria ser um `{classe.__name__}`; veio {type(valor).__name__}.")
    if not bnb_config.load_in_4bit:
        raise Incorreto("`bnb_config` não carrega em 4 bits: passe `load_in_4bit=True`.")
    if bnb_config.bnb_4bit_quant_type != "nf4":
        raise Incorreto(f"o tipo de 4 bits ficou {bnb_config.bnb_4bit_quant_type!r}: o QLoRA usa NF4, e o padrão "
                        "do `BitsAndBytesConfig`, sem `bnb_4bit_quant_type=\"nf4\"`, é FP4 (Capítulo 6).")
    if not bnb_config.bnb_4bit_use_double_quant:
        raise Incorreto("falta a quantização dupla do QLoRA: `bnb_4bit_use_double_quant=True`.")
    if bnb_config.bnb_4bit_compute_dtype != torch.float32:
        raise Incorreto(f"as contas dos 4 bits ficaram em {bnb_config.bnb_4bit_compute_dtype}: na CPU, o curso as "
                        "faz em float32 (`bnb_4bit_compute_dtype=torch.float32`); bf16 e fp16 mudariam os números.")
    alvos = peft_config.target_modules
    if not (alvos == "all-linear" or (isinstance(alvos, (set, list, tuple)) and {*alvos} >= {
            "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"})):
        raise Incorreto(f"os adaptadores foram só para {alvos!r}: a receita do QLoRA os põe em todas as lineares "
                        "dos blocos (`target_modules=\"all-linear\"`).")
    for campo, certo in (("r", 8), ("lora_alpha", 16), ("lora_dropout", 0.0)):
        if getattr(peft_config, campo) != certo:
            raise Incorreto(f"`qlora_peft_config.{campo}` = {getattr(peft_config, campo)!r}; o braço QLoRA do capítulo "
                            f"usa {certo!r}, o mesmo do LoRA (seção 7.10).")
    if _valor(args, "eval_strategy") != "no":
        raise Incorreto("`qlora_args` ainda pede validação (`eval_strategy`): o exercício treina sem conjunto de "
                        "validação, então tire as linhas `eval_strategy`, `eval_steps` e "
                        "`per_device_eval_batch_size` da configuração da seção 7.10.")
    for campo, certo in _CAMPOS_SFT.items():
        if _valor(args, campo) != certo:
            raise Incorreto(f"`qlora_args.{campo}` = {_valor(args, campo)!r}; para refazer os dois primeiros passos de "
                            f"`finetune(\"qlora\")`, use {certo!r} (a configuração da célula do LoRA na seção 7.10, "
                            "com a taxa do QLoRA).")
    # a prova: dois passos com as três configurações, contra os dois primeiros do treino da lição
    chave = ("dois passos do QLoRA", repr(bnb_config.to_dict()), repr(sorted(peft_config.to_dict().items())),
             repr(sorted((k, str(v)) for k, v in args.to_dict().items() if k != "output_dir")))
    perdas = memorizar(chave, lambda: _dois_passos(bnb_config, peft_config, args, ns))
    certas = ns["qlora"].losses[:2]
    if len(perdas) != 2 or any(abs(a - b) > 1e-3 for a, b in zip(perdas, certas)):
        raise Incorreto(f"as configurações estão certas campo a campo, mas os dois passos deram perdas {perdas}, e "
                        f"os de `finetune(\"qlora\")` foram {[round(x, 4) for x in certas]}: confira os campos "
                        "que o exercício não pede (por exemplo, `data_seed` e `optim`).")


def _dois_passos(bnb_config, peft_config, args, ns):
    import torch
    from transformers import AutoModelForCausalLM, set_seed

    from ..models import ensure_decoder_cache
    from ..quantization import use_fused_cpu_kernel
    from ..trainers import make_trainer, run_training

    modelo = AutoModelForCausalLM.from_pretrained(ensure_decoder_cache(), dtype=torch.float32,
                                                  quantization_config=bnb_config, device_map="cpu")
    use_fused_cpu_kernel(modelo, False)          # o kernel bf16 das CPUs com AVX512-BF16 não tem autograd
    set_seed(0)
    treinador = make_trainer("sft", modelo, ns["tokenizer"], ns["dataset"], args, peft_config=peft_config)
    for parametro in treinador.model.parameters():
        if parametro.requires_grad:
            parametro.data = parametro.data.float()
    run_training(treinador, remove_output_dir=False)
    return [e["loss"] for e in treinador.state.log_history if "loss" in e]


ex2 = Exercicio(
    "cap07_sft_lora_qlora.ex2", "as três configurações do QLoRA", ("bnb_config", "qlora_peft_config", "qlora_args"),
    dicas=(
        "A quantização é um `BitsAndBytesConfig` com quatro campos: `load_in_4bit`, `bnb_4bit_quant_type`, "
        "`bnb_4bit_use_double_quant` e `bnb_4bit_compute_dtype` (na CPU, `torch.float32`).",
        "O adaptador é o da seção 7.10 (`LoraConfig` com posto 8, α = 16, dropout 0, todas as lineares); o "
        "`SFTConfig` é o da célula do LoRA, com `max_steps=2`, a taxa do QLoRA (`2e-3`) e sem as linhas da "
        "validação.",
        "O verificador carrega o modelo com o seu `bnb_config`, monta o `SFTTrainer` com o seu adaptador e a sua "
        "configuração, devolve os adaptadores a fp32 e compara as duas primeiras perdas com `qlora.losses[:2]`.",
    ),
    conferir=_conferir_ex2,
    inicio="""
bnb_config = ____          # o BitsAndBytesConfig do QLoRA: NF4, quantização dupla, contas em float32
qlora_peft_config = ____   # o LoraConfig: posto 8, α = 16, dropout 0, todas as lineares
qlora_args = ____          # o SFTConfig dos dois primeiros passos de finetune("qlora") (sem validação)
""",
    contexto=celulas_do_notebook(NOTEBOOK, ("2a6c0d12", "2a6c0d14"), extra='''
import json
from importlib.resources import files
from types import SimpleNamespace

from lncc_llm import load_decoder, style_dataset

base, tokenizer = load_decoder()
dataset = style_dataset()
# fora do notebook, as perdas de finetune("qlora") da semente 0 vêm do arquivo das três sementes
_arquivo = json.loads(files("lncc_llm").joinpath("dados/comparacao_metodos.json").read_text(encoding="utf-8"))
qlora = SimpleNamespace(losses=next(r["perda_treino"] for r in _arquivo["metodos"]
                                    if r["metodo"] == "qlora" and r["semente"] == 0))
'''),
)


# ---------------------------------------------------------------- exercício 3: o LoRA só em q e v
def _contagem_qv(ns, camadas: bool = True, gqa: bool = True, matriz_inteira: bool = False) -> int:
    cfg = ns["base"].config
    d = cfg.hidden_size
    kv = cfg.num_key_value_heads * (d // cfg.num_attention_heads) if gqa else d
    r = 8
    por_camada = d * d + d * kv if matriz_inteira else r * (d + d) + r * (d + kv)
    return por_camada * (cfg.num_hidden_layers if camadas else 1)


ex3 = Exercicio(
    "cap07_sft_lora_qlora.ex3", "os parâmetros do LoRA só em q e v", ("qv_by_hand",),
    dicas=(
        "Uma matriz d × k adaptada com posto r ganha A (r × k) e B (d × r): r(d + k) parâmetros.",
        "`q_proj` é 576 × 576, mas `v_proj` tem a saída das cabeças de chave/valor, que o SmolLM2 agrupa "
        "(GQA): use o dicionário `shapes` da seção 7.10.",
        "Some q e v de uma camada, multiplique pelas `cfg.num_hidden_layers` camadas e confira com "
        "`get_peft_model(copy.deepcopy(base), lora_config(target_modules=[\"q_proj\", \"v_proj\"]))` "
        "(importe `get_peft_model` de `peft` e `lora_config` de `lncc_llm`).",
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
