def my_paired_change(values, reference):
    """A mudança média (geométrica) das perplexidades `values` contra `reference`, trecho a trecho, e o EP da
    média do log da razão. Devolve (mudança, ep); +0.05 quer dizer 5 % acima da referência."""
    logs = [math.log(v / r) for v, r in zip(values, reference)]          # o trecho é a unidade
    mean = statistics.mean(logs)
    return math.expm1(mean), statistics.stdev(logs) / math.sqrt(len(logs))   # stdev: n − 1


stored_lora = next(r for r in runs["LoRA"] if r["semente"] == 0)
change, se = my_paired_change(stored_lora["ppl_geral"], comparison["bases"]["base"]["ppl_geral"])
print(f"LoRA, semente 0, no arquivo: {change:+.1%}, EP do log {se:.3f}")
