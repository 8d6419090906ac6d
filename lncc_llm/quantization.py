"""Quantização do decodificador do curso na CPU: carregar, contar bytes de verdade e comparar.

Seis formatos, todos a partir da mesma pasta ``safetensors`` que ``load_decoder`` mantém:

* ``"fp32"``: a referência (o próprio ``load_decoder``);
* ``"bf16"``: metade dos bytes, mesmos pesos arredondados;
* ``"int8"``: LLM.int8 do bitsandbytes (pesos int8 por linha + escala fp32 por linha);
* ``"nf4"`` e ``"fp4"``: 4 bits do bitsandbytes (blocos de 64 pesos com um ``absmax`` fp32 cada);
* ``"int8-torchao"``: int8 só nos pesos (``Int8WeightOnlyConfig`` do torchao).

Em todos, o *embedding* amarrado à cabeça de saída fica em fp32. Não é uma propriedade das tabelas
de consulta: o ``transformers`` deixa fora da quantização, por padrão, a cabeça de saída e os pesos
amarrados a ela (``get_keys_to_not_convert``, "por estabilidade numérica"; a lista pode ser trocada
por ``llm_int8_skip_modules``), e o *embedding* de entrada não é uma camada linear. O GGUF do
Capítulo 9 guarda a mesma matriz em Q8_0.
"""
from __future__ import annotations

import functools
import importlib.util
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

KINDS = {
    "fp32": "referência em float32",
    "bf16": "bfloat16 (metade dos bytes)",
    "int8": "bitsandbytes LLM.int8 (int8 por linha)",
    "nf4": "bitsandbytes NF4 (4 bits, blocos de 64)",
    "fp4": "bitsandbytes FP4 (4 bits, blocos de 64; o padrão do BitsAndBytesConfig)",
    "int8-torchao": "torchao int8 só nos pesos",
}
_NEEDS = {"int8": "bitsandbytes", "nf4": "bitsandbytes", "fp4": "bitsandbytes",
          "int8-torchao": "torchao"}


class QuantizationUnavailableError(RuntimeError):
    """Um formato de quantização que esta máquina não consegue carregar (pacote ausente)."""


def _check_kind(kind) -> str:
    if not isinstance(kind, str) or kind.strip().lower() not in KINDS:
        valid = ", ".join(repr(k) for k in KINDS)
        raise ValueError(f"Formato de quantização desconhecido: {kind!r}. Use um destes: {valid}.")
    kind = kind.strip().lower()
    package = _NEEDS.get(kind)
    if package and importlib.util.find_spec(package) is None:
        raise QuantizationUnavailableError(
            f"O formato {kind!r} precisa do pacote {package!r}, que não está instalado. Instale as "
            "dependências do curso (pip install -r requirements.txt) ou use um destes formatos, "
            "que só precisam do torch: 'fp32', 'bf16'."
        )
    return kind


def quantization_config(kind: str, double_quant: bool = False):
    """A configuração do ``transformers`` para ``kind`` (``None`` para fp32 e bf16).

    O 4 bits pede o tipo explicitamente (o padrão do ``BitsAndBytesConfig`` é ``fp4``) e faz as
    contas em float32, que toda CPU acelera. ``double_quant=True`` guarda os ``absmax`` em 8 bits
    (QLoRA). No ``"int8"`` (LLM.int8), a mesma camada calcula de dois jeitos na CPU: em avaliação,
    arredonda também as ativações para int8 (``MatMul8bitLt``); em modo de treino, só desquantiza os
    pesos (``MatMul8bitFp``).
    Ver Capítulo 6, seção 6.5.
    """
    kind = _check_kind(kind)
    if kind in ("fp32", "bf16"):
        return None
    from transformers import BitsAndBytesConfig, TorchAoConfig

    if kind == "int8":
        return BitsAndBytesConfig(load_in_8bit=True)
    if kind in ("nf4", "fp4"):
        return BitsAndBytesConfig(bnb_4bit_quant_type=kind, bnb_4bit_compute_dtype=torch.float32,
                                  load_in_4bit=True, bnb_4bit_use_double_quant=double_quant)
    from torchao.quantization import Int8WeightOnlyConfig

    return TorchAoConfig(quant_type=Int8WeightOnlyConfig())


def use_fused_cpu_kernel(model, enabled: bool) -> None:
    """Liga ou desliga o *kernel* fundido de 4 bits do bitsandbytes (só existe em CPUs com
    AVX512-BF16).

    Ligado, a primeira passada em modo de avaliação reempacota os pesos e passa a calcular em bf16:
    mais rápido, mas com números diferentes dos de uma CPU sem AVX512-BF16.
    Ver Capítulo 6, seção 6.5.
    """
    available = False
    if enabled:
        import bitsandbytes as bnb

        available = bool(bnb.functional.has_avx512bf16())
    for module in model.modules():
        if hasattr(module, "support_avx512bf16_for_cpu"):
            # recalculado da CPU a cada chamada: desligar e depois religar volta ao que a CPU tem
            module.support_avx512bf16_for_cpu = available


def load_fresh_decoder(kind: str = "fp32", source=None, fused_cpu_kernel: bool = False,
                       double_quant: bool = False, on_cpu: bool = True):
    """Uma cópia nova (sem cache) do decodificador no formato ``kind``: a que se treina e se
    modifica.

    ``source`` é a pasta do modelo (padrão: a pasta convertida de ``load_decoder``). Os formatos
    quantizados são carregados direto no dispositivo final (a CPU, ou a GPU 0 com ``on_cpu=False``),
    sem passar inteiros pela memória da CPU.
    Ver Capítulo 7, seção 7.5.
    """
    from transformers import AutoModelForCausalLM

    from .models import ensure_decoder_cache

    kind = _check_kind(kind)
    source = source or ensure_decoder_cache()
    if kind in ("fp32", "bf16"):
        return AutoModelForCausalLM.from_pretrained(
            source, dtype=torch.float32 if kind == "fp32" else torch.bfloat16
        )
    model = AutoModelForCausalLM.from_pretrained(
        source, dtype=torch.float32, quantization_config=quantization_config(kind, double_quant),
        device_map="cpu" if on_cpu else {"": 0},
    )
    use_fused_cpu_kernel(model, fused_cpu_kernel)
    return model


@functools.lru_cache(maxsize=2 * len(KINDS))
def _load_quantized_cached(kind: str, fused_cpu_kernel: bool, double_quant: bool):
    from .models import load_decoder

    if kind == "fp32":
        return load_decoder(device="cpu")
    _, tokenizer = load_decoder(device="cpu")
    return load_fresh_decoder(kind, fused_cpu_kernel=fused_cpu_kernel,
                              double_quant=double_quant).eval(), tokenizer


def load_decoder_quantized(kind: str = "nf4", fused_cpu_kernel: bool = False,
                           double_quant: bool = False):
    """Devolve ``(modelo, tokenizador)`` do decodificador do curso no formato ``kind``, na CPU.

    ``kind`` é um de ``KINDS``: ``"fp32"``, ``"bf16"``, ``"int8"``, ``"nf4"``, ``"fp4"`` ou
    ``"int8-torchao"``. O modelo sai da pasta convertida de ``load_decoder`` e fica em cache na
    sessão. Nos 4 bits, o *kernel* fundido do bitsandbytes (só em CPUs com AVX512-BF16, e que
    calcula em bf16) fica desligado, para que os números sejam os mesmos em qualquer CPU;
    ``fused_cpu_kernel=True`` o liga onde ele existe; ``double_quant=True`` usa a quantização dupla
    do QLoRA. O modelo em cache é compartilhado: não o modifique (adaptadores, ``train()``); para
    isso, use ``load_fresh_decoder``.
    Ver Capítulo 6, seção 6.5.
    """
    from .environment import silence_library_noise

    kind = _check_kind(kind)
    silence_library_noise()
    four_bit = kind in ("nf4", "fp4")
    return _load_quantized_cached(kind, bool(fused_cpu_kernel) and four_bit,
                                  bool(double_quant) and four_bit)


# ----------------------------------------------------------------------------- bytes de verdade


def _storage_tensors(t):
    """Os tensores comuns que guardam os dados de ``t``, incluindo o que fica fora de parâmetros e
    buffers.
    """
    if t is None:
        return
    if type(t) not in (torch.Tensor, torch.nn.Parameter) and hasattr(t, "__tensor_flatten__") \
            and not hasattr(t, "quant_state") and not hasattr(t, "SCB"):
        names, _ = t.__tensor_flatten__()          # subclasses do torchao: qdata, scale, ...
        for name in names:
            yield from _storage_tensors(getattr(t, name))
        return
    yield t
    # bitsandbytes 4 bits: absmax e código, fora do módulo
    state = getattr(t, "quant_state", None)
    if state is not None:
        yield from (x for x in (state.absmax, state.code, state.offset) if torch.is_tensor(x))
        if state.state2 is not None:                # quantização dupla: absmax do absmax
            yield from (x for x in (state.state2.absmax, state.state2.code) if torch.is_tensor(x))
    scb = getattr(t, "SCB", None)                   # bitsandbytes int8: escala fp32 por linha
    if torch.is_tensor(scb):
        yield scb


def model_bytes(model: torch.nn.Module) -> int:
    """Bytes que os pesos do modelo ocupam de fato na memória.

    Soma parâmetros e buffers, contando cada armazenamento uma vez só (pesos amarrados contam uma
    vez), e inclui o que a quantização guarda fora deles: o ``absmax`` dos blocos de 4 bits, a
    escala por linha do int8 e os tensores internos das subclasses do torchao.
    Ver Capítulo 6, seção 6.6.
    """
    tensors = list(model.parameters()) + list(model.buffers())
    # o int8 do bitsandbytes tira a escala do peso e a guarda em module.state na primeira passada
    tensors += [m.state.SCB for m in model.modules()
                if torch.is_tensor(getattr(getattr(m, "state", None), "SCB", None))]
    return storage_bytes(tensors)


def storage_bytes(tensors) -> int:
    """Bytes reais de uma coleção de tensores: cada armazenamento uma vez, com o que a quantização
    guarda fora do tensor (``absmax``, escalas). ``None`` é ignorado (um gradiente que não existe).
    Ver Capítulo 6, seção 6.6, e Capítulo 7, seção 7.11.
    """
    seen, total = set(), 0
    for tensor in tensors:
        for part in _storage_tensors(tensor):
            storage = part.untyped_storage()
            key = (part.device.type, storage.data_ptr())
            if key in seen:
                continue
            seen.add(key)
            total += storage.nbytes()
    return total


def mib(n_bytes: float) -> float:
    """Bytes em MiB (2**20 bytes), a unidade que o texto-base chama de "MB".

    Ver Capítulo 6, seção 6.4.
    """
    return n_bytes / 2**20


# ---------------------------------------------------------------------- comparação com a referência


@dataclass(frozen=True)
class Comparison:
    """As estatísticas do ``--kl-divergence`` do llama.cpp, para um modelo contra a referência.

    ``n_positions`` é o número de previsões comparadas (em ``n_passages`` trechos); os ``*_se``
    são erros-padrão: binomial no acerto do top-1, desvio/√n na KL média. As posições de um mesmo
    trecho não são independentes, então esses erros-padrão são otimistas.
    """

    n_positions: int
    top1_agreement: float
    max_abs_dlogit: float
    mean_abs_dlogit: float
    mean_kl: float
    perplexity_reference: float
    perplexity_model: float
    n_passages: int = 1
    top1_se: float = 0.0
    kl_se: float = 0.0


def _logits(model, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=ids.unsqueeze(0)).logits[0].double()


def _passages(tokens) -> list[torch.Tensor]:
    items = list(tokens) if not torch.is_tensor(tokens) else [tokens]
    if items and all(isinstance(t, int) for t in items):
        items = [items]
    passages = [torch.as_tensor(t, dtype=torch.long).flatten() for t in items]
    if not passages or any(p.numel() < 2 for p in passages):
        raise ValueError("Passe pelo menos 2 tokens por trecho: a perplexidade precisa de um token "
                         "seguinte para prever.")
    return passages


def compare_to_reference(model, reference, tokens) -> Comparison:
    """Compara ``model`` com ``reference`` nas mesmas posições de ``tokens``.

    ``tokens`` é uma lista de ids (um trecho) ou uma lista de listas de ids (vários trechos,
    cada um numa passada). Em cada posição: o token mais provável é o mesmo? Quanto mudam os
    logits (máximo e média de ``|Δlogit|``)? Quanto vale ``KL(p_ref ‖ p_model)``? E a perplexidade
    de cada um ao prever o token seguinte do próprio texto. Devolve também os erros-padrão do
    acerto do top-1 e da KL média.
    Ver Capítulo 6, seção 6.5.
    """
    agree, kls, dlogits, maxima, ref_lp, got_lp = [], [], [], [], [], []
    for ids in _passages(tokens):
        ref, got = _logits(reference, ids), _logits(model, ids)
        log_p, log_q = F.log_softmax(ref, dim=-1), F.log_softmax(got, dim=-1)
        kls.append((log_p.exp() * (log_p - log_q)).sum(-1))
        delta = (got - ref).abs()
        dlogits.append(delta.mean(-1))
        maxima.append(delta.max())
        agree.append((ref.argmax(-1) == got.argmax(-1)).double())
        targets = ids[1:, None]
        ref_lp.append(log_p[:-1].gather(1, targets).flatten())
        got_lp.append(log_q[:-1].gather(1, targets).flatten())
    agree, kl = torch.cat(agree), torch.cat(kls)
    n = agree.numel()
    top1 = agree.mean().item()
    return Comparison(
        n_positions=n,
        top1_agreement=top1,
        max_abs_dlogit=torch.stack(maxima).max().item(),
        mean_abs_dlogit=torch.cat(dlogits).mean().item(),
        mean_kl=kl.mean().item(),
        perplexity_reference=math.exp(-torch.cat(ref_lp).mean().item()),
        perplexity_model=math.exp(-torch.cat(got_lp).mean().item()),
        n_passages=len(kls),
        top1_se=math.sqrt(top1 * (1 - top1) / n),
        kl_se=(kl.std().item() / math.sqrt(n)) if n > 1 else 0.0,
    )


# ----------------------------------------------------------------------------- memória de treino

#: Bytes por peso no NF4 com quantização dupla (QLoRA): 4 bits + absmax de 8 bits a cada 64 pesos
#: + uma constante fp32 a cada 64·256 pesos.
NF4_DOUBLE_QUANT_BYTES = (4 + 8 / 64 + 32 / (64 * 256)) / 8

METHODS = ("full", "lora", "qlora")


def training_memory(n_params: float, method: str, *, trainable_fraction: float = 0.01,
                    weight_bytes: float = 2.0, master_bytes: float | None = None,
                    optimizer_bytes: float = 8.0, adapter_bytes: float = 4.0,
                    unquantized_params: float = 0.0) -> dict[str, float]:
    """Bytes de pesos, gradientes, cópia mestra e estados do Adam para ajustar um modelo de
    ``n_params`` parâmetros (sem ativações).

    ``method``:

    * ``"full"``: todos treinam; pesos e gradientes com ``weight_bytes`` por parâmetro (bf16: 2);
    * ``"lora"``: base congelada com ``weight_bytes`` (sem gradiente, sem Adam) + adaptadores com
      ``trainable_fraction`` dos parâmetros, guardados com ``adapter_bytes`` (o ``peft`` os põe
      em fp32: 4), e os seus gradientes;
    * ``"qlora"``: o mesmo, com a base em NF4 com quantização dupla, exceto
      ``unquantized_params`` parâmetros (o *embedding* e a cabeça, que o ``transformers`` não
      quantiza), que ficam com ``weight_bytes``.

    O Adam guarda dois momentos fp32 (``optimizer_bytes`` = 8) por parâmetro treinável. Quem treina
    em menos de 4 bytes guarda ainda uma **cópia mestra** fp32 dos parâmetros treináveis
    (``master_bytes``; padrão: 4 se eles têm menos de 4 bytes, senão 0). Ajuste completo em bf16
    com Adam: 2 + 2 + 4 + 8 = 16 bytes por parâmetro; em fp32: 4 + 4 + 8, os mesmos 16.
    Ver Capítulo 6, seção 6.7.
    """
    if method not in METHODS:
        raise ValueError(f"Método desconhecido: {method!r}. Use um destes: "
                         f"{', '.join(map(repr, METHODS))}.")
    if n_params <= 0:
        raise ValueError(f"n_params deve ser positivo; recebi {n_params!r}.")
    if not 0 < trainable_fraction <= 1:
        raise ValueError(f"trainable_fraction deve estar em (0, 1]; recebi {trainable_fraction!r}.")
    if not 0 <= unquantized_params <= n_params:
        raise ValueError(f"unquantized_params deve estar entre 0 e n_params; recebi "
                         f"{unquantized_params!r}.")
    if method == "full":
        trainable, frozen, trained_bytes = n_params, 0.0, weight_bytes
    else:
        trainable, trained_bytes = n_params * trainable_fraction, adapter_bytes
        if method == "lora":
            frozen = n_params * weight_bytes
        else:
            frozen = ((n_params - unquantized_params) * NF4_DOUBLE_QUANT_BYTES
                      + unquantized_params * weight_bytes)
    if master_bytes is None:
        master_bytes = 4.0 if trained_bytes < 4 else 0.0
    weights = frozen + trainable * trained_bytes
    gradients = trainable * trained_bytes
    master = trainable * master_bytes
    optimizer = trainable * optimizer_bytes
    return {"pesos": weights, "gradientes": gradients, "mestra": master, "adam": optimizer,
            "total": weights + gradients + master + optimizer}
