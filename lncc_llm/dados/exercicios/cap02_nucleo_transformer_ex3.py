bigger = {**corpus, "infelizmente": 10}
table5 = learn_bpe(bigger, n_merges=12)
check("as 12 junções à mão = as do BpeTrainer, no corpus maior", table5.merges, library_bpe_merges(bigger, 12))
new_merges = [f"{a} + {b}" for a, b in table5.merges if (a, b) not in table.merges]
lost_merges = [f"{a} + {b}" for a, b in table.merges if (a, b) not in table5.merges]
seg_new = segment("infelizmente", table5.merges)
print("junções novas   :", new_merges)
print("junções perdidas:", lost_merges)
print("infelizmente, com a tabela antiga →", " | ".join(segment("infelizmente", table.merges)))
print("infelizmente, com a tabela nova   →", " | ".join(seg_new))
