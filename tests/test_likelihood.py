"""Testes de lncc_llm.likelihood: a definição única de log p(continuação | prompt)."""
import math

import pytest
import torch

from lncc_llm import likelihood as lk
from lncc_llm.prompting import label_logprob

PROMPT = "Question: What is the largest ocean on Earth?\nAnswer:"
MESSAGES = [{"role": "user", "content": "What is El Niño?"}]
ANSWER = [{"role": "assistant", "content": "A warm phase of ENSO."}]


def test_sequence_logprob_is_the_hand_gathered_sum_of_log_softmax(decoder):
    model, tok = decoder
    p_ids = tok(PROMPT)["input_ids"]
    c_ids = tok(" the Pacific Ocean", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([p_ids + c_ids])).logits[0].double(), -1)
    by_hand = sum(float(logp[len(p_ids) - 1 + t, c]) for t, c in enumerate(c_ids))
    assert math.isclose(lk.sequence_logprob(model, tok, PROMPT, " the Pacific Ocean"), by_hand, abs_tol=1e-6)


def test_chapter5_label_logprob_is_the_same_computation(decoder):
    model, tok = decoder
    assert label_logprob(model, tok, PROMPT, " Pacific") == lk.sequence_logprob(model, tok, PROMPT, " Pacific")


def test_message_completion_is_cut_like_trl_with_the_closing_im_end(decoder):
    _, tok = decoder
    p_ids = lk.prompt_ids(tok, MESSAGES, chat=True)
    c_ids = lk.completion_ids(tok, MESSAGES, ANSWER, chat=True)
    full = tok.apply_chat_template(MESSAGES + ANSWER, tokenize=False)
    assert p_ids + c_ids == tok(full, add_special_tokens=False)["input_ids"]
    assert tok.decode(c_ids).endswith("<|im_end|>\n") and "A warm phase" in tok.decode(c_ids)


def test_batched_scores_equal_one_pair_at_a_time_despite_padding(decoder):
    model, tok = decoder
    completions = [" the Pacific Ocean", " Atlantic", " a very small pond near my house"]
    batched = lk.sequence_logprobs(model, tok, [PROMPT] * 3, completions)
    single = [lk.sequence_logprob(model, tok, PROMPT, c) for c in completions]
    assert batched == pytest.approx(single, abs=1e-4)


def test_scores_only_the_completion_positions_but_equal_the_all_positions_sum(decoder):
    # prompts de tamanhos diferentes no mesmo lote (a continuação de um começa antes da dos outros),
    # um prompt de um token e um pedaço com uma linha só: o corte das posições não muda a conta
    model, tok = decoder
    prompts = [PROMPT, "Answer:", "Q: largest ocean?\nA:", PROMPT + " Think."]
    completions = [" the Pacific Ocean", " Atlantic", " a very small pond near my house", " Indian"]
    rows = [lk.prompt_ids(tok, p) + lk.completion_ids(tok, p, c) for p, c in zip(prompts, completions)]
    starts = [len(lk.prompt_ids(tok, p)) for p in prompts]
    width = max(map(len, rows))
    ids = torch.full((len(rows), width), tok.pad_token_id, dtype=torch.long)
    attention = torch.zeros_like(ids)
    completion = torch.zeros_like(ids)
    for i, (r, n) in enumerate(zip(rows, starts)):
        ids[i, : len(r)], attention[i, : len(r)], completion[i, n : len(r)] = torch.tensor(r), 1, 1
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=attention).logits
    every_position = lk.masked_logprob_sums(logits, ids, completion).tolist()
    assert lk.sequence_logprobs(model, tok, prompts, completions) == pytest.approx(every_position, abs=1e-12)
    assert lk.sequence_logprobs(model, tok, prompts, completions, batch_size=1) == pytest.approx(
        [lk.sequence_logprob(model, tok, p, c) for p, c in zip(prompts, completions)], abs=0)


def test_masked_logprob_sums_reads_position_t_for_token_t_plus_1():
    logits = torch.log(torch.tensor([[[0.5, 0.5, 1e-9], [0.1, 0.2, 0.7], [1 / 3, 1 / 3, 1 / 3]]]))
    ids = torch.tensor([[0, 1, 2]])
    mask = torch.tensor([[0, 1, 1]])
    expected = math.log(0.5) + math.log(0.7)
    assert float(lk.masked_logprob_sums(logits, ids, mask)[0]) == pytest.approx(expected, abs=1e-6)
    assert float(lk.masked_logprob_sums(logits, ids, torch.tensor([[0, 0, 1]]))[0]) == pytest.approx(math.log(0.7))


def test_bad_inputs_raise_portuguese_errors(decoder):
    model, tok = decoder
    with pytest.raises(ValueError, match="mesmo tamanho"):
        lk.sequence_logprobs(model, tok, [PROMPT, PROMPT], [" a"])
    with pytest.raises(ValueError, match="Nada para pontuar"):
        lk.sequence_logprobs(model, tok, [], [])
    with pytest.raises(ValueError, match="chat=True"):
        lk.completion_ids(tok, PROMPT, ANSWER)
    with pytest.raises(ValueError, match="texto não vazio"):
        lk.sequence_logprob(model, tok, PROMPT, "")


def test_left_padded_batch_pads_on_the_left_and_restores_the_side(decoder):
    _, tok = decoder
    side = tok.padding_side
    batch = lk.left_padded_batch(tok, ["Hi", "A much longer prompt than the first"])
    assert batch["attention_mask"][0, 0] == 0 and batch["attention_mask"][0, -1] == 1
    assert bool(batch["attention_mask"][1].all()) and tok.padding_side == side
