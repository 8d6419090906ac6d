"""lncc_llm.icl: os dados do curso, o sorteio dos exemplos e as margens com o prefixo em cache."""
import pytest

from lncc_llm.icl import (
    calibrated_margins,
    draw_demos,
    icl_set,
    kshot_curve,
    label_margins,
    prompt_ids,
    relabel,
)
from lncc_llm.likelihood import sequence_logprob


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_course_data_is_balanced_and_disjoint(lang):
    data = icl_set(lang)
    assert len(data.eval_items) == 48 and len(data.demo_items) == 16
    for items, n in ((data.eval_items, 24), (data.demo_items, 8)):
        assert [i["label"] for i in items].count(data.labels[1]) == n
        assert {i["label"] for i in items} == set(data.labels)
    assert not {i["text"] for i in data.eval_items} & {i["text"] for i in data.demo_items}


def test_english_and_portuguese_are_parallel():
    en, pt = icl_set("en"), icl_set("pt")
    assert [en.labels.index(i["label"]) for i in en.eval_items] == [pt.labels.index(i["label"]) for i in pt.eval_items]


def test_draws_are_balanced_reproducible_and_vary_with_the_seed():
    data = icl_set("en")
    four = draw_demos(data, 4, seed=3)
    assert sorted(d["label"] for d in four) == ["negative", "negative", "positive", "positive"]
    assert draw_demos(data, 4, seed=3) == four
    assert any(draw_demos(data, 4, seed=s) != four for s in range(4, 10))
    assert len(draw_demos(data, 1, seed=0)) == 1 and draw_demos(data, 0, seed=0) == []
    for bad in (-1, 17, 2.0):
        with pytest.raises(ValueError, match="k deve ser um inteiro"):
            draw_demos(data, bad, seed=0)


def test_prompt_ends_where_the_label_goes():
    data = icl_set("en")
    prompt = data.prompt(draw_demos(data, 2, seed=0), "Nice.")
    assert prompt.endswith("Review: Nice.\nSentiment:") and prompt.count("Sentiment:") == 3


@pytest.mark.parametrize("lang, k, n", [("en", 2, 4), ("pt", 2, 5)])   # um token por rótulo, e vários
def test_cached_margins_equal_the_full_prompt_scored_independently(decoder, lang, k, n):
    model, tok = decoder
    data = icl_set(lang)
    demos = draw_demos(data, k, seed=1)
    texts = [i["text"] for i in data.eval_items[:n]]
    ours = label_margins(model, tok, data, demos, texts, batch_size=3)
    for text, margin in zip(texts, ours.tolist()):
        ids = prompt_ids(tok, data, demos, text)
        pos, neg = (sequence_logprob(model, tok, ids, data.answer_format.format(label=lab))
                    for lab in (data.labels[1], data.labels[0]))
        assert margin == pytest.approx(pos - neg, abs=1e-3)


def test_calibration_subtracts_the_content_free_margin(decoder):
    model, tok = decoder
    data = icl_set("en")
    demos = draw_demos(data, 2, seed=0)
    texts = [i["text"] for i in data.eval_items[:3]]
    calibrated, bias = calibrated_margins(model, tok, data, demos, texts)
    raw = label_margins(model, tok, data, demos, texts)
    assert calibrated.tolist() == pytest.approx((raw - bias).tolist())
    assert bias == pytest.approx(float(label_margins(model, tok, data, demos, ["N/A"])[0]))


def test_curve_accuracy_and_auc_match_sklearn(decoder):
    from sklearn.metrics import roc_auc_score

    model, tok = decoder
    data = icl_set("en")
    (point,) = kshot_curve(model, tok, data, ks=(0,), draws=2)
    truth = [data.labels.index(i["label"]) for i in data.eval_items]
    assert point.k == 0 and point.draw == 0 and len(point.margins) == 48
    assert point.auc == pytest.approx(roc_auc_score(truth, point.margins))
    assert point.accuracy == sum((m > 0) == bool(t) for m, t in zip(point.margins, truth)) / 48
    _, bias = calibrated_margins(model, tok, data, [], ["x"])      # o "N/A" pontuado à parte
    assert point.bias == pytest.approx(bias, abs=1e-4)
    calibrated = sum((m > point.bias) == bool(t) for m, t in zip(point.margins, truth)) / 48
    assert point.calibrated_accuracy == calibrated


def test_extra_draws_continue_the_same_curve(decoder):
    model, tok = decoder
    data = relabel(icl_set("en"), {"negative": "bar", "positive": "foo"})
    full = kshot_curve(model, tok, data, ks=(0, 1), draws=2)
    extra = kshot_curve(model, tok, data, ks=(0, 1), draws=2, first_draw=1)
    assert [(p.k, p.draw) for p in extra] == [(1, 1)]                  # k = 0 tem um sorteio só, já feito
    assert extra[0].demos == full[-1].demos and extra[0].auc == pytest.approx(full[-1].auc)


def test_relabel_renames_every_label_and_keeps_the_items():
    data = icl_set("en")
    arbitrary = relabel(data, {"negative": "bar", "positive": "foo"})
    assert arbitrary.labels == ("bar", "foo")
    assert [i["text"] for i in arbitrary.eval_items] == [i["text"] for i in data.eval_items]
    assert [arbitrary.labels.index(i["label"]) for i in arbitrary.demo_items] == \
        [data.labels.index(i["label"]) for i in data.demo_items]
    assert arbitrary.prompt(draw_demos(arbitrary, 2, seed=0), "Nice.").count(" foo") == 1
    for bad in ({"negative": "bar"}, {"negative": "x", "positive": "x"}):
        with pytest.raises(ValueError, match="nome novo e distinto"):
            relabel(data, bad)


def test_bad_input():
    with pytest.raises(ValueError, match="'en' ou 'pt'"):
        icl_set("fr")
    with pytest.raises(ValueError, match="draws"):
        kshot_curve(None, None, icl_set("en"), draws=0)
    with pytest.raises(ValueError, match="first_draw"):
        kshot_curve(None, None, icl_set("en"), draws=3, first_draw=3)
    with pytest.raises(ValueError, match="Nada para pontuar"):
        label_margins(None, None, icl_set("en"), [], [])
