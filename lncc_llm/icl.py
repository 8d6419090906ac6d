"""Aprendizado em contexto (ICL) medido: a mesma classificação com 0, 1, 2, 4 e 8 exemplos no
prompt.

O modelo não é ajustado: cada item é pontuado pela log-probabilidade de cada rótulo depois do
prompt, e a **margem** é ``log p(rótulo 1) − log p(rótulo 0)``. A acurácia usa o limiar 0 (o
rótulo mais provável); a AUC mede só a ordem das margens, sem limiar. Os exemplos do prompt são
sorteados do conjunto ``exemplos`` (nunca dos itens avaliados), com metade de cada rótulo quando k
é par.

Para caber na CPU, os exemplos, que são os mesmos para todos os itens de um sorteio, passam pelo
modelo uma vez só: o *KV cache* desse prefixo é repetido para o lote de itens (a mesma conta, sem
refazer o prefixo para cada item). Por isso o prompt é tokenizado bloco a bloco (cada exemplo e o
item, separadamente, e os ids concatenados). ``calibrated_margins`` subtrai a margem de uma entrada
sem conteúdo ("N/A"), a calibração contextual de Zhao et al. (2021).

Os dados (``lncc_llm/dados/icl.json``) foram escritos para o curso, em inglês e em português.
Ver Capítulo 5, seção 5.3.
"""
from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, replace
from pathlib import Path

import torch

DATA_FILE = Path(__file__).with_name("dados") / "icl.json"
LANGUAGES = ("en", "pt")


@dataclass(frozen=True)
class ICLSet:
    """Um conjunto de ICL: rótulos, formatos e os itens de avaliação e de exemplo.

    Ver Capítulo 5, seção 5.3.
    """

    labels: tuple[str, str]
    input_format: str
    answer_format: str
    content_free: str
    eval_items: tuple[dict, ...]
    demo_items: tuple[dict, ...]

    def block(self, text: str, label: str | None = None) -> str:
        """Um exemplo formatado; sem ``label``, o item a classificar (termina antes da resposta)."""
        head = self.input_format.format(text=text)
        return head if label is None else head + self.answer_format.format(label=label) + "\n\n"

    def prompt(self, demos, text: str) -> str:
        """O prompt: os exemplos, cada um com o seu rótulo, e o item a classificar.

        Ver Capítulo 5, seção 5.3.
        """
        return "".join(self.block(d["text"], d["label"]) for d in demos) + self.block(text)


def icl_set(lang: str = "en") -> ICLSet:
    """O conjunto de ICL do curso em ``"en"`` ou ``"pt"`` (48 itens de avaliação, 16 de exemplo).

    Ver Capítulo 5, seção 5.3.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"Língua {lang!r} desconhecida: use 'en' ou 'pt'.")
    with open(DATA_FILE, encoding="utf-8") as f:
        raw = json.load(f)[lang]
    return ICLSet(tuple(raw["labels"]), raw["input"], raw["answer"], raw["content_free"],
                  tuple(raw["avaliacao"]), tuple(raw["exemplos"]))


def relabel(data: ICLSet, mapping: dict[str, str]) -> ICLSet:
    """O mesmo conjunto com outros nomes de rótulo, ``{rótulo antigo: rótulo novo}``.

    Com nomes sem relação com a tarefa (``{"negative": "bar", "positive": "foo"}``), o modelo só
    pode saber qual é qual pelos exemplos do prompt.
    Ver Capítulo 5, seção 5.3.
    """
    if set(mapping) != set(data.labels) or len(set(mapping.values())) != len(data.labels):
        raise ValueError("mapping deve dar um nome novo e distinto a cada rótulo de "
                         f"{data.labels}; recebi {mapping!r}.")
    return replace(data, labels=tuple(mapping[label] for label in data.labels),
                   eval_items=tuple(dict(i, label=mapping[i["label"]]) for i in data.eval_items),
                   demo_items=tuple(dict(i, label=mapping[i["label"]]) for i in data.demo_items))


def draw_demos(data: ICLSet, k: int, seed: int) -> list[dict]:
    """Sorteia k exemplos do conjunto de exemplos (metade de cada rótulo quando k é par), em ordem
    embaralhada; a mesma semente dá o mesmo sorteio.

    Ver Capítulo 5, seção 5.3.
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= len(data.demo_items):
        raise ValueError(f"k deve ser um inteiro entre 0 e {len(data.demo_items)}; recebi {k!r}.")
    rng = random.Random(seed)
    by_label = {label: [d for d in data.demo_items if d["label"] == label] for label in data.labels}
    first = rng.choice(data.labels)
    counts = {label: k // 2 for label in data.labels}
    counts[first] += k % 2
    chosen = [d for label in data.labels for d in rng.sample(by_label[label], counts[label])]
    rng.shuffle(chosen)
    return chosen


def prompt_ids(tokenizer, data: ICLSet, demos, text: str | None) -> list[int]:
    """Os ids do prompt, tokenizado bloco a bloco: cada exemplo e, se ``text`` não é ``None``, o
    item.

    Ver Capítulo 5, seção 5.3.
    """
    blocks = [data.block(d["text"], d["label"]) for d in demos]
    if text is not None:
        blocks.append(data.block(text))
    return [i for block in blocks for i in tokenizer(block, add_special_tokens=False)["input_ids"]]


def _label_ids(tokenizer, data: ICLSet) -> list[list[int]]:
    return [tokenizer(data.answer_format.format(label=label), add_special_tokens=False)["input_ids"]
            for label in data.labels]


@torch.no_grad()
def label_margins(model, tokenizer, data: ICLSet, demos, texts,
                  batch_size: int = 16) -> torch.Tensor:
    """``log p(rótulo 1 | prompt) − log p(rótulo 0 | prompt)`` para cada texto, com os ``demos``.

    O prefixo com os exemplos passa pelo modelo uma vez; o seu *KV cache* é copiado para cada lote
    de itens. Rótulos de vários tokens somam as log-probabilidades dos seus tokens.
    Ver Capítulo 5, seção 5.3.
    """
    texts = list(texts)
    if not texts:
        raise ValueError("Nada para pontuar: passe ao menos um texto.")
    device = next(model.parameters()).device
    prefix_ids = prompt_ids(tokenizer, data, demos, None)
    cache = None
    if prefix_ids:
        prefix = torch.tensor([prefix_ids], device=device)
        cache = model(input_ids=prefix, use_cache=True).past_key_values
    labels = _label_ids(tokenizer, data)
    first = [label[0] for label in labels]
    scores = torch.zeros(len(texts), len(labels), dtype=torch.float64)
    all_suffixes = [prompt_ids(tokenizer, data, [], text) for text in texts]
    order = sorted(range(len(texts)), key=lambda i: len(all_suffixes[i]))   # lotes sem sobra de
    for start in range(0, len(texts), batch_size):                          # preenchimento
        chunk = order[start:start + batch_size]
        suffixes = [all_suffixes[i] for i in chunk]
        rows, width = len(suffixes), max(map(len, suffixes))
        ids = torch.full((rows, width), tokenizer.pad_token_id or 0, dtype=torch.long)
        mask = torch.zeros((rows, width), dtype=torch.long)
        for r, row in enumerate(suffixes):
            ids[r, :len(row)] = torch.tensor(row)
            mask[r, :len(row)] = 1
        past = None
        if cache is not None:
            past = copy.deepcopy(cache)
            past.batch_repeat_interleave(rows)
            mask = torch.cat([torch.ones((rows, len(prefix_ids)), dtype=torch.long), mask], dim=1)
        longer = any(len(label) > 1 for label in labels)
        # O corpo do modelo dá os estados de todas as posições; a cabeça de linguagem só é aplicada
        # na posição que prevê o 1º token do rótulo (a mesma conta, sem |V| logits por posição).
        out = model.get_decoder()(input_ids=ids.to(device), attention_mask=mask.to(device),
                                  past_key_values=past, use_cache=longer)
        ends = torch.tensor([len(s) - 1 for s in suffixes])
        last = out.last_hidden_state[torch.arange(rows), ends.to(device)]
        logp = torch.log_softmax(model.get_output_embeddings()(last).double().cpu(), dim=-1)
        scores[chunk] = logp[:, first]
        for j, label in enumerate(labels):
            if len(label) == 1:
                continue
            # Os tokens do rótulo entram depois do cache dos itens, na posição certa de cada linha
            # (depois do fim real dela; o preenchimento à direita fica mascarado).
            offset = len(prefix_ids) + torch.tensor([len(s) for s in suffixes])
            positions = offset[:, None] + torch.arange(len(label))[None, :]
            label_mask = torch.cat([mask, torch.ones((rows, len(label)), dtype=torch.long)], dim=1)
            label_ids = torch.tensor([label] * rows)
            more = model(input_ids=label_ids.to(device), attention_mask=label_mask.to(device),
                         position_ids=positions.to(device),
                         past_key_values=out.past_key_values).logits
            out.past_key_values.crop(-len(label))   # o cache volta a ter só o prompt
            more = torch.log_softmax(more.double().cpu(), dim=-1)
            scores[chunk, j] += sum(more[:, t, label[t + 1]] for t in range(len(label) - 1))
    return scores[:, 1] - scores[:, 0]


@dataclass(frozen=True)
class KShotPoint:
    """Um ponto da curva: k exemplos, o sorteio ``draw``, a acurácia (limiar 0) e a AUC.

    ``bias`` é a margem da entrada sem conteúdo ("N/A") com os mesmos exemplos, e
    ``calibrated_accuracy`` a acurácia com o limiar em ``bias`` em vez de 0 (Zhao et al., 2021).
    ``demos`` são os exemplos sorteados, na ordem em que entraram no prompt.
    Ver Capítulo 5, seção 5.3.
    """

    k: int
    draw: int
    accuracy: float
    auc: float
    margins: tuple[float, ...]
    bias: float
    calibrated_accuracy: float
    demos: tuple[dict, ...] = ()


def kshot_curve(model, tokenizer, data: ICLSet, ks=(0, 1, 2, 4, 8), draws: int = 3,
                seed: int = 0, first_draw: int = 0) -> list[KShotPoint]:
    """Acurácia e AUC para cada k e cada sorteio de exemplos (k = 0 tem um sorteio só), e a
    acurácia calibrada pela entrada sem conteúdo, pontuada no mesmo lote.

    Os sorteios vão de ``first_draw`` a ``draws - 1`` (a semente de cada um não depende dos outros):
    ``first_draw=3, draws=5`` acrescenta dois sorteios a uma curva de três sem refazê-la.
    Ver Capítulo 5, seção 5.3.
    """
    from .stats import auroc

    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise ValueError(f"draws deve ser um inteiro ≥ 1; recebi {draws!r}.")
    if (isinstance(first_draw, bool) or not isinstance(first_draw, int)
            or not 0 <= first_draw < draws):
        raise ValueError("first_draw deve ser um inteiro entre 0 e draws − 1; recebi "
                         f"{first_draw!r}.")
    truth = [data.labels.index(item["label"]) for item in data.eval_items]
    texts = [item["text"] for item in data.eval_items]
    points = []
    for k in ks:
        for draw in range(first_draw, 1 if k == 0 else draws):
            demos = draw_demos(data, k, seed=1000 * seed + 10 * k + draw)
            margins = label_margins(model, tokenizer, data, demos, texts + [data.content_free])
            margins, bias = margins[:-1].tolist(), float(margins[-1])
            auc = auroc(margins, [bool(t) for t in truth])
            points.append(KShotPoint(k, draw, _accuracy(margins, truth, 0.0), auc, tuple(margins),
                                     bias, _accuracy(margins, truth, bias), tuple(demos)))
    return points


def _accuracy(margins, truth, threshold: float) -> float:
    return sum((m > threshold) == bool(t) for m, t in zip(margins, truth)) / len(truth)


def calibrated_margins(model, tokenizer, data: ICLSet, demos, texts) -> tuple[torch.Tensor, float]:
    """As margens menos a margem de uma entrada sem conteúdo (``data.content_free``, "N/A").

    Se o prompt puxa para um rótulo mesmo sem texto, essa margem mede o viés; subtraí-la é a
    calibração contextual de Zhao et al. (2021). Devolve ``(margens calibradas, margem do "N/A")``.
    Ver Capítulo 5, seção 5.3.
    """
    bias = float(label_margins(model, tokenizer, data, demos, [data.content_free])[0])
    return label_margins(model, tokenizer, data, demos, texts) - bias, bias
