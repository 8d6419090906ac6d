"""Avaliação medida: um juiz que se pode auditar, contaminação e múltipla escolha por
verossimilhança.

* ``JUDGE_TEMPLATES`` / ``judge_pair``: o modelo como juiz de um par de respostas, numa passagem
  para frente: o veredito compara os logits do próximo token para os dois rótulos (determinístico);
* ``position_consistency``: cada par julgado nas duas ordens; taxa de consistência, de vitórias da
  primeira e da segunda posição e empates pela regra da troca, como na Tabela 2 do MT-Bench;
* ``near_duplicates``: quase-duplicatas entre um conjunto de treino e um de avaliação (TF-IDF de
  n-gramas de caracteres, com o scikit-learn);
* ``mc_items`` / ``multiple_choice_accuracy``: a tarefa de múltipla escolha do curso e a pontuação
  por log-verossimilhança, com ``acc`` e ``acc_norm`` definidos como no lm-evaluation-harness;
* ``lm_eval_task`` / ``run_lm_eval``: a mesma tarefa passada pelo lm-evaluation-harness, offline;
* ``abstention_curve``, ``auroc``, ``auroc_interval``, ``auroc_permutation_p``: acurácia contra
  cobertura quando o modelo pode se abster, e quanto a confiança separa acertos de erros
  (Capítulo 9).
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .likelihood import last_token_logits, sequence_logprobs

MC_TASK_FILE = Path(__file__).with_name("dados") / "fatos_mc.json"
MC_TASK_NAME = "lncc_fatos"
MC_PROMPT = "Question: {question}\nAnswer:"

# Três formulações do mesmo pedido ao juiz (entradas do modelo, em inglês como o SmolLM2): a padrão,
# a "renomeada" (rótulos X/Y no lugar de A/B, como o "rename" do MT-Bench) e uma paráfrase.
JUDGE_TEMPLATES = {
    "padrao": {
        "labels": ("A", "B"),
        "text": ("Which answer to the question is better? Reply with A or B only.\n\n"
                 "Question: {question}\n\nAnswer A: {first}\n\nAnswer B: {second}\n\n"
                 "Better answer:"),
    },
    "renomeado": {
        "labels": ("X", "Y"),
        "text": ("Which answer to the question is better? Reply with X or Y only.\n\n"
                 "Question: {question}\n\nAnswer X: {first}\n\nAnswer Y: {second}\n\n"
                 "Better answer:"),
    },
    "parafraseado": {
        "labels": ("A", "B"),
        "text": ("You are a strict grader. Read the question and the two candidate answers, then "
                 "say which one is correct and more helpful. "
                 "Reply with a single letter, A or B.\n\n"
                 "Question: {question}\n\nA: {first}\n\nB: {second}\n\nVerdict:"),
    },
}

# Pares de avaliação escritos para o curso: (pergunta, resposta certa, resposta errada), com as duas
# respostas na mesma forma. O primeiro é a soma do Capítulo 4 em que o modelo errou com fluência.
JUDGE_PAIRS = (
    ("What is 27 + 58?", "27 + 58 = 85.", "27 + 58 = 125."),
    ("What is 9 × 6?", "9 × 6 = 54.", "9 × 6 = 56."),
    ("What is 100 − 37?", "100 − 37 = 63.", "100 − 37 = 73."),
    ("What is half of 50?", "Half of 50 is 25.", "Half of 50 is 20."),
)


def mc_items(path: str | Path | None = None) -> list[dict]:
    """As questões ``{"question", "choices", "answer"}`` da tarefa de múltipla escolha do curso.

    ``answer`` é o índice da alternativa certa. O arquivo padrão, ``lncc_llm/dados/fatos_mc.json``,
    tem 48 questões de conhecimento geral escritas para o curso (em inglês, a língua do SmolLM2),
    com a certa 12 vezes em cada posição. Outro ``path`` deve ser um JSON com uma lista de questões
    no mesmo formato; um arquivo ausente ou malformado dá um erro que diz o que corrigir.
    Ver Capítulo 8, seção 8.4.
    """
    file = Path(path or MC_TASK_FILE)
    if not file.is_file():
        raise FileNotFoundError(f"Arquivo de questões não encontrado: {str(file)!r}. Passe o "
                                "caminho de um JSON com uma lista de questões "
                                '{"question", "choices", "answer"}, ou chame mc_items() sem '
                                "argumentos para as questões do curso.")
    try:
        items = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{str(file)!r} não é um JSON válido (linha {err.lineno}, coluna "
                         f"{err.colno}: {err.msg}). O arquivo deve ser uma lista de questões "
                         '[{"question": …, "choices": […], "answer": índice}, …].') from None
    except UnicodeDecodeError:
        raise ValueError(f"{str(file)!r} não está em UTF-8: salve o JSON em UTF-8.") from None
    if not isinstance(items, list):
        raise ValueError(f"{str(file)!r} deve conter uma lista de questões; encontrei "
                         f"{type(items).__name__}.")
    _check_items(items)
    return items


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
                             "{'labels': (…, …), 'text': …}.")
        return JUDGE_TEMPLATES[template]
    if not (isinstance(template, dict) and {"labels", "text"} <= set(template)
            and len(template["labels"]) == 2):
        raise ValueError("Um template de juiz é um dicionário com 'labels' (dois rótulos) e 'text' "
                         "(com {question}, {first} e {second}).")
    return template


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


def _judge_prompt(tokenizer, tpl, question, first, second) -> str:
    text = tpl["text"].format(question=question, first=first, second=second)
    return tokenizer.apply_chat_template([{"role": "user", "content": text}],
                                         add_generation_prompt=True, tokenize=False)


@torch.no_grad()
def judge_batch(model, tokenizer, triples, template="padrao") -> list[Verdict]:
    """``judge_pair`` para várias triplas ``(pergunta, primeira, segunda)`` numa passagem em lote.

    Preenchimento à esquerda, com máscara de atenção e posições contadas só nos tokens reais: cada
    veredito é o mesmo que ``judge_pair`` daria sozinho (a menos de arredondamento de float32).
    Ver Capítulo 8, seção 8.4.
    """
    tpl = _template(template)
    ids = label_token_ids(tokenizer, tpl["labels"])
    triples = list(triples)
    if not triples:
        raise ValueError("Nada para julgar: passe ao menos uma tripla "
                         "(pergunta, primeira, segunda).")
    for triple in triples:
        _check_triple(triple)
    prompts = [_judge_prompt(tokenizer, tpl, *t) for t in triples]
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
    * ``calibrated``: pares em que a certa vence pela média das margens das duas ordens (a
      calibração de posição de Wang et al., 2024: o viés de posição, igual nas duas ordens, se
      cancela).
    Ver Capítulo 8, seção 8.4.
    """

    pairs: int
    consistent: int
    first: int
    second: int
    correct: int
    calibrated: int
    verdicts: list

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
    Ver Capítulo 8, seção 8.4.
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
    consistent = first = second = correct = calibrated = 0
    for v1, v2 in zip(forward, swapped):
        if v1.position == v2.position:
            first += v1.position == 0
            second += v1.position == 1
        else:
            consistent += 1
            correct += v1.position == 0
        calibrated += v1.margin - v2.margin > 0      # média das duas ordens: a certa ganha?
    verdicts = list(zip(forward, swapped))
    return PositionReport(len(pairs), consistent, first, second, correct, calibrated, verdicts)


# ----------------------------------------------------------------------------- contaminação


def cross_similarities(train, test, ngram_range=(3, 5)):
    """A matriz (avaliação × treino) de similaridades do cosseno entre vetores TF-IDF de n-gramas
    de caracteres (``char_wb``), de 0 a 1.

    O IDF é ajustado na união dos dois conjuntos, então as similaridades dependem também da
    composição do conjunto de avaliação (bom para um detector, não para comparar entre conjuntos).
    A distribuição de todos os pares cruzados é o que justifica um limiar de suspeita.
    Ver Capítulo 8, seção 8.4.
    """
    train, test = list(train), list(test)
    if not train or not test:
        raise ValueError("near_duplicates precisa de textos nos dois conjuntos "
                         "(treino e avaliação).")
    if not all(isinstance(t, str) for t in train + test):
        raise ValueError("near_duplicates compara textos: passe listas de strings.")
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=tuple(ngram_range), lowercase=True)
    matrix = vectorizer.fit_transform(train + test)
    return cosine_similarity(matrix[len(train):], matrix[: len(train)])


def near_duplicates(train, test, ngram_range=(3, 5), threshold: float = 0.5):
    """Para cada texto de ``test``, o texto de ``train`` mais parecido e a similaridade (0 a 1).

    Usa ``cross_similarities`` (TF-IDF de n-gramas de caracteres e cosseno): pega cópias, cópias
    com pequenas edições e trechos reordenados. Devolve ``[(i_teste, j_treino, similaridade,
    suspeito)]``, com ``suspeito`` = similaridade ≥ ``threshold``.
    Ver Capítulo 8, seção 8.4.
    """
    sims = cross_similarities(train, test, ngram_range)
    out = []
    for i, row in enumerate(sims):
        j = int(row.argmax())
        out.append((i, j, float(row[j]), bool(row[j] >= threshold)))
    return out


# ----------------------------------------------------------------------------- múltipla escolha


def _check_items(items):
    if not items:
        raise ValueError("O conjunto de questões está vazio: passe ao menos uma questão.")
    for item in items:
        if not {"question", "choices", "answer"} <= set(item):
            raise ValueError("Cada questão precisa de 'question', 'choices' e 'answer'; "
                             f"recebi {sorted(item)}.")
        if len(item["choices"]) < 2 or not 0 <= item["answer"] < len(item["choices"]):
            raise ValueError(f"Questão {item['question']!r}: precisa de ≥ 2 alternativas e "
                             "'answer' deve ser o índice de uma delas "
                             f"(0 a {len(item['choices']) - 1}).")


@dataclass
class MCResult:
    """O que ``multiple_choice_accuracy`` devolve: ``acc``, ``acc_norm`` e as log-verossimilhanças.

    Ver Capítulo 8, seção 8.4.
    """

    acc: float
    acc_norm: float
    loglikelihoods: list        # por questão, a log p de cada alternativa
    predictions: list           # argmax das log p
    predictions_norm: list      # argmax das log p / número de caracteres da alternativa
    answers: list               # o índice da alternativa certa de cada questão

    choice_lengths: list = field(default_factory=list)   # caracteres de cada alternativa

    def confidences(self, normalized: bool = False) -> list[float]:
        """Confiança de cada resposta: a maior probabilidade do softmax sobre as log p das
        alternativas.

        As log p são somas sobre os tokens, e uma alternativa longa soma mais termos negativos: a
        confiança bruta mistura certeza e tamanho. Com ``normalized=True``, o softmax vai sobre as
        log p divididas pelo número de caracteres (as do ``acc_norm``).
        Ver Capítulo 9, seção 9.3.
        """
        scores = self._scores(normalized)
        return [float(torch.softmax(torch.tensor(v, dtype=torch.float64), dim=0).max())
                for v in scores]

    def _scores(self, normalized):
        if not normalized:
            return self.loglikelihoods
        if len(self.choice_lengths) != len(self.loglikelihoods):
            raise ValueError("Este resultado não guarda o tamanho das alternativas: recalcule-o "
                             "com multiple_choice_accuracy.")
        return [[v / n for v, n in zip(ll, lens)]
                for ll, lens in zip(self.loglikelihoods, self.choice_lengths)]

    def correct(self, normalized: bool = False) -> list[bool]:
        """Se a alternativa escolhida é a certa, questão a questão: a de maior log p (a do
        ``acc``) ou, com ``normalized=True``, a do ``acc_norm``."""
        preds = self.predictions_norm if normalized else self.predictions
        return [p == a for p, a in zip(preds, self.answers)]

    def subset(self, indices) -> "MCResult":
        """O mesmo resultado restrito às questões ``indices`` (acc e acc_norm recalculados).

        Ver Capítulo 8, seção 8.4.
        """
        indices = list(indices)
        if not indices:
            raise ValueError("O subconjunto está vazio: passe ao menos um índice de questão.")
        pick = lambda xs: [xs[i] for i in indices]   # noqa: E731
        answers, preds, preds_norm = (pick(self.answers), pick(self.predictions),
                                      pick(self.predictions_norm))
        acc = sum(p == a for p, a in zip(preds, answers)) / len(indices)
        acc_norm = sum(p == a for p, a in zip(preds_norm, answers)) / len(indices)
        lengths = pick(self.choice_lengths) if self.choice_lengths else []
        return MCResult(acc, acc_norm, pick(self.loglikelihoods), preds, preds_norm, answers,
                        lengths)


def multiple_choice_accuracy(model, tokenizer, items, prompt: str = MC_PROMPT,
                             delimiter: str = " ") -> MCResult:
    """Acurácia de múltipla escolha por log-verossimilhança, como a do lm-evaluation-harness.

    Para cada questão, pontua cada alternativa por log p(delimitador + alternativa | prompt), a
    conta de ``likelihood.sequence_logprob`` (aqui em lote, ``sequence_logprobs``).
    ``acc``: acerta se a alternativa certa tem a maior log p. ``acc_norm``: a mesma coisa depois de
    dividir cada log p pelo número de caracteres da alternativa (sem o delimitador), o que tira a
    vantagem das respostas curtas. Nada é gerado; o modelo só dá probabilidades.
    A alternativa é tokenizada à parte do contexto; o lm-evaluation-harness tokeniza contexto e
    alternativa juntos e depois separa. Com o tokenizador do SmolLM2 e o delimitador " ", os dois
    dão os mesmos tokens (o Capítulo 8 confere as log p, a menos do arredondamento de float32); com
    outro tokenizador, uma fronteira de BPE pode mudar.
    Ver Capítulo 8, seção 8.4.
    """
    items = list(items)
    _check_items(items)
    contexts = [prompt.format(**item) for item in items for _ in item["choices"]]
    continuations = [delimiter + choice for item in items for choice in item["choices"]]
    flat = sequence_logprobs(model, tokenizer, contexts, continuations)
    lls, preds, preds_norm, hits, hits_norm, k = [], [], [], 0, 0, 0
    for item in items:
        ll = flat[k : k + len(item["choices"])]
        k += len(item["choices"])
        norm = [v / len(c) for v, c in zip(ll, item["choices"])]
        pred = max(range(len(ll)), key=ll.__getitem__)
        pred_norm = max(range(len(norm)), key=norm.__getitem__)
        lls.append(ll)
        preds.append(pred)
        preds_norm.append(pred_norm)
        hits += pred == item["answer"]
        hits_norm += pred_norm == item["answer"]
    return MCResult(hits / len(items), hits_norm / len(items), lls, preds, preds_norm,
                    [item["answer"] for item in items],
                    [[len(c) for c in item["choices"]] for item in items])


# ---------------------------------------------------------------------------- lm-evaluation-harness


def lm_eval_task(folder: str | Path | None = None, data_file: str | Path | None = None) -> Path:
    """Escreve a tarefa ``lncc_fatos`` do lm-evaluation-harness (um YAML) e devolve a pasta.

    A tarefa lê o JSON local do curso (``dataset_path: json``), pergunta com ``MC_PROMPT`` e pontua
    as alternativas por log-verossimilhança (``output_type: multiple_choice``, métricas ``acc`` e
    ``acc_norm``). O caminho do JSON vai absoluto no YAML, por isso ele é escrito na hora.
    Ver Capítulo 8, seção 8.4.
    """
    folder = Path(folder or tempfile.mkdtemp(prefix="lncc_llm_lmeval_"))
    folder.mkdir(parents=True, exist_ok=True)
    data_file = Path(data_file or MC_TASK_FILE).resolve()
    doc_to_text = MC_PROMPT.replace("{question}", "{{question}}").replace("\n", "\\n")
    (folder / f"{MC_TASK_NAME}.yaml").write_text(
        f"task: {MC_TASK_NAME}\n"
        "dataset_path: json\n"
        "dataset_kwargs:\n"
        "  data_files:\n"
        f"    test: {json.dumps(str(data_file))}\n"
        "test_split: test\n"
        "output_type: multiple_choice\n"
        f'doc_to_text: "{doc_to_text}"\n'
        'doc_to_choice: "{{choices}}"\n'
        "doc_to_target: answer\n"
        "metric_list:\n"
        "  - metric: acc\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n"
        "  - metric: acc_norm\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n",
        encoding="utf-8")
    return folder


def run_lm_eval(model, tokenizer, folder: str | Path | None = None,
                quiet: bool | None = None, bootstrap_iters: int = 100) -> dict:
    """Roda a tarefa ``lncc_fatos`` no lm-evaluation-harness, offline, com o modelo já carregado.

    Usa ``lm_eval.simple_evaluate`` com o ``HFLM`` do próprio harness em volta de ``model`` e
    ``tokenizer`` (nada é baixado). Devolve ``{"acc", "acc_norm", "acc_stderr", "acc_norm_stderr",
    "loglikelihoods"}``, com as log p de cada alternativa como o harness as calculou. O erro-padrão
    é o do próprio harness, que só o calcula com ``bootstrap_iters > 0`` (para uma média, ele usa a
    fórmula desvio/√n, sem sorteio; com 0, devolve ``nan``). Sob nbval os logs e barras do harness
    ficam calados.
    Ver Capítulo 8, seção 8.4.
    """
    try:
        import lm_eval
        from lm_eval.models.huggingface import HFLM
        from lm_eval.tasks import TaskManager
    except ImportError as err:       # pragma: no cover - depende da instalação
        raise ImportError("O lm-evaluation-harness não está instalado: rode "
                          "`pip install -r requirements.txt` (ele fixa lm-eval==0.4.13).") from err
    from .environment import progress_quiet, quiet_datasets, set_offline

    set_offline()
    quiet = progress_quiet() if quiet is None else quiet
    folder = Path(folder) if folder else lm_eval_task()
    sink = io.StringIO()
    loggers = [logging.getLogger(n) for n in ("lm_eval", "lm-eval", "datasets")]
    levels = [lg.level for lg in loggers]
    redirect = contextlib.redirect_stderr(sink) if quiet else contextlib.nullcontext()
    try:
        if quiet:
            for lg in loggers:
                lg.setLevel(logging.ERROR)
        with redirect, quiet_datasets(quiet):
            lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=1)
            # só a pasta do curso: indexar as milhares de tarefas do harness custa ~6 s a cada vez
            tasks = TaskManager(include_path=str(folder), include_defaults=False)
            res = lm_eval.simple_evaluate(model=lm, tasks=[MC_TASK_NAME], task_manager=tasks,
                                          log_samples=True, random_seed=0, numpy_random_seed=0,
                                          torch_random_seed=0, fewshot_random_seed=0,
                                          bootstrap_iters=bootstrap_iters)
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
    metrics = res["results"][MC_TASK_NAME]
    samples = sorted(res["samples"][MC_TASK_NAME], key=lambda s: s["doc_id"])
    stderr = {f"{m}_stderr": _float_or_nan(metrics.get(f"{m}_stderr,none"))
              for m in ("acc", "acc_norm")}
    return {"acc": float(metrics["acc,none"]), "acc_norm": float(metrics["acc_norm,none"]),
            **stderr,
            "loglikelihoods": [[float(r[0][0]) for r in s["resps"]] for s in samples]}


# ----------------------------------------------------------------------------- abstenção


def abstention_curve(confidences, correct) -> list[tuple[float, float, float]]:
    """Cobertura e acurácia quando o modelo só responde com confiança ≥ limiar.

    Para cada limiar (as próprias confianças, da maior para a menor), responde às questões com
    confiança ≥ limiar e se abstém nas outras. Devolve ``[(limiar, cobertura, acurácia)]``:
    cobertura é a fração respondida e acurácia, a fração certa entre as respondidas. O último ponto
    (cobertura 1) é a acurácia sem abstenção.
    Ver Capítulo 9, seção 9.3.
    """
    confidences, correct = list(confidences), list(correct)
    pairs = list(zip(confidences, correct))
    if not pairs or len(pairs) != len(confidences) or len(pairs) != len(correct):
        raise ValueError("Dê uma confiança e um acerto para cada questão "
                         "(listas não vazias, do mesmo tamanho).")
    out = []
    for threshold in sorted({c for c, _ in pairs}, reverse=True):
        answered = [ok for c, ok in pairs if c >= threshold]
        out.append((threshold, len(answered) / len(pairs), sum(answered) / len(answered)))
    return out


def _float_or_nan(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):     # o harness escreve "N/A" sem bootstrap
        return float("nan")


def auroc(scores, labels) -> float:
    """Área sob a curva ROC: a chance de uma questão certa ter confiança maior que uma errada.

    A estatística de Mann–Whitney, com empates contando meio: 0,5 é o acaso, 1 separa tudo.
    ``labels`` são acertos (booleanos); precisa de ao menos um certo e um errado.
    Ver Capítulo 9, seção 9.3.
    """
    import numpy as np

    s = np.asarray(list(scores), dtype=float)
    y = np.asarray(list(labels), dtype=bool)
    if s.shape != y.shape or s.ndim != 1:
        raise ValueError("Dê uma confiança e um acerto por questão (listas do mesmo tamanho).")
    pos, neg = s[y], s[~y]
    if len(pos) == 0 or len(neg) == 0:
        raise ValueError("A AUROC precisa de ao menos uma questão certa e uma errada; recebi "
                         f"{len(pos)} certas e {len(neg)} erradas.")
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


def auroc_interval(scores, labels, *, n_boot: int = 2000, level: float = 0.95,
                   seed: int = 0) -> tuple[float, float, float]:
    """A AUROC e um intervalo *bootstrap* de percentis: ``(auroc, baixo, alto)``.

    Sorteia as questões com reposição ``n_boot`` vezes (gerador do NumPy com ``seed``); amostras
    sem uma certa ou sem uma errada são descartadas. Com poucas questões o intervalo é largo, e é
    isso que ele deve mostrar.
    Ver Capítulo 9, seção 9.3.
    """
    import numpy as np

    s = np.asarray(list(scores), dtype=float)
    y = np.asarray(list(labels), dtype=bool)
    point = auroc(s, y)
    if not 0 < level < 1:
        raise ValueError(f"level deve estar entre 0 e 1 (por exemplo 0.95); recebi {level!r}.")
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(s), len(s))
        if y[idx].all() or not y[idx].any():
            continue
        values.append(auroc(s[idx], y[idx]))
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return point, float(low), float(high)


def auroc_permutation_p(scores, labels, *, n_perm: int = 2000, seed: int = 0) -> float:
    """Valor-p de permutação: a chance de uma AUROC tão longe de 0,5 quanto a medida se a
    confiança não tivesse relação com o acerto (rótulos embaralhados ``n_perm`` vezes).

    Ver Capítulo 9, seção 9.3.
    """
    import numpy as np

    s = np.asarray(list(scores), dtype=float)
    y = np.asarray(list(labels), dtype=bool)
    observed = abs(auroc(s, y) - 0.5)
    rng = np.random.default_rng(seed)
    hits = sum(abs(auroc(s, rng.permutation(y)) - 0.5) >= observed - 1e-12 for _ in range(n_perm))
    return (hits + 1) / (n_perm + 1)


def wilson_interval(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Intervalo de Wilson (95 % com z = 1,96) para uma taxa de ``hits`` acertos em ``n``.

    Ao contrário de p ± z·EP, não sai de [0, 1] e não encolhe a zero quando p = 0 ou 1: com 8 de 8,
    o intervalo ainda vai de 0,68 a 1. São os p cujo teste de escore não rejeita a taxa medida.
    Ver Capítulo 8, seção 8.3.5.
    """
    if not (isinstance(n, int) and n >= 1 and isinstance(hits, int) and 0 <= hits <= n):
        raise ValueError(f"Dê inteiros 0 ≤ hits ≤ n, com n ≥ 1; recebi hits={hits!r}, n={n!r}.")
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return max(0.0, centre - half), min(1.0, centre + half)
