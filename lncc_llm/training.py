"""Peças de apoio para treinar modelos pequenos na CPU de forma reprodutível.

O laço de treino em si fica visível no notebook (Apêndice A); aqui estão só o
sorteio de lotes, a avaliação da perda e o controle do número de *threads*, e a perplexidade em
textos gerais que mede o esquecimento de um ajuste fino (Capítulo 7).
"""
from __future__ import annotations

import contextlib
import functools
import json
import math
from pathlib import Path

import torch
import torch.nn.functional as F


@contextlib.contextmanager
def fixed_threads(n: int = 2):
    """Fixa ``torch.set_num_threads(n)`` dentro do bloco ``with`` e restaura o valor anterior ao
    sair.

    As somas de ponto flutuante dependem de como o trabalho é repartido entre as
    *threads*; com o número fixo, o mesmo treino dá os mesmos números em máquinas
    com quantidades diferentes de núcleos.
    Ver Apêndice A, seção A.11.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"O número de threads deve ser um inteiro ≥ 1; recebi {n!r}.")
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(previous)


def random_batch(
    data: torch.Tensor,
    batch_size: int,
    context_length: int,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sorteia ``batch_size`` janelas de ``context_length`` tokens: entradas ``x`` e alvos ``y`` (x
    deslocado de 1).

    ``data`` é um tensor 1-D de ids; o sorteio usa ``generator`` (da CPU), então o
    mesmo gerador dá os mesmos lotes em qualquer máquina.
    Ver Apêndice A, seção A.11.
    """
    if data.dim() != 1:
        raise ValueError(f"data deve ser um tensor 1-D de ids; recebi forma {tuple(data.shape)}.")
    if len(data) <= context_length:
        raise ValueError(
            f"Os dados têm {len(data)} tokens, poucos para janelas de {context_length} + 1."
        )
    starts = torch.randint(len(data) - context_length, (batch_size,), generator=generator)
    offsets = torch.arange(context_length)
    x = data[starts[:, None] + offsets]
    y = data[starts[:, None] + offsets + 1]
    return x, y


def language_model_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Entropia cruzada média do próximo token: ``logits`` ``(b, n, V)`` contra ``targets``
    ``(b, n)``.

    Ver Apêndice A, seção A.11.
    """
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


@torch.no_grad()
def estimate_loss(model: torch.nn.Module, batches) -> float:
    """Perda média do modelo (em modo ``eval``, sem *dropout*) sobre uma lista fixa de lotes
    ``(x, y)``.

    Restaura o modo de treino anterior ao terminar. exp(perda) é a perplexidade.
    Ver Apêndice A, seção A.11.
    """
    was_training = model.training
    model.eval()
    try:
        losses = [language_model_loss(model(x), y).item() for x, y in batches]
    finally:
        model.train(was_training)
    if not losses:
        raise ValueError("Nenhum lote para avaliar.")
    return sum(losses) / len(losses)


def perplexity(loss: float) -> float:
    """Perplexidade = exp(entropia cruzada média, em nats).

    Ver Apêndice A, seção A.11.
    """
    return math.exp(loss)


@torch.no_grad()
def text_perplexity(model: torch.nn.Module, tokenizer, text: str) -> float:
    """Perplexidade de um modelo causal do ``transformers`` sobre ``text``: exp da perda média por
    token.

    Serve para medir esquecimento: a mesma conta, antes e depois de um ajuste fino, num texto que
    nenhum treino viu. Ver Capítulo 7, seção 7.11.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("O texto está vazio: passe um trecho com algumas frases.")
    device = next(model.parameters()).device
    ids = tokenizer(text, return_tensors="pt")["input_ids"].to(device)
    if ids.shape[1] < 2:
        raise ValueError("O texto precisa de pelo menos 2 tokens para haver uma previsão.")
    was_training = model.training
    model.eval()
    try:
        loss = model(input_ids=ids, labels=ids).loss.float().item()
    finally:
        model.train(was_training)
    return perplexity(loss)


GENERAL_TEXTS_FILE = Path(__file__).with_name("dados") / "textos_gerais.json"


@functools.lru_cache(maxsize=1)
def _general_texts() -> dict:
    return json.loads(GENERAL_TEXTS_FILE.read_text(encoding="utf-8"))


#: Um parágrafo geral em inglês (imprensa, um conto, uma receita, o coração), sem clima nem tempo.
FORGETTING_TEXT: str = _general_texts()["texto_geral"]


def general_passages() -> list[str]:
    """Os 12 trechos gerais em inglês, sem clima nem tempo, que nenhum treino do curso vê
    (``lncc_llm/dados/textos_gerais.json``).

    Ver Capítulo 7, seção 7.7.
    """
    return list(_general_texts()["trechos"])


def passage_perplexities(model: torch.nn.Module, tokenizer, passages) -> list[float]:
    """A perplexidade de ``model`` em cada trecho de ``passages``, um trecho por passada.

    Ver Capítulo 7, seção 7.7.
    """
    passages = list(passages)
    if not passages:
        raise ValueError("Nenhum trecho: passe uma lista de textos (por exemplo, "
                         "general_passages()).")
    return [text_perplexity(model, tokenizer, text) for text in passages]


def mean_and_se(values) -> tuple[float, float]:
    """Média e erro-padrão da média (desvio com n − 1, dividido por √n) de ``values``.

    Ver Capítulo 7, seção 7.11.
    """
    values = [float(v) for v in values]
    if len(values) < 2:
        raise ValueError(f"O erro-padrão precisa de pelo menos 2 valores; recebi {len(values)}.")
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return mean, math.sqrt(var / len(values))


def trained_char_gpt(vocab_size: int | None = None):
    """O GPT de caracteres do Apêndice A treinado por mais tempo: ``(modelo, registro)``.

    O modelo tem a configuração da seção A.11 e os pesos de
    ``lncc_llm/dados/gpt_caracteres_longo.pt``, em modo ``eval()``; o registro (semente, passos,
    curva de validação, tempo, CPU) vem de ``gpt_caracteres_longo.json``, os dois gravados por
    ``scripts/gpt_caracteres_longo.py``, com o tamanho do arquivo de pesos em
    ``"bytes_dos_pesos"``. Com ``vocab_size``, confere que o tokenizador de
    caracteres do leitor é o do treino.
    Ver Apêndice A, seção A.12.
    """
    from .gpt import GPTConfig, GPTModel

    pasta = Path(__file__).with_name("dados")
    with open(pasta / "gpt_caracteres_longo.json", encoding="utf-8") as f:
        registro = json.load(f)
    if vocab_size is not None and vocab_size != registro["config"]["vocab_size"]:
        raise ValueError(f"O checkpoint foi treinado com {registro['config']['vocab_size']} "
                         f"caracteres, e o seu tokenizador tem {vocab_size}: monte o CharTokenizer "
                         "com o texto de shakespeare_text(), como na seção A.11.")
    model = GPTModel(GPTConfig(**registro["config"]))
    pesos = torch.load(pasta / "gpt_caracteres_longo.pt", map_location="cpu", weights_only=True)
    model.load_state_dict(pesos)
    registro["bytes_dos_pesos"] = (pasta / "gpt_caracteres_longo.pt").stat().st_size
    return model.eval(), registro


def char_gpt_budget() -> dict:
    """As execuções medidas do GPT de caracteres do Apêndice A (passos, tempo, perda de validação),
    gravadas por ``scripts/gpt_caracteres_orcamento.py`` em ``lncc_llm/dados``.

    Ver Apêndice A, seção A.11.
    """
    path = Path(__file__).with_name("dados") / "gpt_caracteres_orcamento.json"
    with open(path, encoding="utf-8") as f:
        return json.load(f)
