"""A quantização em 4 bits por blocos, escrita à mão: o que o bitsandbytes faz com cada peso.

Dois passos, os dois conferidos contra o bitsandbytes em ``tests/test_quant4bit.py``:

* :func:`fake_quantize_4bit`: blocos de ``blocksize`` pesos seguidos, um ``absmax`` por bloco, o
  nível mais próximo numa tabela de 16 valores (NF4 ou FP4) e a volta (nível × ``absmax``);
* :func:`double_quantize_absmax`: a quantização dupla do QLoRA, que guarda os ``absmax`` em 8 bits
  (tira-se a média, ``offset``; blocos de 256; o nível mais próximo na tabela dinâmica de 256
  valores).

As duas devolvem os valores **reconstruídos** (float32), que é o que a conta do modelo usa.
"""
from __future__ import annotations

import torch

__all__ = ["double_quantize_absmax", "fake_quantize_4bit", "linear4bit_bytes", "nearest_level"]


def _conferir_tabela(levels, tamanho: int, nome: str) -> torch.Tensor:
    if not torch.is_tensor(levels) or levels.ndim != 1 or levels.numel() != tamanho:
        forma = tuple(levels.shape) if torch.is_tensor(levels) else type(levels).__name__
        onde = "Linear4bit" if tamanho == 16 else "com quantização dupla (state2.code)"
        raise ValueError(f"A tabela {nome} precisa ser um tensor 1-D de {tamanho} valores; veio "
                         f"{forma}. Use, por exemplo, `camada.weight.quant_state.code` de uma "
                         f"camada {onde}.")
    return levels.float()


def nearest_level(x: torch.Tensor, levels: torch.Tensor) -> torch.Tensor:
    """O índice do nível de ``levels`` mais próximo de cada valor de ``x`` (o mesmo formato de
    ``x``).

    Capítulo 6, seção 6.5 ("Uma linha quantizada à mão").
    """
    return (x[..., None] - levels).abs().argmin(dim=-1)


def fake_quantize_4bit(w: torch.Tensor, levels: torch.Tensor,
                       blocksize: int = 64) -> torch.Tensor:
    """Quantiza ``w`` em 4 bits por blocos e devolve os pesos reconstruídos, com o formato de ``w``.

    Os pesos são lidos em ordem (``w.flatten()``) em blocos de ``blocksize``; cada bloco é dividido
    pelo seu ``absmax`` (o maior |peso|), cada valor vai para o nível mais próximo de ``levels`` (16
    valores em [−1, 1], NF4 ou FP4) e volta multiplicado pelo ``absmax``. Capítulo 6, seção 6.5
    ("Uma linha quantizada à mão").
    """
    levels = _conferir_tabela(levels, 16, "de 4 bits")
    if not isinstance(blocksize, int) or blocksize <= 0 or w.numel() % blocksize:
        raise ValueError(f"O número de pesos ({w.numel()}) precisa ser múltiplo do tamanho do "
                         f"bloco ({blocksize!r}); o bitsandbytes usa blocos de 64 (ou 32, 128, …, "
                         "4096).")
    blocks = w.detach().float().reshape(-1, blocksize)
    absmax = blocks.abs().amax(dim=1, keepdim=True)
    scaled = blocks / absmax.clamp(min=1e-38)     # um bloco todo zero fica zero, sem 0/0
    return (levels[nearest_level(scaled, levels)] * absmax).reshape(w.shape)


def double_quantize_absmax(absmax: torch.Tensor, code: torch.Tensor,
                           blocksize: int = 256) -> torch.Tensor:
    """Os ``absmax`` (float32, um por bloco de pesos) depois da ida e volta da quantização dupla.

    Subtrai-se a média (o ``offset``); os valores centrados são lidos em blocos de ``blocksize`` (o
    último pode ser menor), cada bloco dividido pelo seu maior |valor| e levado ao nível mais
    próximo de ``code`` (a tabela dinâmica de 256 valores do bitsandbytes); a volta multiplica e
    soma o ``offset``. Capítulo 6, seção 6.5, exercício 2.
    """
    code = _conferir_tabela(code, 256, "da quantização dupla")
    if not torch.is_tensor(absmax) or absmax.ndim != 1:
        raise ValueError("`absmax` precisa ser um tensor 1-D, um valor por bloco de pesos (o "
                         "`camada.weight.quant_state.absmax` de uma camada nf4 sem quantização "
                         "dupla).")
    absmax = absmax.float()
    offset = absmax.mean()
    centered = absmax - offset
    out = torch.empty_like(centered)
    for start in range(0, centered.numel(), blocksize):
        block = centered[start:start + blocksize]
        scale = block.abs().max().clamp(min=1e-38)
        out[start:start + blocksize] = code[nearest_level(block / scale, code)] * scale
    return out + offset


def linear4bit_bytes(layer) -> dict[str, int]:
    """Os bytes que uma chamada de uma ``bnb.nn.Linear4bit`` (sem o *kernel* fundido, sem
    quantização dupla) move, contados nos tensores dela: ``"quantizado"``, os índices de 4 bits
    (dois por byte) e os ``absmax`` float32 que a ``dequantize_4bit`` lê; ``"copia"``, a matriz
    float32 que ela escreve e que a ``F.linear`` lê de novo (a mesma conta dá os bytes que o fp32
    lê). Capítulo 6, segunda parte, seção 6.5.
    """
    estado = getattr(getattr(layer, "weight", None), "quant_state", None)
    if estado is None:
        raise ValueError("A camada precisa ser uma `bnb.nn.Linear4bit` já quantizada (de um modelo "
                         "carregado com `load_decoder_quantized(\"nf4\")`, por exemplo): o peso "
                         "dela tem um `quant_state`.")
    if estado.nested:
        raise ValueError("Esta camada usa quantização dupla (os absmax em 8 bits, com um segundo "
                         "nível): a conta aqui é a do nf4 simples. Use "
                         "`load_decoder_quantized(\"nf4\")`, sem `double_quant`.")
    indices = layer.weight.data.untyped_storage().nbytes()
    quantizado = indices + estado.absmax.numel() * estado.absmax.element_size()
    return {"quantizado": quantizado, "copia": 4 * layer.in_features * layer.out_features}
