"""Testes de lncc_llm.style: o conjunto de estilo (dados em JSON) e o escore de voz por palavras inteiras."""
import pytest

from lncc_llm import style as st


def test_style_dataset_is_prompt_completion_in_two_voices():
    rows = st.style_rows()
    assert len(rows) == 16 and len(st.style_dataset()) == 16
    assert [r["voz"] for r in rows[:4]] == ["cientifico", "casual", "cientifico", "casual"]
    for r in rows:
        assert [m["role"] for m in r["prompt"]] == ["system", "user"]
        assert r["prompt"][0]["content"] == st.VOICES[r["voz"]]
        assert [m["role"] for m in r["completion"]] == ["assistant"]
    assert len(st.heldout_conversations()) == 2 * len(st.HELDOUT_QUESTIONS)


def test_train_validation_and_heldout_questions_are_disjoint():
    train = {q for q, _, _ in st.style_questions("treino")}
    validation = {q for q, _, _ in st.style_questions("validacao")}
    assert len(train) == 8 and len(validation) == 4 and len(st.style_dataset(split="validacao")) == 8
    assert not train & validation
    assert not (train | validation) & set(st.HELDOUT_QUESTIONS)
    with pytest.raises(ValueError, match="Parte desconhecida"):
        st.style_questions("teste")


@pytest.mark.parametrize("split", ["treino", "validacao"])
def test_style_score_separates_every_written_answer(split):
    for r in st.style_rows(split=split):
        score = st.style_score(r["completion"][0]["content"])
        assert (score > 0.5) if r["voz"] == "cientifico" else (score < -0.5)


def test_style_counts_markers_and_ties():
    assert st.style_score("The sky is blue.") == 0.0
    assert st.style_score("Hey! That is basically it!") == -1.0
    assert st.style_counts("In technical terms, 2 °C.") == {"cientifico": 2, "casual": 0}
    assert st.style_score("In technical terms, hey") == 0.0     # uma marca de cada: empate
    assert st.style_matches("HEY, it was SUPER hot!") == {"cientifico": [], "casual": ["hey", "super", "!"]}


@pytest.mark.parametrize("text", [
    "They say the air cools as it rises.",                       # hey ⊂ they; cool ⊂ cools
    "Supercooled droplets and supersaturated air.",              # super ⊂ supercooled
    "Protons and neutrons.",                                     # tons ⊂ protons
    "A wildfire spread across the hills.",                       # wild ⊂ wildfire
    "Cells, they're just a bunch of little things, right? So, they're formed when water vapor in "
    "the air condenses into tiny droplets.",                     # a resposta da base no Capítulo 7
])
def test_markers_inside_other_words_do_not_count(text):
    assert st.style_matches(text) == {"cientifico": [], "casual": []}
    assert st.style_score(text) == 0.0


def test_marker_lists_have_no_substring_traps_left():
    # 'cool' saiu da lista: o verbo (the air begins to cool) é vocabulário de meteorologia
    assert "cool" not in st.STYLE_MARKERS["casual"]
    found = st.style_matches("Pressure anomalies, roughly 2 °C.")["cientifico"]
    assert found == ["pressure", "anomalies", "roughly", "°c"]


def test_bad_inputs_raise_portuguese_errors():
    with pytest.raises(ValueError, match="Voz desconhecida"):
        st.conversation("What is El Niño?", "pirata")
    with pytest.raises(TypeError, match="texto"):
        st.style_matches(None)


def test_strip_opener_removes_each_voice_opening():
    for r in st.style_rows(split="validacao"):
        body = st.strip_opener(r["completion"][0]["content"], r["voz"])
        assert not body.startswith(st.OPENERS[r["voz"]]) and body[0].isupper()
    with pytest.raises(ValueError, match="não começa com a abertura"):
        st.strip_opener("Hey! hello", "cientifico")


def test_voice_margins_are_the_difference_of_two_sequence_logprobs():
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from lncc_llm.likelihood import sequence_logprob
    from lncc_llm.models import ensure_decoder_cache

    tokenizer = AutoTokenizer.from_pretrained(ensure_decoder_cache())
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                         max_position_embeddings=256)).eval()
    margins = st.voice_margins(model, tokenizer)
    assert [(q, v) for q, v, _ in margins] == [(q, v) for q, _, _ in st.style_questions("validacao")
                                               for v in st.VOICES]
    question, scientific, casual = st.style_questions("validacao")[1]
    prompt = st.conversation(question, "casual")
    by_hand = (sequence_logprob(model, tokenizer, prompt, [{"role": "assistant", "content": casual}], chat=True)
               - sequence_logprob(model, tokenizer, prompt, [{"role": "assistant", "content": scientific}],
                                  chat=True))
    assert margins[3][2] == pytest.approx(by_hand, abs=1e-6)
    bare = st.voice_margins(model, tokenizer, without_opener=True)
    assert all(abs(a[2] - b[2]) > 1e-6 for a, b in zip(margins, bare))   # as aberturas mudam a margem


def test_style_report_counts_hits_and_means(capsys):
    from lncc_llm.style import heldout_conversations, print_style_scores, style_report

    heldout = heldout_conversations()
    texts = ["In technical terms, the anomaly." if v == "cientifico" else "Hey! Basically super." for _, v, _ in heldout]
    rows, means, hits = style_report(heldout, texts + ["resposta sem voz"])
    assert hits == len(heldout) and means == {"cientifico": 1.0, "casual": -1.0}
    trocadas = [texts[i + 1] if i % 2 == 0 else texts[i - 1] for i in range(len(texts))]
    assert style_report(heldout, trocadas)[2] == 0
    print_style_scores(heldout, texts)
    assert "+in technical terms" in capsys.readouterr().out
    with pytest.raises(ValueError, match="uma resposta por conversa"):
        style_report(heldout, texts[:3])
