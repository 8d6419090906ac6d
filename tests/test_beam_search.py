"""A busca em feixe de lncc_llm.beam_search contra o model.generate(num_beams=…) do transformers."""
import pytest
import torch

from lncc_llm.beam_search import beam_search
from lncc_llm.likelihood import sequence_logprob
from lncc_llm.sampling import encode_prompt, generate


def _hf_beams(model, prompt_ids, **kwargs):
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt_ids]), do_sample=False, **kwargs)
    return out[0, len(prompt_ids):].tolist()


@pytest.mark.parametrize("prompt, chat, beams, new, penalty", [
    ("The capital of France is", False, 3, 8, 1.0),       # termina no último passo
    ("Once upon a time,", False, 2, 8, 0.0),              # sem normalização pelo comprimento
    ("What is 2+2?", True, 2, 16, 1.0),                    # termina no EOS (8 tokens), com parada antecipada
])
def test_same_tokens_as_transformers(decoder, prompt, chat, beams, new, penalty):
    model, tok = decoder
    ours = beam_search(model, tok, prompt, num_beams=beams, max_new_tokens=new, length_penalty=penalty,
                       chat=chat)
    prompt_ids = encode_prompt(tok, prompt, chat)
    assert ours.new_ids == _hf_beams(model, prompt_ids, num_beams=beams, max_new_tokens=new,
                                     length_penalty=penalty)


def test_one_beam_is_greedy(decoder):
    model, tok = decoder
    ours = beam_search(model, tok, "Transformers are models that", num_beams=1, max_new_tokens=8)
    greedy = generate(model, tok, "Transformers are models that", max_new_tokens=8, greedy=True)
    assert ours.new_ids == greedy.new_ids


def test_score_is_the_length_normalised_sum_of_log_probs(decoder):
    model, tok = decoder
    ours = beam_search(model, tok, "The capital of France is", num_beams=2, max_new_tokens=6,
                       length_penalty=1.0)
    logp = sequence_logprob(model, tok, ours.prompt_ids, ours.new_ids)     # conta independente
    assert ours.logprob == pytest.approx(logp, abs=1e-3)
    assert ours.score == pytest.approx(logp / len(ours.new_ids), abs=1e-3)
    assert [s for s, _ in ours.finished] == sorted((s for s, _ in ours.finished), reverse=True)


@pytest.mark.parametrize("kwargs, message", [
    ({"num_beams": 0}, "num_beams deve ser um inteiro"),
    ({"num_beams": 2.0}, "num_beams deve ser um inteiro"),
    ({"max_new_tokens": 0}, "max_new_tokens deve ser um inteiro"),
    ({"max_new_tokens": 10_000}, "não cabe na janela"),
])
def test_bad_input_gets_pt_br_errors(decoder, kwargs, message):
    model, tok = decoder
    with pytest.raises(ValueError, match=message):
        beam_search(model, tok, "Olá", **kwargs)


def test_beam_tree_keeps_what_the_beam_search_keeps(decoder):
    from lncc_llm.beam_search import beam_tree

    model, tok = decoder
    tree = beam_tree(model, tok, "The capital of France is", num_beams=2, steps=3)
    ours = beam_search(model, tok, "The capital of France is", num_beams=2, max_new_tokens=3)
    assert [len(step) for step in tree] == [2, 4, 4]
    assert [sorted(n.rank for n in step if n.rank is not None) for step in tree] == [[0, 1]] * 3
    best = next(n for n in tree[-1] if n.rank == 0)
    assert best.total == pytest.approx(ours.logprob, abs=1e-3)              # a melhor do passo 3 = a do feixe
    assert best.token == tok.decode([ours.new_ids[-1]])
    assert all(n.total <= best.total + 1e-6 for n in tree[-1])
    with pytest.raises(ValueError, match="steps deve ser"):
        beam_tree(model, tok, "Olá", steps=0)


def test_draw_beam_tree_marks_kept_and_pruned_edges(decoder):
    import matplotlib

    matplotlib.use("Agg")
    from lncc_llm.beam_search import beam_tree
    from lncc_llm.diagrams import draw_beam_tree

    model, tok = decoder
    fig = draw_beam_tree(beam_tree(model, tok, "Once upon a time,", num_beams=2, steps=3), "Once upon a time,")
    gids = [line.get_gid() for line in fig.axes[0].lines]
    assert gids.count("mantido") == 6 and gids.count("podado") == 4
