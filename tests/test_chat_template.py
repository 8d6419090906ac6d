"""Testes de lncc_llm.chat_template: o template de treino escreve o texto do original e marca as falas certas."""
import pytest

from lncc_llm.chat_template import assistant_mask_by_hand, training_chat_template

CONVERSAS = [
    [{"role": "user", "content": "Oi?"}, {"role": "assistant", "content": "Olá!"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why is the sky blue?"},
     {"role": "assistant", "content": "Rayleigh scattering.\nShort waves scatter more."}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"},
     {"role": "assistant", "content": "d e f"}, {"role": "user", "content": "g"},
     {"role": "assistant", "content": "h"}],
]


@pytest.fixture(scope="module")
def tokenizer(decoder):
    return decoder[1]


@pytest.mark.parametrize("conversa", CONVERSAS)
def test_template_de_treino_escreve_o_mesmo_texto_e_marca_a_resposta(tokenizer, conversa):
    template = training_chat_template()
    assert "{% generation %}" in template and "{% endgeneration %}" in template
    for prompt in (False, True):
        assert (tokenizer.apply_chat_template(conversa, tokenize=False, add_generation_prompt=prompt)
                == tokenizer.apply_chat_template(conversa, tokenize=False, add_generation_prompt=prompt,
                                                 chat_template=template))
    marcado = tokenizer.apply_chat_template(conversa, tokenize=True, return_dict=True, chat_template=template,
                                            return_assistant_tokens_mask=True)
    ids, mask = assistant_mask_by_hand(tokenizer, conversa)
    assert (marcado["input_ids"], marcado["assistant_masks"]) == (ids, mask)
    fim = tokenizer.convert_tokens_to_ids("<|im_end|>")
    respostas = sum(m["role"] == "assistant" for m in conversa)
    # cada fala do assistente põe o seu <|im_end|> na perda; nenhum outro <|im_end|> entra
    assert sum(1 for t, m in zip(ids, mask) if t == fim and m) == respostas
    assert tokenizer.decode([t for t, m in zip(ids, mask) if m]).count("<|im_end|>") == respostas


def test_mascara_a_mao_recusa_formato_errado(tokenizer):
    with pytest.raises(ValueError, match="lista de mensagens"):
        assistant_mask_by_hand(tokenizer, "oi")
