"""Os blocos quantizados do GGUF, desfeitos em poucas linhas de NumPy: uma conferência independente.

O ``transformers`` lê um GGUF chamando o ``gguf.dequantize`` do pacote ``gguf`` (o gguf-py do
llama.cpp). Comparar o modelo carregado com esse mesmo ``gguf.dequantize`` seria comparar uma
biblioteca com ela mesma. Aqui o formato dos blocos é lido direto dos bytes, com o layout que o
llama.cpp define (``ggml-common.h``):

* **Q8_0**: blocos de 32 pesos = escala ``d`` (float16) + 32 inteiros ``int8``; peso = d·q.
  34 bytes por 32 pesos: 8,5 bits por peso.
* **Q4_1**: blocos de 32 pesos = escala ``d`` e mínimo ``m`` (float16) + 16 bytes com 32 inteiros de
  4 bits (os 4 bits de baixo guardam os pesos 0–15 do bloco; os de cima, os pesos 16–31);
  peso = d·q + m. 20 bytes por 32 pesos: 5 bits por peso.

``unpermute_qk`` desfaz a permutação de linhas que o conversor do llama.cpp aplica às projeções de
consulta e de chave (o arranjo de RoPE intercalado do llama.cpp contra o arranjo por metades do
``transformers``).
"""
from __future__ import annotations

import numpy as np

BLOCK = 32
#: bytes de um bloco de 32 pesos, por tipo
BLOCK_BYTES = {"Q8_0": 2 + BLOCK, "Q4_1": 2 + 2 + BLOCK // 2, "F32": 4 * BLOCK, "F16": 2 * BLOCK}


def bits_per_weight(kind: str) -> float:
    """Bits por peso de um tipo do GGUF, contando as escalas e mínimos de cada bloco.

    Q4_1 → 5,0 (não 4: a escala e o mínimo em float16 custam 32 bits a cada 32 pesos); Q8_0 → 8,5.
    Ver Capítulo 9, seção 9.1.3.
    """
    if kind not in BLOCK_BYTES:
        raise ValueError(f"Tipo de tensor GGUF não suportado aqui: {kind!r}. "
                         f"Use um destes: {', '.join(BLOCK_BYTES)}.")
    return 8 * BLOCK_BYTES[kind] / BLOCK


def _blocks(raw, kind: str, n_weights: int) -> np.ndarray:
    data = np.ascontiguousarray(np.asarray(raw)).view(np.uint8).reshape(-1)
    size = BLOCK_BYTES[kind]
    if n_weights % BLOCK or data.size != n_weights // BLOCK * size:
        raise ValueError(f"{data.size} bytes não formam {n_weights} pesos {kind}: são "
                         f"{size} bytes a cada bloco de {BLOCK} pesos. Passe os bytes crus do "
                         "tensor (tensor.data do GGUFReader) e a forma dele.")
    return data.reshape(-1, size)


def dequantize_q8_0(raw, shape) -> np.ndarray:
    """Pesos float32 de um tensor Q8_0: d (float16) × q (int8), bloco a bloco.

    ``raw``: os bytes do tensor como o ``GGUFReader`` os entrega (``tensor.data``); ``shape``: a
    forma do peso (linhas, colunas), como no PyTorch.
    Ver Capítulo 9, seção 9.1.3.
    """
    shape = tuple(int(s) for s in shape)
    blocks = _blocks(raw, "Q8_0", int(np.prod(shape)))
    d = blocks[:, :2].copy().view(np.float16).astype(np.float32)        # (blocos, 1)
    q = blocks[:, 2:].copy().view(np.int8).astype(np.float32)           # (blocos, 32)
    return (d * q).reshape(shape)


def dequantize_q4_1(raw, shape) -> np.ndarray:
    """Pesos float32 de um tensor Q4_1: d·q + m, com q de 0 a 15, bloco a bloco.

    Em cada bloco, os bytes 0–1 são d, os bytes 2–3 são m (float16) e os 16 bytes seguintes trazem
    dois inteiros de 4 bits cada: o de baixo é o peso j, o de cima é o peso j + 16.
    Ver Capítulo 9, seção 9.1.3.
    """
    shape = tuple(int(s) for s in shape)
    blocks = _blocks(raw, "Q4_1", int(np.prod(shape)))
    d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
    m = blocks[:, 2:4].copy().view(np.float16).astype(np.float32)
    packed = blocks[:, 4:]
    q = np.concatenate([packed & 0x0F, packed >> 4], axis=1).astype(np.float32)   # (blocos, 32)
    return (d * q + m).reshape(shape)


def dequantize_tensor(tensor) -> np.ndarray:
    """Desfaz a quantização de um tensor do ``gguf.GGUFReader`` com o código deste módulo.

    Aceita Q8_0, Q4_1 e F32. A forma sai na ordem do PyTorch (o GGUF guarda as dimensões ao
    contrário). Outro tipo dá um erro que diz quais são suportados.
    Ver Capítulo 9, seção 9.1.3.
    """
    kind = tensor.tensor_type.name
    shape = tuple(int(s) for s in reversed(tensor.shape.tolist()))
    if kind == "Q8_0":
        return dequantize_q8_0(tensor.data, shape)
    if kind == "Q4_1":
        return dequantize_q4_1(tensor.data, shape)
    if kind == "F32":
        return np.asarray(tensor.data, dtype=np.float32).reshape(shape)
    raise ValueError(f"O tensor {tensor.name!r} é {kind}; este módulo desfaz Q8_0, Q4_1 e F32.")


def unpermute_qk(weight, n_heads: int) -> np.ndarray:
    """Desfaz a permutação de linhas que o llama.cpp aplica a ``attn_q``/``attn_k``.

    Em cada cabeça (``n_heads`` blocos de linhas; para a chave, o número de cabeças de chave e
    valor), o llama.cpp intercala as duas metades da cabeça (linhas 0, h, 1, h + 1, …) para o seu
    arranjo de RoPE; o ``transformers`` usa as metades em sequência. A volta: ler cada cabeça como
    (h, 2, ...) e trocar os dois primeiros eixos.
    Ver Capítulo 9, seção 9.1.3.
    """
    w = np.asarray(weight)
    if not isinstance(n_heads, int) or n_heads < 1 or w.shape[0] % (2 * n_heads):
        raise ValueError(f"{w.shape[0]} linhas não se dividem em {n_heads!r} cabeças "
                         "de tamanho par: use o número de cabeças de consulta (para attn_q) ou "
                         "de chave (attn_k).")
    half = w.shape[0] // n_heads // 2
    return w.reshape(n_heads, half, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
