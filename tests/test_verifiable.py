"""Testes de lncc_llm.verifiable: a tarefa das somas, a regra de extração e as duas recompensas."""
import pytest

from lncc_llm import verifiable as vf


def test_sum_prompts_split_is_disjoint_complete_and_has_the_right_answers():
    train, held = vf.sum_prompts("treino"), vf.sum_prompts("reservadas")
    assert len(train) == 57 and len(held) == 24
    texts = [r["prompt"][0]["content"] for r in train + held]
    assert len(set(texts)) == 81                       # nenhuma soma nos dois conjuntos

    def unordered(row):
        a, b = [int(t) for t in row["prompt"][0]["content"].split("?")[0].split()[2::2]]
        return frozenset((a, b))

    # nem a gêmea comutada: 3 + 7 reservada, 7 + 3 também
    assert not {unordered(r) for r in train} & {unordered(r) for r in held}
    assert len({unordered(r) for r in held}) == vf.HELDOUT_PAIRS
    for row in train + held:
        a, b = [int(t) for t in row["prompt"][0]["content"].split("?")[0].split()[2::2]]
        assert row["answer"] == a + b and 1 <= a <= 9 and 1 <= b <= 9
        assert row["prompt"][0]["role"] == "user"
    assert vf.sum_prompts("reservadas") == held        # a mesma divisão em toda chamada
    with pytest.raises(ValueError, match="split"):
        vf.sum_prompts("validacao")


@pytest.mark.parametrize("text, expected", [
    ("3 + 7 = 10", 10),            # o número depois da conta, não o 3 dela
    ("1 + 2 equals 3.", 3),        # sem "=": ainda não o 1 da conta
    ("The answer is 12, as 3 + ", 12),
    ("Two and five equal to 11.", 11),
    ("The answer is 12.", 12),
    ("12", 12),
    ("9 + 5 = 12, not 14", 12),
    ("It is -3", -3),
    ("I don't know", None),
    ("2 + 2 = four", None),        # só a conta, sem resposta
])
def test_extract_answer_rule(text, expected):
    assert vf.extract_answer(text) == expected


def test_extract_answer_refuses_non_text():
    with pytest.raises(TypeError, match="texto"):
        vf.extract_answer(12)


def test_rewards_score_correctness_and_format_separately():
    end = 2
    texts = ["10", "3 + 7 = 10", "11", "10 because", "10"]
    ids = [[5, end], [5, 6, end], [5, end], [5, 6], [5, 6]]    # as duas últimas não terminaram
    answers = [10] * 5
    assert vf.correctness_reward(texts, ids, answers) == [1.0, 1.0, 0.0, 1.0, 1.0]
    assert vf.format_reward(texts, ids, answers) == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert vf.sum_reward(texts, ids, answers) == [1.5, 1.0, 0.5, 1.0, 1.0]
    with pytest.raises(ValueError, match="gabarito"):
        vf.correctness_reward(texts, ids, answers[:2])
