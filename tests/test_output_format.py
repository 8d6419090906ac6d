"""Testes de lncc_llm.output_format: os validadores de formato e a margem do primeiro token."""
import pytest
import torch

from lncc_llm.output_format import first_token_margins, json_label, one_word_label

LABELS = ("negative", "positive")


def test_one_word_label_aceita_so_a_palavra():
    assert one_word_label("positive", LABELS) == "positive"
    assert one_word_label("  Negative.\n", LABELS) == "negative"        # maiúscula, ponto e espaços tolerados
    # o que um validador frouxo deixaria passar
    assert one_word_label("The review is negative.", LABELS) is None
    assert one_word_label("positive or negative", LABELS) is None
    assert one_word_label("positively", LABELS) is None
    assert one_word_label("positive!", LABELS) is None
    assert one_word_label("", LABELS) is None
    assert one_word_label(None, LABELS) is None


def test_json_label_confere_chave_e_valor():
    assert json_label('{"sentiment": "negative"}', "sentiment", LABELS) == "negative"
    assert json_label(' {"sentiment":"positive"}\n', "sentiment", LABELS) == "positive"
    assert json_label('{"sentiment": "Positive"}', "sentiment", LABELS) is None          # grafia exata
    assert json_label('{"sentiment": "positive", "why": "x"}', "sentiment", LABELS) is None   # chave a mais
    assert json_label('{"label": "positive"}', "sentiment", LABELS) is None
    assert json_label('["positive"]', "sentiment", LABELS) is None
    assert json_label('The sentiment is {"sentiment": "positive"}', "sentiment", LABELS) is None
    assert json_label("{'sentiment': 'positive'}", "sentiment", LABELS) is None          # aspas simples não é JSON


def test_rotulos_invalidos_dao_erro_em_portugues():
    with pytest.raises(ValueError, match="dois rótulos"):
        one_word_label("positive", ("positive",))
    with pytest.raises(ValueError, match="dois rótulos"):
        json_label("{}", "k", [])


def test_margens_do_lote_iguais_as_de_cada_conversa_e_ao_score_labels(decoder):
    from lncc_llm.prompting import score_labels

    model, tokenizer = decoder
    prompts = ["Is this review positive or negative? I hated it.",
               "Review: the film was a joy from the first scene to the last. Positive or negative?"]
    convs = [[{"role": "user", "content": p}] for p in prompts]
    batch = first_token_margins(model, tokenizer, convs, LABELS)         # comprimentos diferentes: preenchimento
    alone = torch.cat([first_token_margins(model, tokenizer, [c], LABELS) for c in convs])
    torch.testing.assert_close(batch, alone, atol=1e-3, rtol=0)
    for p, m in zip(prompts, alone):
        s = score_labels(model, tokenizer, p, ["positive", "negative"], chat=True)
        assert abs((s["positive"] - s["negative"]) - m.item()) < 1e-3
    assert batch[0] < 0 < batch[1]                                      # "hated" pende para negative


def test_margens_recusam_rotulo_de_varios_tokens(decoder):
    model, tokenizer = decoder
    with pytest.raises(ValueError, match="tokens"):
        first_token_margins(model, tokenizer, [[{"role": "user", "content": "x"}]], ("negative", "so-so-ish"))
    with pytest.raises(ValueError, match="vazia"):
        first_token_margins(model, tokenizer, [], LABELS)
