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
