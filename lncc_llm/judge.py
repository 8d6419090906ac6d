"""O modelo como juiz, lido por logits e auditado: a massa nos rótulos, as duas ordens, a regra da
troca e a calibração de posição.

* ``JUDGE_TEMPLATES`` / ``judge_pair`` / ``judge_batch``: o veredito compara os logits do próximo
  token para os dois rótulos, numa passagem para frente (determinístico);
* ``position_consistency`` / ``PositionReport``: cada par julgado nas duas ordens; consistência,
  viés para a primeira e a segunda posição, a regra da troca e a calibração (Tabela 2 do MT-Bench;
  Wang et al., 2024).
Ver Capítulo 8, seções 8.4.2 e 8.4.4.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .benchmarks import mc_items
from .likelihood import last_token_logits

# Três formulações do mesmo pedido ao juiz (entradas do modelo, em inglês como o SmolLM2): a padrão,
# a "renomeada" (rótulos X/Y no lugar de A/B, como o "rename" do MT-Bench) e uma paráfrase. O pedido
# vai na vez do usuário; a vez do assistente começa preenchida com ``cue`` ("Answer"), e o veredito
# é o próximo token: " A" ou " B", com o espaço, como o modelo continuaria "Answer A".
JUDGE_TEMPLATES = {
    "padrao": {
        "labels": ("A", "B"),
        "text": ("Which answer to the question is better? Reply with A or B only.\n\n"
                 "Question: {question}\n\nAnswer A: {first}\n\nAnswer B: {second}"),
        "cue": "Answer",
    },
    "renomeado": {
        "labels": ("X", "Y"),
        "text": ("Which answer to the question is better? Reply with X or Y only.\n\n"
                 "Question: {question}\n\nAnswer X: {first}\n\nAnswer Y: {second}"),
        "cue": "Answer",
    },
    "parafraseado": {
        "labels": ("A", "B"),
        "text": ("You are a strict grader. Read the question and the two candidate answers, then "
                 "say which one is correct and more helpful. "
                 "Reply with the name of the better answer.\n\n"
                 "Question: {question}\n\nAnswer A: {first}\n\nAnswer B: {second}"),
        "cue": "The better answer is Answer",
    },
    # a construção antiga, para comparar: a deixa "Better answer:" no fim da vez do usuário, a vez
    # do assistente aberta vazia, e o rótulo lido sem espaço
    "deixa_no_usuario": {
        "labels": ("A", "B"),
        "text": ("Which answer to the question is better? Reply with A or B only.\n\n"
                 "Question: {question}\n\nAnswer A: {first}\n\nAnswer B: {second}\n\n"
                 "Better answer:"),
        "cue": None,
    },
}

# Pares de avaliação escritos para o curso: (pergunta, resposta certa, resposta errada), com as duas
# respostas na mesma forma. O primeiro é a soma da seção 5.6, que o modelo errou com fluência.
JUDGE_PAIRS = (
    ("What is 27 + 58?", "27 + 58 = 85.", "27 + 58 = 125."),
    ("What is 9 × 6?", "9 × 6 = 54.", "9 × 6 = 56."),
    ("What is 100 − 37?", "100 − 37 = 63.", "100 − 37 = 73."),
    ("What is half of 50?", "Half of 50 is 25.", "Half of 50 is 20."),
)


def judge_pairs() -> list[tuple[str, str, str]]:
    """Os pares do juiz: os 4 de ``JUDGE_PAIRS`` (contas) e um por questão de ``mc_items`` (52).

    Cada par é ``(pergunta, resposta certa, resposta errada)``; nas questões de múltipla escolha a
    errada é a primeira alternativa errada, escrita na mesma frase ("The answer is …").
    Ver Capítulo 8, seção 8.4.
    """
    pairs = list(JUDGE_PAIRS)
    for item in mc_items():
        right = item["choices"][item["answer"]]
        wrong = next(c for i, c in enumerate(item["choices"]) if i != item["answer"])
        pairs.append((item["question"], f"The answer is {right}.", f"The answer is {wrong}."))
    return pairs


# ----------------------------------------------------------------------------- o juiz


@dataclass
class Verdict:
    """Um veredito: o rótulo vencedor, sua posição (0 = primeira resposta) e os logits dos rótulos.

    Ver Capítulo 8, seção 8.4.
    """

    label: str
    position: int
    logits: tuple[float, float]
    probs: tuple[float, float] = (float("nan"), float("nan"))

    @property
    def margin(self) -> float:
        """logit(primeiro rótulo) − logit(segundo rótulo)."""
        return self.logits[0] - self.logits[1]

    @property
    def mass(self) -> float:
        """P(primeiro rótulo) + P(segundo rótulo) no próximo token, sobre o vocabulário inteiro.

        É o teste de validade do juiz: perto de 1, o modelo está respondendo com um dos rótulos;
        perto de 0, a comparação dos dois logits não quer dizer nada.
        """
        return self.probs[0] + self.probs[1]


def _template(template):
    if isinstance(template, str):
        if template not in JUDGE_TEMPLATES:
            raise ValueError(f"Template de juiz desconhecido: {template!r}. Use um destes: "
                             f"{', '.join(map(repr, JUDGE_TEMPLATES))}, ou passe um dicionário "
                             "{'labels': (…, …), 'text': …, 'cue': …}.")
        return JUDGE_TEMPLATES[template]
    if not (isinstance(template, dict) and {"labels", "text"} <= set(template)
            and len(template["labels"]) == 2):
        raise ValueError("Um template de juiz é um dicionário com 'labels' (dois rótulos), 'text' "
                         "(com {question}, {first} e {second}) e 'cue' (o começo da vez do "
                         "assistente, ou None).")
    return {"cue": None, **template}


def _label_tokens(tpl) -> tuple[str, str]:
    # depois de uma deixa na vez do assistente ("Answer"), o rótulo vem com o espaço (" A")
    return tuple((" " + x) if tpl.get("cue") else x for x in tpl["labels"])


def label_token_ids(tokenizer, labels) -> list[int]:
    """O id de cada rótulo do juiz; erro se algum rótulo não for um único token.

    Ver Capítulo 8, seção 8.4.
    """
    ids = []
    for label in labels:
        tokens = tokenizer(label, add_special_tokens=False)["input_ids"]
        if len(tokens) != 1:
            raise ValueError(f"O rótulo {label!r} vira {len(tokens)} tokens {tokens}: o juiz "
                             "compara o logit de um único token. "
                             "Use rótulos de um token só (A/B, 1/2).")
        ids.append(tokens[0])
    if ids[0] == ids[1]:
        raise ValueError(f"Os rótulos {tuple(labels)!r} viram o mesmo token: "
                         "escolha dois rótulos distintos.")
    return ids


def judge_prompt(tokenizer, question: str, first: str, second: str, template="padrao") -> str:
    """O texto exato que o juiz lê: o pedido na vez do usuário e, se o template tem ``cue``, a vez
    do assistente já começada por ela (``continue_final_message=True``); o veredito é o token
    seguinte. Sem ``cue``, a vez do assistente fica aberta e vazia.
    Ver Capítulo 8, seção 8.4.2.
    """
    tpl = _template(template)
    text = tpl["text"].format(question=question, first=first, second=second)
    messages = [{"role": "user", "content": text}]
    if tpl.get("cue"):
        messages.append({"role": "assistant", "content": tpl["cue"]})
        return tokenizer.apply_chat_template(messages, continue_final_message=True,
                                             tokenize=False)
    return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


@torch.no_grad()
def judge_batch(model, tokenizer, triples, template="padrao") -> list[Verdict]:
    """``judge_pair`` para várias triplas ``(pergunta, primeira, segunda)`` numa passagem em lote.

    Preenchimento à esquerda, com máscara de atenção e posições contadas só nos tokens reais: cada
    veredito é o mesmo que ``judge_pair`` daria sozinho (a menos de arredondamento de float32).
    Ver Capítulo 8, seção 8.4.
    """
    tpl = _template(template)
    ids = label_token_ids(tokenizer, _label_tokens(tpl))
    triples = list(triples)
    if not triples:
        raise ValueError("Nada para julgar: passe ao menos uma tripla "
                         "(pergunta, primeira, segunda).")
    for triple in triples:
        _check_triple(triple)
    prompts = [judge_prompt(tokenizer, *t, template=tpl) for t in triples]
    logits = last_token_logits(model, tokenizer, prompts).double()   # o último token prevê o rótulo
    probs = torch.softmax(logits, dim=-1)
    verdicts = []
    for row, p in zip(logits, probs):
        pair = (float(row[ids[0]]), float(row[ids[1]]))
        position = 0 if pair[0] >= pair[1] else 1
        verdicts.append(Verdict(tpl["labels"][position], position, pair,
                                (float(p[ids[0]]), float(p[ids[1]]))))
    return verdicts


def _check_triple(triple):
    names = ("a pergunta", "a primeira resposta", "a segunda resposta")
    if not isinstance(triple, (tuple, list)) or len(triple) != 3:
        raise ValueError("Cada item do juiz é uma tripla (pergunta, primeira resposta, segunda "
                         f"resposta); recebi {triple!r}.")
    for name, text in zip(names, triple):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{name.capitalize()} está vazia ou não é texto ({text!r}): o juiz "
                             "precisa de uma pergunta e de duas respostas não vazias. Uma resposta "
                             "vazia não é julgada; trate-a antes (por exemplo, como errada).")


def judge_pair(model, tokenizer, question: str, answer_a: str, answer_b: str,
               template="padrao") -> Verdict:
    """O modelo como juiz: qual das duas respostas é melhor, pelos logits do próximo token.

    Monta o pedido do ``template`` com ``answer_a`` na primeira posição e ``answer_b`` na segunda,
    passa pelo template de chat e compara, numa passagem para frente, o logit do rótulo da primeira
    posição com o da segunda. Nada é amostrado: o mesmo modelo dá o mesmo veredito.
    ``Verdict.mass`` (P(A) + P(B)) diz se o modelo de fato responde com um dos rótulos. Pergunta ou
    resposta vazia dá erro, não um veredito.
    Ver Capítulo 8, seção 8.4.
    """
    return judge_batch(model, tokenizer, [(question, answer_a, answer_b)], template)[0]


@dataclass
class PositionReport:
    """As contagens de ``position_consistency`` (cada par julgado nas duas ordens).

    * ``consistent``: escolheu a mesma resposta nas duas ordens (a regra da troca declara vitória);
    * ``first`` / ``second``: escolheu a mesma *posição* nas duas ordens (viés; a regra dá empate);
    * ``correct``: vitórias consistentes da resposta certa;
    * ``calibrated``: pares em que a certa vence pela média das duas ordens da margem a favor dela,
      (m1 − m2)/2 > 0 (a calibração de posição de Wang et al., 2024: o viés de posição, que soma o
      mesmo às duas margens da primeira posição, se cancela).
    ``margins`` guarda, por par, a margem (primeira − segunda posição) com a certa em primeiro e
    com a certa em segundo.
    Ver Capítulo 8, seção 8.4.4.
    """

    pairs: int
    consistent: int
    first: int
    second: int
    correct: int
    calibrated: int
    verdicts: list
    margins: list = field(default_factory=list)

    @classmethod
    def from_margins(cls, forward, swapped, verdicts=None) -> "PositionReport":
        """As contagens a partir das margens (logit da primeira posição − o da segunda) de cada
        par: ``forward`` com a certa na primeira posição, ``swapped`` com ela na segunda.

        Uma margem ≥ 0 escolhe a primeira posição. Serve ao juiz de verdade e ao simulado.
        Ver Capítulo 8, seção 8.4.4.
        """
        forward, swapped = [float(x) for x in forward], [float(x) for x in swapped]
        if not forward or len(forward) != len(swapped):
            raise ValueError("Dê uma margem por par em cada ordem (listas não vazias, do mesmo "
                             f"tamanho); recebi {len(forward)} e {len(swapped)}.")
        consistent = first = second = correct = calibrated = 0
        for m1, m2 in zip(forward, swapped):
            p1, p2 = int(m1 < 0), int(m2 < 0)          # posição escolhida em cada ordem
            if p1 == p2:
                first += p1 == 0
                second += p1 == 1
            else:
                consistent += 1
                correct += p1 == 0
            calibrated += m1 - m2 > 0      # média das duas ordens: a certa ganha?
        return cls(len(forward), consistent, first, second, correct, calibrated,
                   verdicts or [], list(zip(forward, swapped)))

    @property
    def ties(self) -> int:
        """Vereditos que a regra da troca transforma em empate (os inconsistentes)."""
        return self.pairs - self.consistent

    def rates(self) -> dict[str, float]:
        """As três taxas da Tabela 2 do MT-Bench, em %, e a de acerto consistente."""
        return {name: 100 * getattr(self, name) / self.pairs
                for name in ("consistent", "first", "second", "correct", "calibrated")}


def position_consistency(model, tokenizer, pairs, template="padrao") -> PositionReport:
    """Julga cada par ``(pergunta, certa, errada)`` nas duas ordens e conta consistência e viés.

    Ordem 1: certa na primeira posição; ordem 2: trocadas. Consistente = a mesma resposta vence nas
    duas (só então a regra da troca declara um vencedor); viés para a primeira (segunda) posição = a
    primeira (segunda) posição vence nas duas. É o protocolo da Tabela 2 do MT-Bench.
    Ver Capítulo 8, seção 8.4.4.
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("A lista de pares está vazia: passe pares "
                         "(pergunta, resposta certa, resposta errada).")
    for pair in pairs:
        if len(pair) != 3:
            raise ValueError("Cada par deve ser (pergunta, resposta certa, resposta errada); "
                             f"recebi {pair!r}.")
    forward = judge_batch(model, tokenizer, [(q, right, wrong) for q, right, wrong in pairs],
                          template)
    swapped = judge_batch(model, tokenizer, [(q, wrong, right) for q, right, wrong in pairs],
                          template)
    return PositionReport.from_margins([v.margin for v in forward], [v.margin for v in swapped],
                                       list(zip(forward, swapped)))


def simulated_judge(n_pairs: int, signal: float, bias: float, noise: float = 1.0,
                    seed: int = 0) -> PositionReport:
    """Um juiz simulado, com sinal de conteúdo e viés de posição conhecidos, nas duas ordens.

    A margem (primeira − segunda posição) de cada par é ``±signal + bias + ruído``: ``+signal``
    com a certa na primeira posição, ``−signal`` com ela na segunda, ``bias`` a favor da primeira
    posição nas duas, e um ruído normal de desvio ``noise``, sorteado à parte em cada ordem
    (gerador do NumPy com ``seed``). É o controle positivo do protocolo: aqui se sabe o que um
    juiz tem de conteúdo, e dá para ver o que a regra da troca e a calibração recuperam.
    Ver Capítulo 8, seção 8.4.4.
    """
    import numpy as np

    if not (isinstance(n_pairs, int) and n_pairs >= 1) or noise <= 0:
        raise ValueError(f"Dê n_pairs ≥ 1 (inteiro) e noise > 0; recebi n_pairs={n_pairs!r}, "
                         f"noise={noise!r}.")
    rng = np.random.default_rng(seed)
    e1, e2 = rng.normal(0.0, noise, (2, n_pairs))
    return PositionReport.from_margins(signal + bias + e1, -signal + bias + e2)
