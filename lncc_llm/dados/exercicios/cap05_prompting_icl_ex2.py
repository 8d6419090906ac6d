arbitrary = tasks["inglês, foo/bar"]
demos = draw_demos(arbitrary, 4, seed=11)
truth = [arbitrary.labels.index(i["label"]) for i in arbitrary.eval_items]
texts = [i["text"] for i in arbitrary.eval_items]
from lncc_llm.evaluation import auroc  # noqa: E402

aucs, accs = [], []
for name, order in (("sorteada", demos), ("inversa", demos[::-1])):
    m = label_margins(model, tokenizer, arbitrary, order, texts).tolist()
    aucs.append(auroc(m, [bool(t) for t in truth]))
    accs.append(sum((x > 0) == bool(t) for x, t in zip(m, truth)) / len(m))
    print(f"ordem {name:<9} {[d['label'] for d in order]} -> AUC {aucs[-1]:.2f}, acurácia {accs[-1]:.2f}")
