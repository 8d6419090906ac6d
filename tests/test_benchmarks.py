"""Testes de lncc_llm.benchmarks: a sonda por log-verossimilhança, a tarefa gerativa e o lm-evaluation-harness."""
import json

import pytest

from lncc_llm import benchmarks as ev
from lncc_llm.judge import judge_pairs
from lncc_llm.likelihood import sequence_logprob


def test_course_task_has_48_items_with_balanced_answers():
    items = ev.mc_items()
    assert len(items) == 48
    assert sorted(i["answer"] for i in items) == [0] * 12 + [1] * 12 + [2] * 12 + [3] * 12
    assert all(len(i["choices"]) == 4 and len(set(i["choices"])) == 4 for i in items)
    assert len({i["question"] for i in items}) == 48
    assert len(judge_pairs()) == 52


def test_mc_items_bad_files_get_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="não encontrado"):
        ev.mc_items(tmp_path / "nao_existe.json")
    bad = tmp_path / "ruim.json"
    bad.write_text('[{"question": "x", "choices": ["a", "b"], "answer": 0,}]', encoding="utf-8")
    with pytest.raises(ValueError, match="não é um JSON válido.*linha 1"):
        ev.mc_items(bad)
    bad.write_text('{"question": "x"}', encoding="utf-8")
    with pytest.raises(ValueError, match="lista de questões"):
        ev.mc_items(bad)
    bad.write_text('[{"question": "x", "choices": ["a", "b"], "answer": 2}]', encoding="utf-8")
    with pytest.raises(ValueError, match="índice"):
        ev.mc_items(bad)
    bad.write_bytes("[{\"question\": \"ol\xe1\"}]".encode("latin-1"))
    with pytest.raises(ValueError, match="UTF-8"):
        ev.mc_items(bad)


def test_multiple_choice_accuracy_matches_hand_scores_and_lm_eval_normalisation(decoder):
    model, tok = decoder
    items = ev.mc_items()[:3]
    res = ev.multiple_choice_accuracy(model, tok, items)
    for item, lls, pred, pred_norm in zip(items, res.loglikelihoods, res.predictions, res.predictions_norm):
        ctx = ev.MC_PROMPT.format(**item)
        hand = [sequence_logprob(model, tok, ctx, " " + c) for c in item["choices"]]
        assert lls == pytest.approx(hand, abs=1e-4)
        assert pred == max(range(4), key=hand.__getitem__)
        assert pred_norm == max(range(4), key=lambda k: hand[k] / len(item["choices"][k]))
    assert res.acc == sum(p == i["answer"] for p, i in zip(res.predictions, items)) / 3
    sub = res.subset([0, 2])
    assert sub.predictions == [res.predictions[0], res.predictions[2]] and sub.answers == [items[0]["answer"], items[2]["answer"]]


def test_multiple_choice_rejects_bad_items(decoder):
    model, tok = decoder
    with pytest.raises(ValueError, match="vazio"):
        ev.multiple_choice_accuracy(model, tok, [])
    with pytest.raises(ValueError, match="índice"):
        ev.multiple_choice_accuracy(model, tok, [{"question": "q", "choices": ["a", "b"], "answer": 2}])


def test_lm_eval_harness_agrees_with_our_scorer_offline(tiny_dir, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_dir).eval()
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    items = ev.mc_items()[:4]
    data = tmp_path / "quatro.json"
    data.write_text(json.dumps(items))
    folder = ev.lm_eval_task(tmp_path / "tarefa", data)
    harness = ev.run_lm_eval(model, tok, folder, quiet=True)
    ours = ev.multiple_choice_accuracy(model, tok, items)
    assert harness["acc"] == ours.acc and harness["acc_norm"] == ours.acc_norm
    flat = [v for row in harness["loglikelihoods"] for v in row]
    assert flat == pytest.approx([v for row in ours.loglikelihoods for v in row], abs=1e-3)
    # o erro-padrão do harness é o de uma média: desvio amostral (n − 1) / √n
    hits = ours.correct()
    p, n = sum(hits) / len(hits), len(hits)
    expected_se = (p * (1 - p) * n / (n - 1)) ** 0.5 / n ** 0.5
    assert harness["acc_stderr"] == pytest.approx(expected_se, abs=1e-9)
    without = ev.run_lm_eval(model, tok, folder, quiet=True, bootstrap_iters=0)
    assert without["acc_stderr"] != without["acc_stderr"]          # nan: o harness não calcula


def test_lm_eval_in_a_kernel_with_a_fresh_datasets_cache_shows_nothing_under_nbval(tiny_dir, tmp_path):
    # na primeira execução, o datasets gera o split do JSON e mostra uma barra (um widget, no kernel):
    # o nbval a veria como saída inesperada. Sob LNCC_LLM_QUIET=1, run_lm_eval não mostra nada.
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import os\n"
            f"os.environ['HF_DATASETS_CACHE'] = {str(tmp_path / 'hf_datasets')!r}\n"
            "os.environ['LNCC_LLM_QUIET'] = '1'\n"
            "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
            "from lncc_llm import benchmarks as ev\n"
            f"model = AutoModelForCausalLM.from_pretrained({str(tiny_dir)!r}).eval()\n"
            f"tok = AutoTokenizer.from_pretrained({str(tiny_dir)!r})"),
        nbformat.v4.new_code_cell("result = ev.run_lm_eval(model, tok)"),
        nbformat.v4.new_code_cell("print(sorted(result))"),
    ]
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    assert nb.cells[1].outputs == []
    assert nb.cells[2].outputs[0]["text"].strip() == "['acc', 'acc_norm', 'acc_norm_stderr', 'acc_stderr', 'contexts', 'loglikelihoods']"


def test_mc_confidences_are_the_softmax_maximum():
    res = ev.MCResult(0.5, 0.5, [[0.0, 0.0], [0.0, -100.0]], [0, 0], [0, 0], [0, 1])
    assert res.confidences() == pytest.approx([0.5, 1.0])
    assert res.correct() == [True, False]


def test_normalized_confidence_uses_per_character_scores():
    r = ev.MCResult(0.0, 0.0, [[-2.0, -6.0]], [0], [1], [1], [[1, 6]])
    assert r.confidences()[0] == pytest.approx(1 / (1 + 2.718281828459045 ** -4), rel=1e-9)
    assert r.confidences(normalized=True)[0] == pytest.approx(1 / (1 + 2.718281828459045 ** -1), rel=1e-9)
    assert r.correct() == [False] and r.correct(normalized=True) == [True]


def test_gen_items_are_twenty_sums_with_their_answers():
    items = ev.gen_items()
    assert len(items) == 20 and len({i["question"] for i in items}) == 20
    for item in items:
        a, b = map(int, item["question"].removeprefix("What is ").rstrip("?").split(" + "))
        assert 10 <= a <= 49 and 10 <= b <= 49 and item["answer"] == str(a + b)


def test_number_in_reads_the_first_or_the_last_integer():
    assert ev.number_in(" 17 + 30 = 47") == "17"
    assert ev.number_in(" 17 + 30 = 47", "ultimo") == "47"
    assert ev.number_in("The answer is -3.") == "-3"
    assert ev.number_in("no digits here") is None
    with pytest.raises(ValueError, match="primeiro"):
        ev.number_in("1", "meio")


def test_generative_task_in_the_harness_equals_our_generation(tiny_dir, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lncc_llm.sampling import generate

    model = AutoModelForCausalLM.from_pretrained(tiny_dir).eval()
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    items = [{"question": "What is 11 + 12?", "answer": "23"},
             {"question": "What is 30 + 4?", "answer": "34"}]
    gen_file = tmp_path / "contas.json"
    gen_file.write_text(json.dumps(items))
    folder = ev.lm_eval_task(tmp_path / "tarefa", gen_file=gen_file)
    out = ev.run_lm_eval(model, tok, folder, task=ev.GEN_TASK_NAME, quiet=True)
    ours = [generate(model, tok, ev.MC_PROMPT.format(**i), max_new_tokens=ev.GEN_MAX_TOKENS,
                     greedy=True).text.split("\n")[0] for i in items]
    assert [g.strip() for g in out["generations"]] == [g.strip() for g in ours]
    assert out["contexts"] == [ev.MC_PROMPT.format(**i) for i in items]
    for which in ("primeiro", "ultimo"):
        hits = [ev.number_in(t, which) == i["answer"] for t, i in zip(ours, items)]
        assert out[f"{which}_numero"] == sum(hits) / len(hits)
    with pytest.raises(ValueError, match="desconhecida"):
        ev.run_lm_eval(model, tok, folder, task="gsm8k")


def test_chat_template_flag_drops_the_space_before_the_choice(tiny_dir, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_dir).eval()
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    items = ev.mc_items()[:3]
    data = tmp_path / "tres.json"
    data.write_text(json.dumps(items))
    folder = ev.lm_eval_task(tmp_path / "tarefa", data)
    chat = ev.run_lm_eval(model, tok, folder, apply_chat_template=True, quiet=True)
    prompt = tok.apply_chat_template([{"role": "user", "content": ev.MC_PROMPT}],
                                     add_generation_prompt=True, tokenize=False)
    assert chat["contexts"] == [prompt.format(**i) for i in items]
    # sem o espaço antes da alternativa, e com o "\n" do fim do template passado para a continuação
    assert prompt.endswith("<|im_start|>assistant\n")
    ours = ev.multiple_choice_accuracy(model, tok, items, prompt=prompt[:-1], delimiter="\n")
    flat = [v for row in chat["loglikelihoods"] for v in row]
    assert flat == pytest.approx([v for row in ours.loglikelihoods for v in row], abs=1e-3)
    spaced = ev.multiple_choice_accuracy(model, tok, items, prompt=prompt)
    assert [v for row in spaced.loglikelihoods for v in row] != pytest.approx(flat, abs=1e-3)
