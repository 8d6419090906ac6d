def positions_without(P, N):
    return N * P + N * (N - 1) // 2          # Σ (P + t) para t = 0, …, N − 1


def positions_with(P, N):
    return P + N - 1                         # o prompt uma vez, depois um token por passo


P, N = 37, 30                                # o prompt e os tokens cronometrados na seção B.8
print(f"P = {P}, N = {N}: sem cache {fmt_int(positions_without(P, N))}, com cache {positions_with(P, N)}")
check("= a soma passo a passo", positions_without(P, N), sum(P + t for t in range(N)))
