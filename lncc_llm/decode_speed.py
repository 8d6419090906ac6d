"""O teto do *decode*: a largura de banda da memória e os bytes lidos por token.

Num passo de *decode*, o modelo lê todos os pesos e todo o *KV cache* para produzir um token. Se
ler fosse o único custo, o passo levaria ``bytes lidos / largura de banda``, e o inverso disso é o
máximo de tokens por segundo da máquina com aquele modelo, uma sequência por vez. O Capítulo 4
escreve essa conta no notebook; ``scripts/benchmark_geracao.py`` a usa daqui.

Ver Capítulo 4, seção 4.14.3.
"""
from __future__ import annotations

import time

import torch


def read_bandwidth(n_bytes: int = 256 * 2**20, repeats: int = 5) -> float:
    """GB/s lidos da memória: ``n_bytes`` divididos pelo melhor tempo de ``repeats`` somas de um
    vetor fp32 desse tamanho (escolha um vetor bem maior que os *caches* do processador).

    Ver Capítulo 4, seção 4.14.3.
    """
    if isinstance(n_bytes, bool) or not isinstance(n_bytes, int) or n_bytes < 4 * 2**20:
        raise ValueError("n_bytes deve ser um inteiro ≥ 4 MiB (4 194 304), maior que os caches "
                         f"da CPU; recebi {n_bytes!r}.")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats deve ser um inteiro ≥ 1; recebi {repeats!r}.")
    x = torch.ones(n_bytes // 4)
    x.sum()                                                      # aquecimento
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        x.sum()
        best = min(best, time.perf_counter() - start)
    return n_bytes / best / 1e9


def decode_bytes_per_token(model, n_positions: int) -> int:
    """Bytes lidos num passo de *decode* com ``n_positions`` posições no cache: os pesos (os
    amarrados contam uma vez) mais ``2 · camadas · cabeças KV · d_cabeça · n · bytes`` do cache, na
    precisão dos pesos. Vale para modelos da família Llama (o SmolLM2).

    Ver Capítulo 4, seção 4.14.3.
    """
    if isinstance(n_positions, bool) or not isinstance(n_positions, int) or n_positions < 0:
        raise ValueError(f"n_positions deve ser um inteiro ≥ 0; recebi {n_positions!r}.")
    config = model.config
    if not hasattr(config, "num_key_value_heads"):
        raise ValueError("decode_bytes_per_token lê num_key_value_heads da configuração (família "
                         f"Llama); a de {type(model).__name__} não tem.")
    weights = sum(p.nbytes for p in model.parameters())    # parameters() não repete os amarrados
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    itemsize = next(model.parameters()).element_size()
    per_position = 2 * config.num_hidden_layers * config.num_key_value_heads * head_dim * itemsize
    cache = per_position * n_positions
    return weights + cache


def decode_limit(bandwidth_gb_s: float, bytes_per_token: int) -> float:
    """O máximo de tokens por segundo se ler a memória fosse o único custo do passo.

    Ver Capítulo 4, seção 4.14.3.
    """
    if not bandwidth_gb_s > 0 or not bytes_per_token > 0:
        raise ValueError("a largura de banda (GB/s) e os bytes por token devem ser positivos; "
                         f"recebi {bandwidth_gb_s!r} e {bytes_per_token!r}.")
    return bandwidth_gb_s * 1e9 / bytes_per_token


def cpu_bf16_support() -> dict:
    """O que a CPU oferece para o bf16: a capacidade que o PyTorch usa (``"AVX2"``, ``"AVX512"``…) e
    se há instruções de produto em bf16 (AVX512-BF16) e blocos de matriz (AMX).

    Ver Capítulo 4, seção 4.14.3.
    """
    return {"capacidade": torch.backends.cpu.get_cpu_capability(),
            "avx512_bf16": bool(torch.cpu._is_avx512_bf16_supported()),
            "amx": bool(torch.cpu._is_amx_tile_supported())}


def gemv_seconds(weight: torch.Tensor, repeats: int = 20) -> float:
    """O melhor tempo de ``x @ weight.T`` para um vetor ``x`` (um token), no tipo de ``weight``: a
    conta de uma camada num passo de *decode*, que lê a matriz inteira uma vez.

    Ver Capítulo 4, seção 4.14.3.
    """
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        raise ValueError("gemv_seconds espera uma matriz de pesos (saída, entrada) do PyTorch.")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats deve ser um inteiro ≥ 1; recebi {repeats!r}.")
    x = torch.ones(1, weight.shape[1], dtype=weight.dtype, device=weight.device)
    best = float("inf")
    with torch.no_grad():
        torch.nn.functional.linear(x, weight)                          # aquecimento
        for _ in range(repeats):
            start = time.perf_counter()
            torch.nn.functional.linear(x, weight)
            best = min(best, time.perf_counter() - start)
    return best


@torch.no_grad()
def batch_decode_seconds(model, tokenizer, prompt: str, batch_size: int, steps: int = 8) -> float:
    """A mediana do tempo de um passo de *decode* com ``batch_size`` sequências no mesmo passo (o
    mesmo prompt repetido, guloso, com *KV cache*): os pesos lidos uma vez servem a todas.

    Ver Capítulo 4, seção 4.14.3.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size deve ser um inteiro ≥ 1; recebi {batch_size!r}.")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps deve ser um inteiro ≥ 1; recebi {steps!r}.")
    device = next(model.parameters()).device
    ids = torch.tensor([tokenizer(prompt)["input_ids"]] * batch_size, device=device)
    out = model(ids, use_cache=True)                                    # prefill (fora da medida)
    cache, times = out.past_key_values, []
    token = out.logits[:, -1].argmax(-1, keepdim=True)
    for _ in range(steps + 1):                                          # o primeiro passo aquece
        start = time.perf_counter()
        out = model(token, past_key_values=cache, use_cache=True)
        token = out.logits[:, -1].argmax(-1, keepdim=True)
        times.append(time.perf_counter() - start)
        cache = out.past_key_values
    return float(torch.tensor(times[1:]).median())
