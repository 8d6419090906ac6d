def positions_without(P, N):
    return N * P + N * (N - 1) // 2          # Σ (P + t) para t = 0, …, N − 1


def positions_with(P, N):
    return P + N - 1                         # o prompt uma vez, depois um token por passo


print(f"P = 20, N = 30: sem cache {positions_without(20, 30)}, com cache {positions_with(20, 30)}")
check("= a soma passo a passo", positions_without(20, 30), sum(20 + t for t in range(30)))
