question = "What is 10 + 5? Think step by step, then give the final answer."
samples = sample_many(model, tokenizer, question, n=10, max_new_tokens=32, temperature=0.7, top_p=0.9,
                      seed=0, chat=True)
answers = [read_sum(s, 10, 5) for s in samples]
vote = majority_vote(answers)
vote_label = vote.label
wrong_distinct = len({a for a in answers if a is not None and a != 10 + 5})
for s, answer in zip(samples, answers):
    print(f"{' '.join(s.split())[:70]!r:<74} -> {answer}")
print(f"voto: {vote.label} ({vote.valid}/10 válidas) | respostas erradas diferentes: {wrong_distinct}")
