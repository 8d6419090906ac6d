def my_point(task, demos):
    margins, positive = [], []
    for item in task.eval_items:
        prompt = prompt_ids(tokenizer, task, demos, item["text"])    # os ids, bloco a bloco, como a lição
        margins.append(label_logprob(model, tokenizer, prompt, " " + task.labels[1])
                       - label_logprob(model, tokenizer, prompt, " " + task.labels[0]))
        positive.append(item["label"] == task.labels[1])
    accuracy = sum((m > 0) == p for m, p in zip(margins, positive)) / len(margins)
    pos = [m for m, p in zip(margins, positive) if p]
    neg = [m for m, p in zip(margins, positive) if not p]
    auc = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))
    return margins, accuracy, auc

