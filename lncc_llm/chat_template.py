"""O template de chat de treino: o ChatML do SmolLM2 com a fala do assistente marcada por ``{%
generation %}``.

O ``trl`` só cobra a perda nas falas do assistente (``assistant_only_loss=True``) se o template
marcar essas falas; o do SmolLM2 não marca, e o ``trl`` não sabe remendá-lo. O template de treino
fica em ``lncc_llm/dados/template_chat_treino_smollm2.jinja``: o mesmo texto do original, com o
conteúdo de cada fala do assistente **e o ``<|im_end|>`` que a fecha** dentro do bloco.
"""
from __future__ import annotations

from importlib.resources import files

__all__ = ["assistant_mask_by_hand", "training_chat_template"]


def training_chat_template() -> str:
    """O template de chat de treino do SmolLM2, com ``{% generation %}`` na fala do assistente.

    Capítulo 7, terceira parte, seção 7.12.1.
    """
    arquivo = files("lncc_llm").joinpath("dados/template_chat_treino_smollm2.jinja")
    return arquivo.read_text(encoding="utf-8")


def _e_conversa(messages) -> bool:
    return isinstance(messages, (list, tuple)) and all(
        isinstance(m, dict) and {"role", "content"} <= set(m) for m in messages)


def assistant_mask_by_hand(tokenizer, messages) -> tuple[list[int], list[int]]:
    """Os ids da conversa (pelo template **original** do tokenizador) e a máscara da perda, mensagem
    a mensagem: 1 no conteúdo de cada fala do assistente e no seu ``<|im_end|>``; 0 no cabeçalho
    ``<|im_start|>assistant\\n``, no ``\\n`` que fecha a fala e em todo o resto.

    Capítulo 7, terceira parte, seção 7.12.1.
    """
    if not _e_conversa(messages):
        raise ValueError("`messages` precisa ser uma lista de mensagens {'role': …, 'content': …}, "
                         "o formato `messages` do trl (seção 7.12.1).")
    ids, mask = [], []
    header = len(tokenizer("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"])
    for k, message in enumerate(messages):
        prefix = tokenizer.apply_chat_template(list(messages[:k + 1]), tokenize=True,
                                               return_dict=False)
        if prefix[:len(ids)] != ids:
            raise ValueError("A tokenização de um prefixo da conversa mudou os tokens anteriores; "
                             "a máscara mensagem a mensagem não vale para este tokenizador.")
        new = len(prefix) - len(ids)              # os tokens que esta mensagem acrescentou
        if message["role"] == "assistant":        # cabeçalho fora; conteúdo e <|im_end|> dentro
            mask += [0] * header + [1] * (new - header - 1) + [0]
        else:
            mask += [0] * new
        ids = prefix
    return ids, mask
