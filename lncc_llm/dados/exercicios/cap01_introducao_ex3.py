from lncc_llm import fmt_int

# |V|: as palavras que aparecem depois de alguma outra (as 11 do corpus e </s>).
vocab_size = len({nxt for (_, nxt) in pair_counts})


def laplace_probability(sentence):
    # Como bigram_probability, mas cada par ganha 1 na contagem e cada denominador ganha |V|.
    tokens = ["<s>"] + sentence.split() + ["</s>"]
    result = Fraction(1)
    for prev, nxt in zip(tokens, tokens[1:]):
        result *= Fraction(pair_counts[prev, nxt] + 1, prev_counts[prev] + vocab_size)
    return result


print("|V| =", vocab_size)
for sentence in ["o urso lê um livro", "a menina lê uma carta", "o urso desenha um livro"]:
    raw, smoothed = bigram_probability(sentence), laplace_probability(sentence)
    fraction = f"{fmt_int(smoothed.numerator)}/{fmt_int(smoothed.denominator)}"
    print(f"{sentence!r:26} sem suavização {float(raw):.4f} | Laplace {fraction:>13} ≈ {float(smoothed):.2e}")
assert vocab_size == 12 and laplace_probability("o urso desenha um livro") > 0
