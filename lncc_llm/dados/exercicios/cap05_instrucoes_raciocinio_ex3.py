def sentence_label(text):
    found = re.fullmatch(r"\s*The review is (positive|negative)\.\s*", text)
    return found.group(1) if found else None


answers = system_runs["sistema padrão"]["answers"]
n_valid = sum(sentence_label(a) is not None for a in answers)
hits = sum(sentence_label(a) == label for a, label in zip(answers, truth))
print(f"no formato: {n_valid}/{len(answers)} | certas entre elas: {hits}/{n_valid}")
