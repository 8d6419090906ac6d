#!/usr/bin/env python3
"""Compara a velocidade do laço de geração do curso com o ``model.generate`` do transformers.

Uso, da raiz do repositório:
    python scripts/benchmark_geracao.py [--comprimentos 32 128 512] [--repeticoes 3]

Mede tokens/s no decodificador do curso (SmolLM2-135M-Instruct, CPU por padrão), geração
gulosa sem parar no EOS, com o KV cache ligado e desligado, e imprime as razões medidas
numa mesma execução. Imprime também a largura de banda de leitura da memória, o limite de
tokens/s que ela impõe ao decode (pesos + KV cache lidos por token, ``lncc_llm.decode_speed``) e a
fração desse limite que o nosso laço com cache alcança. Metas (ver Capítulo 4, seção 4.14): nosso
laço ≥ 0,9× o transformers com cache, e o cache ≥ 2,5× mais rápido que sem cache em 128 tokens.
Não é um teste: tempos dependem da máquina; rode com a máquina ociosa.
"""
import argparse
import statistics
import time

import torch

from lncc_llm import load_decoder, setup_notebook
from lncc_llm.decode_speed import decode_bytes_per_token, decode_limit, read_bandwidth
from lncc_llm.sampling import generate

PROMPT = "Large language models rely on attention mechanisms"


def time_ours(model, tok, n, use_cache):
    start = time.perf_counter()
    out = generate(model, tok, PROMPT, max_new_tokens=n, greedy=True, use_cache=use_cache,
                   stop_at_eos=False)
    elapsed = time.perf_counter() - start
    assert len(out.new_ids) == n
    return elapsed


def time_transformers(model, tok, n, use_cache):
    ids = tok(PROMPT, return_tensors="pt").to(model.device)
    start = time.perf_counter()
    with torch.no_grad():
        out = model.generate(**ids, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                             use_cache=use_cache, pad_token_id=tok.eos_token_id)
    elapsed = time.perf_counter() - start
    assert out.shape[1] - ids["input_ids"].shape[1] == n
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comprimentos", type=int, nargs="+", default=[32, 128, 512])
    parser.add_argument("--repeticoes", type=int, default=3,
                        help="repetições por medida (vale a mediana)")
    parser.add_argument("--device", default=None)
    args = parser.parse_args()

    device = setup_notebook(device=args.device)
    model, tok = load_decoder(device=device)
    time_ours(model, tok, 4, True)  # aquecimento
    time_transformers(model, tok, 4, True)

    bandwidth = read_bandwidth()
    n_prompt = len(tok(PROMPT)["input_ids"])
    threads = torch.get_num_threads()
    print(f"\nlargura de banda de leitura: {bandwidth:.1f} GB/s ({threads} threads)")
    print(f"\n{'tokens':>6} | {'nosso+cache':>11} {'hf+cache':>9} {'nosso-cache':>11} "
          f"{'hf-cache':>9} | {'nosso/hf (cache)':>16} {'cache/sem (nosso)':>17} "
          f"{'cache/sem (hf)':>14} | {'limite':>8} {'fração':>6}")
    for n in args.comprimentos:
        rates = {}
        for name, fn, cache in [("ours_c", time_ours, True), ("hf_c", time_transformers, True),
                                ("ours_n", time_ours, False), ("hf_n", time_transformers, False)]:
            reps = args.repeticoes if (cache or n <= 128) else 1  # sem cache em 512 tokens é lento
            rates[name] = n / statistics.median(fn(model, tok, n, cache) for _ in range(reps))
        # o limite com o cache no comprimento médio da geração (prompt + n/2 posições)
        limit = decode_limit(bandwidth, decode_bytes_per_token(model, n_prompt + n // 2))
        print(f"{n:>6} | {rates['ours_c']:>9.1f}/s {rates['hf_c']:>7.1f}/s "
              f"{rates['ours_n']:>9.1f}/s {rates['hf_n']:>7.1f}/s | "
              f"{rates['ours_c'] / rates['hf_c']:>15.2f}x "
              f"{rates['ours_c'] / rates['ours_n']:>16.2f}x "
              f"{rates['hf_c'] / rates['hf_n']:>13.2f}x | "
              f"{limit:>6.1f}/s {rates['ours_c'] / limit:>6.2f}")


if __name__ == "__main__":
    main()
