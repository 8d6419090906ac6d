"""Testes de lncc_llm.prompting: escore de rótulos, leitura de respostas, voto da maioria e janela de contexto."""
import math
import warnings
from types import SimpleNamespace

import pytest
import torch

from lncc_llm.prompting import (
    UNDECIDED,
    classify,
    label_logprob,
    majority_vote,
    parse_label,
    prompt_ids,
    score_labels,
    simulated_window,
    truncate_ids,
    truncate_text,
)
from lncc_llm.sampling import context_window, generate

PROMPT = 'Classifique o sentimento como POSITIVO ou NEGATIVO.\n\nTexto: "Que dia lindo."\nSentimento:'


# ----------------------------------------------------------------------------- log-probabilidade dos rótulos


def _manual_logprob(model, ids_prompt, ids_label):
    """Regra da cadeia com uma passagem por token: log p(l1|x) + log p(l2|x,l1) + …"""
    total, ctx = 0.0, list(ids_prompt)
    with torch.no_grad():
        for tok_id in ids_label:
            logits = model(input_ids=torch.tensor([ctx])).logits[0, -1].double()
            total += float(torch.log_softmax(logits, -1)[tok_id])
            ctx.append(tok_id)
    return total


@pytest.mark.parametrize("label", [" POSITIVO", " NEGATIVO", " talvez sim"])
def test_label_logprob_equals_chain_rule(decoder, label):
    model, tok = decoder
    p_ids = tok(PROMPT)["input_ids"]
    l_ids = tok(label, add_special_tokens=False)["input_ids"]
    ours = label_logprob(model, tok, PROMPT, label)
    assert ours < 0
    assert math.isclose(ours, _manual_logprob(model, p_ids, l_ids), rel_tol=1e-4, abs_tol=1e-4)


def test_label_logprob_multi_token_is_not_just_the_first_token(decoder):
    model, tok = decoder
    label = " talvez sim"
    l_ids = tok(label, add_special_tokens=False)["input_ids"]
    assert len(l_ids) >= 2
    first_only = _manual_logprob(model, tok(PROMPT)["input_ids"], l_ids[:1])
    assert label_logprob(model, tok, PROMPT, label) < first_only - 1e-3


def test_chat_scoring_uses_the_chat_template(decoder):
    model, tok = decoder
    ids = prompt_ids(tok, "Olá", chat=True)
    assert ids == generate(model, tok, "Olá", max_new_tokens=1, greedy=True, chat=True).prompt_ids
    assert ids != tok("Olá")["input_ids"]
    lp_chat = label_logprob(model, tok, "Olá", "Oi", chat=True)
    assert math.isclose(lp_chat, _manual_logprob(model, ids, tok("Oi", add_special_tokens=False)["input_ids"]),
                        rel_tol=1e-4, abs_tol=1e-4)


def test_classify_returns_the_argmax(decoder):
    model, tok = decoder
    labels = [" POSITIVO", " NEGATIVO", " xyzzy"]
    best, scores = classify(model, tok, PROMPT, labels)
    assert set(scores) == set(labels) and best == max(scores, key=scores.get)
    assert scores == score_labels(model, tok, PROMPT, labels)
    assert best != " xyzzy"


def test_scoring_rejects_bad_input(decoder):
    model, tok = decoder
    with pytest.raises(ValueError, match="rótulo deve ser um texto não vazio"):
        label_logprob(model, tok, PROMPT, "")
    with pytest.raises(ValueError, match="pelo menos dois rótulos"):
        score_labels(model, tok, PROMPT, [" POSITIVO"])


# ----------------------------------------------------------------------------- leitura e voto


@pytest.mark.parametrize(
    "text, expected",
    [
        ("NEGATIVO", "NEGATIVO"),
        (" positivo.", "POSITIVO"),
        ("Sentiment: Negative", "NEGATIVO"),
        ("A resposta é POSITIVA", "POSITIVO"),
        ("POSITIVO or NEGATIVO. \"This film was...\"", None),  # ambígua
        ("Este filme foi um desperdício de tempo.", None),
        ("positividade e negatividades", None),  # só palavras inteiras
        ("", None),
    ],
)
def test_parse_label(text, expected):
    assert parse_label(text) == expected


def test_parse_label_nao_entende_negacao():
    """Limite documentado: o leitor procura palavras, não entende a frase. "não é POSITIVO" vira POSITIVO;
    quem usa parse_label num texto livre precisa saber disso (a docstring diz)."""
    assert parse_label("não é POSITIVO") == "POSITIVO"
    assert parse_label("não é POSITIVO, é NEGATIVO") is None       # com os dois rótulos, fica ambígua


def test_parse_label_with_custom_aliases():
    aliases = {"SIM": ("sim", "yes"), "NAO": ("não", "no")}
    assert parse_label("Yes!", aliases) == "SIM"
    assert parse_label("não sei", aliases) == "NAO"
    assert parse_label("talvez", aliases) is None


def test_majority_vote_counts_only_parsed_answers():
    vote = majority_vote(["NEGATIVO", None, "POSITIVO", "NEGATIVO", None])
    assert vote.label == "NEGATIVO"
    assert vote.counts == {"NEGATIVO": 2, "POSITIVO": 1}
    assert (vote.valid, vote.total) == (3, 5)


def test_majority_vote_seeded_tie_break():
    import random

    tied = [144, 85, None, 85, 144, 7]
    picks = [majority_vote(tied, tie_break=random.Random(seed)).label for seed in range(200)]
    assert set(picks) == {85, 144}                                  # só os empatados, nunca o 7
    assert 60 < picks.count(85) < 140                               # sorteio, não a primeira vista
    assert picks == [majority_vote(tied, tie_break=random.Random(s)).label for s in range(200)]
    assert picks[0] == random.Random(0).choice([85, 144])           # a regra: choice(sorted(empatados))
    assert majority_vote([3, 3, 5], tie_break=random.Random(0)).label == 3   # sem empate, o sorteio não entra
    assert majority_vote([None, None], tie_break=random.Random(0)).label == UNDECIDED
    with pytest.raises(TypeError, match="random.Random"):
        majority_vote([1, 2], tie_break=0)


def test_majority_vote_undecided_when_nothing_parses_or_tie():
    samples = ['Adunator "Initive an', "REGUMINAVING DES", "An"]
    vote = majority_vote(parse_label(s) for s in samples)
    assert vote.label == UNDECIDED == "INDETERMINADO" and vote.valid == 0 and vote.total == 3
    assert majority_vote(["POSITIVO", "NEGATIVO"]).label == UNDECIDED
    assert majority_vote([]).label == UNDECIDED
    assert majority_vote([None], undecided="?").label == "?"


# ----------------------------------------------------------------------------- janela de contexto


def test_truncate_ids_keeps_the_end_or_the_start():
    ids = list(range(10))
    assert truncate_ids(ids, 4) == [6, 7, 8, 9]
    assert truncate_ids(ids, 4, keep="first") == [0, 1, 2, 3]
    assert truncate_ids(ids, 10) == ids and truncate_ids(ids, 50) == ids
    t = torch.arange(12).reshape(1, 12)
    assert truncate_ids(t, 5).tolist() == [[7, 8, 9, 10, 11]]
    assert truncate_ids(t, 5, keep="first").shape == (1, 5)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="budget deve ser um inteiro"):
            truncate_ids(ids, bad)
    with pytest.raises(ValueError, match="keep deve ser"):
        truncate_ids(ids, 3, keep="middle")


def test_truncate_text_with_gpt2_bpe():
    from lncc_llm.tokenization import gpt2_tokenizer

    enc = gpt2_tokenizer()
    text = "Every effort moves you " * 300  # 1200 tokens
    n = len(enc.encode_ordinary(text))
    assert n > 1024
    cut = truncate_text(text, enc, 1024)
    assert len(cut.ids) == 1024 and cut.dropped == n - 1024
    assert cut.ids == enc.encode_ordinary(text)[-1024:]
    assert text.endswith(cut.text)
    short = truncate_text("Every effort moves you", enc, 1024)
    assert short.ids == [6109, 3626, 6100, 345] and short.dropped == 0


def test_truncate_text_with_hf_tokenizer(decoder):
    _, tok = decoder
    cut = truncate_text("um dois três quatro cinco seis sete oito", tok, 3, keep="first")
    assert len(cut.ids) == 3 and cut.dropped > 0 and cut.text.startswith("um")


def test_simulated_window_is_restored_even_on_error():
    model = SimpleNamespace(config=SimpleNamespace(n_positions=1024))
    with simulated_window(model, 64):
        assert context_window(model) == 64
    assert context_window(model) == 1024
    with pytest.raises(RuntimeError):
        with simulated_window(model, 32):
            raise RuntimeError("falha no meio")
    assert context_window(model) == 1024
    with pytest.raises(ValueError, match="entre 1 e a janela real"):
        with simulated_window(model, 2048):
            pass


def test_simulated_window_makes_generate_truncate(decoder):
    model, tok = decoder
    real = context_window(model)
    prompt = "um dois três quatro cinco seis sete oito nove dez onze doze treze catorze quinze dezesseis"
    with simulated_window(model, 12):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = generate(model, tok, prompt, max_new_tokens=2, greedy=True)
    assert context_window(model) == real
    assert any("descartei" in str(w.message) for w in caught)
    assert len(out.prompt_ids) == 10 and out.prompt_ids == tok(prompt)["input_ids"][-10:]


def test_prompt_may_be_a_list_of_ids(decoder):
    model, tok = decoder
    ids = tok(PROMPT)["input_ids"]
    assert prompt_ids(tok, ids) == ids
    assert math.isclose(label_logprob(model, tok, ids, " NEGATIVO"), label_logprob(model, tok, PROMPT, " NEGATIVO"),
                        rel_tol=1e-9, abs_tol=1e-9)
    with pytest.raises(ValueError, match="use chat=False"):
        prompt_ids(tok, ids, chat=True)


def test_read_sum_reads_the_stated_or_worked_answer_and_only_then_a_bare_number():
    from lncc_llm.prompting import read_sum

    assert read_sum("27 + 58 = 85. Final answer: 85", 27, 58) == 85
    assert read_sum("The final answer is 27 + 58 = 85.", 27, 58) == 85      # a conta repetida é pulada
    assert read_sum("So 27 + 58 = 124.", 27, 58) == 124
    assert read_sum("we get 27 + 58 equals 85", 27, 58) == 85
    assert read_sum("27 + 58 is 85.", 27, 58) == 85
    # a ordem trocada não é lida, de propósito: aceitá-la leria passos intermediários como resultado, e o
    # extrator prefere não ler a ler errado (Capítulo 5, seção 5.6)
    assert read_sum("58 + 27 = 85", 27, 58) is None
    assert read_sum("The sum is large.", 27, 58) is None
    assert read_sum("85", 27, 58) is None                                   # sem bare, um número solto não vale
    assert read_sum("85", 27, 58, bare=True) == 85
    assert read_sum(" 1,085.", 27, 58, bare=True) == 1085
    assert read_sum("It is 85", 27, 58, bare=True) is None                  # só o começo do texto vale
    assert read_sum("27 + 58 = 85, not 90", 27, 58, bare=True) == 85        # a conta vem antes do número solto
    assert read_sum("27 + 31 is 58", 27, 58, bare=True) is None             # um número seguido de conta não é resposta
    with pytest.raises(TypeError, match="str"):
        read_sum(85, 27, 58)


def test_arithmetic_items_are_seeded_and_in_range():
    from lncc_llm.prompting import arithmetic_items

    two = arithmetic_items("duas casas", 50, seed=0)
    assert two == arithmetic_items("duas casas", 50, seed=0) != arithmetic_items("duas casas", 50, seed=1)
    assert len(two) == len(set(two)) == 50 and all(10 <= a <= 99 and 10 <= b <= 99 for a, b in two)
    one = arithmetic_items("uma casa", 50)
    assert len(set(one)) == 50 and all(1 <= a <= 9 and 1 <= b <= 9 for a, b in one)   # sem reposição
    assert sorted(arithmetic_items("uma casa", 81)) == [(a, b) for a in range(1, 10) for b in range(1, 10)]
    with pytest.raises(ValueError, match="81 somas"):
        arithmetic_items("uma casa", 82)
    with pytest.raises(ValueError, match="família"):
        arithmetic_items("três casas", 5)
    with pytest.raises(ValueError, match="n deve ser"):
        arithmetic_items("uma casa", 0)


def test_stored_arithmetic_answers_are_the_texts_read_and_a_rerun_agrees(decoder):
    """lncc_llm/dados/cot_contas.json (scripts/cot_contas.py): as somas são as de arithmetic_items, as
    respostas gravadas são a leitura dos textos gravados, e refazer o passo a passo guloso de 8 somas
    lê a mesma resposta em quase todas (outra CPU pode virar um token perto de um empate)."""
    from lncc_llm.finetuning import greedy_answers
    from lncc_llm.prompting import arithmetic_items, arithmetic_results, majority_vote, read_sum

    stored = arithmetic_results()
    for family, rows in stored["familias"].items():
        assert [(r["a"], r["b"]) for r in rows] == arithmetic_items(family, 50, seed=0)
        for r in rows:
            assert r["direto_resposta"] == read_sum(r["direto"], r["a"], r["b"], bare=True)
            assert r["passo_resposta"] == read_sum(r["passo"], r["a"], r["b"])
            assert len(r["cadeias"]) == stored["cadeias"] == 5
            vote = majority_vote([read_sum(c, r["a"], r["b"]) for c in r["cadeias"]])
            assert r["voto"] == (None if vote.label == "INDETERMINADO" else vote.label)
    model, tok = decoder
    rows = stored["familias"]["uma casa"][:8]
    template = stored["prompts"]["passo a passo"]
    again = greedy_answers(model, tok, [[{"role": "user", "content": template.format(a=r["a"], b=r["b"])}]
                                        for r in rows], max_new_tokens=60)
    same = sum(read_sum(t, r["a"], r["b"]) == r["passo_resposta"] for t, r in zip(again, rows))
    assert same >= 7, same
