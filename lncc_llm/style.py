"""O conjunto de estilo do curso e o escore que mede a voz de uma resposta.

Os dados estão em ``lncc_llm/dados/estilo.json``, escritos para o curso: perguntas sobre El Niño e
vizinhanças, cada uma respondida em duas vozes, a de uma meteorologista (tom científico) e a de um
assistente descontraído. Há três partes: ``treino`` (o que os treinos veem), ``validacao`` (a perda
de validação, que nenhum treino vê) e ``reservadas`` (perguntas sem resposta, para gerar antes e
depois). As perguntas e respostas estão em inglês porque o SmolLM2 foi treinado quase só em inglês.

O escore de estilo conta as marcas de cada voz como **palavras inteiras**: "hey" não conta em
"they", nem "super" em "supercooled".
"""
from __future__ import annotations

import functools
import json
import re
from pathlib import Path

STYLE_FILE = Path(__file__).with_name("dados") / "estilo.json"
SPLITS = ("treino", "validacao")


@functools.lru_cache(maxsize=1)
def _data() -> dict:
    return json.loads(STYLE_FILE.read_text(encoding="utf-8"))


VOICES: dict[str, str] = dict(_data()["vozes"])
HELDOUT_QUESTIONS: tuple[str, ...] = tuple(_data()["reservadas"])
STYLE_MARKERS: dict[str, tuple[str, ...]] = {v: tuple(m) for v, m in _data()["marcas"].items()}


def _check_voice(voice: str) -> str:
    if voice not in VOICES:
        raise ValueError(f"Voz desconhecida: {voice!r}. Use uma destas: "
                         f"{', '.join(map(repr, VOICES))}.")
    return voice


def _check_split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"Parte desconhecida do conjunto de estilo: {split!r}. Use uma destas: "
                         f"{', '.join(map(repr, SPLITS))}.")
    return split


def style_questions(split: str = "treino") -> list[tuple[str, str, str]]:
    """``(pergunta, resposta científica, resposta casual)`` de cada pergunta de ``split``.

    ``split`` é ``"treino"`` (8 perguntas) ou ``"validacao"`` (4, que nenhum treino vê).
    Ver Capítulo 7, seção 7.8.
    """
    return [(r["pergunta"], r["cientifico"], r["casual"]) for r in _data()[_check_split(split)]]


def conversation(question: str, voice: str) -> list[dict]:
    """As mensagens (sistema da ``voice`` + pergunta do usuário) que abrem uma conversa de estilo.

    Ver Capítulo 7, seção 7.8.
    """
    return [{"role": "system", "content": VOICES[_check_voice(voice)]},
            {"role": "user", "content": question}]


def style_rows(voices=tuple(VOICES), split: str = "treino") -> list[dict]:
    """As linhas do conjunto de estilo como dicionários ``{"prompt", "completion", "voz"}``.

    ``prompt`` é a lista de mensagens (sistema + usuário) e ``completion`` a resposta do assistente:
    o formato *prompt-completion* conversacional, em que o ``trl`` só calcula a perda na resposta.
    Ver Capítulo 7, seção 7.8.
    """
    rows = []
    for question, scientific, casual in style_questions(split):
        answers = {"cientifico": scientific, "casual": casual}
        for voice in voices:
            rows.append({"prompt": conversation(question, voice),
                         "completion": [{"role": "assistant",
                                         "content": answers[_check_voice(voice)]}],
                         "voz": voice})
    return rows


def style_dataset(voices=tuple(VOICES), split: str = "treino"):
    """O conjunto de estilo como ``datasets.Dataset`` (perguntas × vozes, intercaladas).

    Ver Capítulo 7, seção 7.8.
    """
    from datasets import Dataset

    rows = style_rows(voices, split)
    return Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]} for r in rows])


def heldout_conversations() -> list[tuple[str, str, list[dict]]]:
    """``(pergunta, voz, mensagens)`` para cada pergunta reservada em cada voz (nunca treinadas).

    Ver Capítulo 7, seção 7.7.
    """
    return [(q, v, conversation(q, v)) for q in HELDOUT_QUESTIONS for v in VOICES]


def _marker_pattern(marker: str) -> str:
    # borda de palavra só do lado em que a marca começa ou termina com letra ou algarismo:
    # "hey" não casa com "they", e "!" ou "°c" continuam casando
    body = re.escape(marker)
    return (r"\b" if marker[0].isalnum() else "") + body + (r"\b" if marker[-1].isalnum() else "")


@functools.lru_cache(maxsize=1)
def _patterns() -> dict[str, list[tuple[str, re.Pattern]]]:
    return {voice: [(m, re.compile(_marker_pattern(m), re.IGNORECASE)) for m in markers]
            for voice, markers in STYLE_MARKERS.items()}


def style_matches(text: str) -> dict[str, list[str]]:
    """As marcas de cada voz encontradas em ``text``, uma entrada por ocorrência, na ordem em que
    aparecem, como palavras inteiras e sem diferenciar maiúsculas.

    É o que ``style_score`` conta: imprima ao lado do escore para ver de onde ele veio.
    Ver Capítulo 7, seção 7.7.
    """
    if not isinstance(text, str):
        raise TypeError(f"style_matches recebe um texto (str); recebi {type(text).__name__}.")
    found = {}
    for voice, patterns in _patterns().items():
        hits = sorted((match.start(), m) for m, pattern in patterns
                      for match in pattern.finditer(text))
        found[voice] = [m for _, m in hits]
    return found


def style_counts(text: str) -> dict[str, int]:
    """Quantas marcas de cada voz (``STYLE_MARKERS``) aparecem em ``text``, como palavras inteiras.

    Ver Capítulo 7, seção 7.7.
    """
    return {voice: len(found) for voice, found in style_matches(text).items()}


def style_score(text: str) -> float:
    """Escore de estilo em [-1, 1]: (científicas − casuais) / (científicas + casuais); 0 sem marcas.

    +1 é uma resposta só com marcas científicas, -1 só com casuais. É uma medida simples e
    transparente, não um classificador: conta as expressões de ``STYLE_MARKERS`` como palavras
    inteiras, e mede sobretudo a forma (as aberturas e o vocabulário das respostas de treino).
    Ver Capítulo 7, seção 7.7.
    """
    counts = style_counts(text)
    total = counts["cientifico"] + counts["casual"]
    return 0.0 if total == 0 else (counts["cientifico"] - counts["casual"]) / total



def style_report(heldout, texts) -> tuple[list, dict[str, float], int]:
    """O escore e as marcas de cada resposta reservada, o escore médio por voz e o acerto de voz.

    ``heldout`` é a lista de ``heldout_conversations()`` e ``texts`` as respostas, na mesma ordem
    (uma resposta a mais, a da conversa sem voz, é ignorada). Devolve ``(linhas, médias,
    acertos)``: cada linha é ``(pergunta, voz, escore, marcas)``; o acerto conta as respostas cujo
    sinal do escore bate com a voz.
    Ver Capítulo 7, seção 7.7.
    """
    if len(texts) < len(heldout):
        raise ValueError(f"São {len(heldout)} conversas reservadas e só {len(texts)} respostas: "
                         "passe uma resposta por conversa, na ordem de `heldout_conversations()`.")
    rows = [(question, voice, style_score(text), style_matches(text))
            for (question, voice, _), text in zip(heldout, texts)]
    means = {voice: (sum(s for _, v, s, _ in rows if v == voice)
                     / sum(v == voice for _, v, _, _ in rows)) for voice in VOICES}
    hits = sum((s > 0) if voice == "cientifico" else (s < 0) for _, voice, s, _ in rows)
    return rows, means, hits


def print_style_scores(heldout, texts) -> None:
    """Imprime, para cada resposta reservada, a pergunta, a voz, o escore e as marcas que o
    produziram.

    Ver Capítulo 7, seção 7.7.
    """
    for question, voice, s, found in style_report(heldout, texts)[0]:
        marks = " ".join([f"+{m}" for m in found["cientifico"]]
                         + [f"−{m}" for m in found["casual"]])
        print(f"  {question:<24} {voice:<10} s = {s:+.2f}  {marks or '(nenhuma marca)'}")

OPENERS: dict[str, str] = dict(_data()["aberturas"])


def strip_opener(text: str, voice: str) -> str:
    """A resposta sem a abertura fixa da voz ("In technical terms, " ou "Hey! "), com a primeira
    letra maiúscula.

    Ver Capítulo 7, seção 7.11.
    """
    opener = OPENERS[_check_voice(voice)]
    if not text.startswith(opener):
        raise ValueError(f"A resposta não começa com a abertura da voz {voice!r} ({opener!r}): "
                         f"{text[:40]!r}.")
    body = text[len(opener):]
    return body[:1].upper() + body[1:]


def voice_margins(model, tokenizer, split: str = "validacao", without_opener: bool = False
                  ) -> list[tuple[str, str, float]]:
    """A margem de voz de cada pergunta de ``split`` em cada voz: ``(pergunta, voz, margem)``.

    Com o sistema da voz pedida, margem = log π(resposta escrita nessa voz) − log π(resposta escrita
    na outra voz), em nats (``likelihood.sequence_logprobs``, pelo template de chat). Positiva: o
    modelo prefere a voz pedida. É contínua (não satura como o acerto de voz) e é a mesma diferença
    de log-probabilidades que a margem do DPO usa (Capítulo 8). ``without_opener=True`` tira as
    aberturas fixas das duas respostas: sobra o quanto o corpo da resposta carrega a voz.
    Ver Capítulo 7, seção 7.11.
    """
    from .likelihood import sequence_logprobs

    other = {"cientifico": "casual", "casual": "cientifico"}
    prompts, completions, keys = [], [], []
    for question, scientific, casual in style_questions(split):
        written = {"cientifico": scientific, "casual": casual}
        if without_opener:
            written = {v: strip_opener(t, v) for v, t in written.items()}
        for voice in VOICES:
            for answer in (written[voice], written[other[voice]]):
                prompts.append(conversation(question, voice))
                completions.append([{"role": "assistant", "content": answer}])
            keys.append((question, voice))
    logps = sequence_logprobs(model, tokenizer, prompts, completions, chat=True)
    return [(q, v, logps[2 * i] - logps[2 * i + 1]) for i, (q, v) in enumerate(keys)]
