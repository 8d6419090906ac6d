paraphrases = ["Why does warm ocean water feed hurricanes?",
               "Where do cyclones get their strength?"]
sims2 = cross_similarities(train_texts, eval_texts + paraphrases)
best_paraphrases = sims2[-2:].max(axis=1)
for text, best in zip(paraphrases, best_paraphrases):
    print(f"{text:<44} similaridade máxima {best:.3f}")
print(f"(limiar {threshold:.3f}; maior par comum: {others.max():.3f})")
