"""Benchmarks: a tarefa de múltipla escolha do curso, pontuada por log-verossimilhança como no
lm-evaluation-harness, e a mesma tarefa passada pelo próprio harness, offline.

* ``mc_items`` / ``multiple_choice_accuracy`` / ``MCResult``: ``acc`` e ``acc_norm`` definidos como
  no lm-evaluation-harness;
* ``lm_eval_task`` / ``run_lm_eval``: a tarefa num YAML do harness, com o modelo já carregado.
Ver Capítulo 8, seção 8.4.5.
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .likelihood import sequence_logprobs

MC_TASK_FILE = Path(__file__).with_name("dados") / "fatos_mc.json"
MC_TASK_NAME = "lncc_fatos"
MC_PROMPT = "Question: {question}\nAnswer:"
GEN_TASK_FILE = Path(__file__).with_name("dados") / "somas_gen.json"
GEN_TASK_NAME = "lncc_somas"
GEN_MAX_TOKENS = 16


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


def gen_items(path: str | Path | None = None) -> list[dict]:
    """As 20 contas da tarefa gerativa do curso, ``{"question", "answer"}`` (a resposta como texto).

    O arquivo padrão, ``lncc_llm/dados/somas_gen.json``, tem somas de dois números de 10 a 49,
    sorteadas uma vez e guardadas. O modelo **gera** a resposta, e ela é pontuada por acerto exato
    depois de um filtro que extrai um número do texto (o primeiro ou o último), como no GSM8K.
    Ver Capítulo 8, seção 8.4.5.
    """
    file = Path(path or GEN_TASK_FILE)
    if not file.is_file():
        raise FileNotFoundError(f"Arquivo de contas não encontrado: {str(file)!r}. Passe um JSON "
                                'com uma lista de {"question", "answer"}, ou chame gen_items() '
                                "sem argumentos.")
    items = json.loads(file.read_text(encoding="utf-8"))
    if not items or not all(isinstance(i, dict) and {"question", "answer"} <= set(i)
                            for i in items):
        raise ValueError(f"{str(file)!r} deve ser uma lista não vazia de "
                         '{"question": …, "answer": …}.')
    return items


def number_in(text: str, which: str = "primeiro") -> str | None:
    """O primeiro (``which="primeiro"``) ou o último (``"ultimo"``) número inteiro do texto gerado,
    com sinal, ou ``None``: os dois filtros da tarefa gerativa, os mesmos ``regex`` do YAML.
    Ver Capítulo 8, seção 8.4.5.
    """
    if which not in ("primeiro", "ultimo"):
        raise ValueError(f"which deve ser 'primeiro' ou 'ultimo'; recebi {which!r}.")
    found = re.findall(r"-?[0-9]+", text)
    if not found:
        return None
    return found[0] if which == "primeiro" else found[-1]


def lm_eval_task(folder: str | Path | None = None, data_file: str | Path | None = None,
                 gen_file: str | Path | None = None) -> Path:
    """Escreve as tarefas do curso para o lm-evaluation-harness (dois YAML) e devolve a pasta.

    * ``lncc_fatos``: a múltipla escolha de ``mc_items``, com ``MC_PROMPT``, pontuada por
      log-verossimilhança (``output_type: multiple_choice``, métricas ``acc`` e ``acc_norm``);
    * ``lncc_somas``: as contas de ``gen_items``, com o mesmo formato de prompt, **geradas** até a
      quebra de linha (gulosa, até 16 tokens) e pontuadas por acerto exato do primeiro número
      (``output_type: generate_until``, filtro ``regex`` + ``take_first``, métrica
      ``exact_match``).
    Os caminhos dos JSON vão absolutos nos YAML, por isso eles são escritos na hora.
    Ver Capítulo 8, seção 8.4.5.
    """
    folder = Path(folder or tempfile.mkdtemp(prefix="lncc_llm_lmeval_"))
    folder.mkdir(parents=True, exist_ok=True)
    data_file = Path(data_file or MC_TASK_FILE).resolve()
    gen_file = Path(gen_file or GEN_TASK_FILE).resolve()
    doc_to_text = MC_PROMPT.replace("{question}", "{{question}}").replace("\n", "\\n")
    header = ("dataset_path: json\n"
              "dataset_kwargs:\n"
              "  data_files:\n"
              "    test: {path}\n"
              "test_split: test\n")
    (folder / f"{MC_TASK_NAME}.yaml").write_text(
        f"task: {MC_TASK_NAME}\n"
        + header.format(path=json.dumps(str(data_file))) +
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
    (folder / f"{GEN_TASK_NAME}.yaml").write_text(
        f"task: {GEN_TASK_NAME}\n"
        + header.format(path=json.dumps(str(gen_file))) +
        "output_type: generate_until\n"
        f'doc_to_text: "{doc_to_text}"\n'
        'doc_to_target: "{{answer}}"\n'
        "generation_kwargs:\n"
        '  until: ["\\n"]\n'
        "  do_sample: false\n"
        f"  max_gen_toks: {GEN_MAX_TOKENS}\n"
        "filter_list:\n"
        "  - name: primeiro_numero\n"
        "    filter:\n"
        "      - function: regex\n"
        '        regex_pattern: "-?[0-9]+"\n'
        "      - function: take_first\n"
        "  - name: ultimo_numero\n"
        "    filter:\n"
        "      - function: regex\n"
        '        regex_pattern: "-?[0-9]+"\n'
        "        group_select: -1\n"
        "      - function: take_first\n"
        "metric_list:\n"
        "  - metric: exact_match\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n",
        encoding="utf-8")
    return folder


def run_lm_eval(model, tokenizer, folder: str | Path | None = None, task: str = MC_TASK_NAME,
                apply_chat_template: bool = False, quiet: bool | None = None,
                bootstrap_iters: int = 100, batch_size: int = 16) -> dict:
    """Roda uma tarefa do curso no lm-evaluation-harness, offline, com o modelo já carregado.

    Usa ``lm_eval.simple_evaluate`` com o ``HFLM`` do próprio harness em volta de ``model`` e
    ``tokenizer`` (nada é baixado). ``task`` é ``"lncc_fatos"`` (múltipla escolha) ou
    ``"lncc_somas"`` (gerativa). Com ``apply_chat_template=True``, o harness passa cada prompt pelo
    template de chat do tokenizador (a opção ``--apply_chat_template``). ``batch_size`` é o lote do
    harness (com 1, as mesmas log p a menos de ~1e-5, três vezes mais devagar). Devolve, para a
    múltipla escolha, ``{"acc", "acc_norm", "acc_stderr", "acc_norm_stderr", "loglikelihoods",
    "contexts"}`` (as log p de cada alternativa e o contexto que o harness montou); para a gerativa,
    ``{"primeiro_numero", "ultimo_numero", …_stderr, "generations", "contexts"}`` (o acerto exato
    com cada filtro e os textos gerados). O erro-padrão
    é o do próprio harness, que só o calcula com ``bootstrap_iters > 0`` (para uma média, ele usa a
    fórmula desvio/√n, sem sorteio; com 0, devolve ``nan``). Sob nbval os logs e barras do harness
    ficam calados.
    Ver Capítulo 8, seção 8.4.5.
    """
    if task not in (MC_TASK_NAME, GEN_TASK_NAME):
        raise ValueError(f"Tarefa desconhecida: {task!r}. As do curso são {MC_TASK_NAME!r} "
                         f"(múltipla escolha) e {GEN_TASK_NAME!r} (gerativa).")
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
            lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=batch_size)
            # só a pasta do curso: indexar as milhares de tarefas do harness custa ~6 s a cada vez
            tasks = TaskManager(include_path=str(folder), include_defaults=False)
            res = lm_eval.simple_evaluate(model=lm, tasks=[task], task_manager=tasks,
                                          log_samples=True, random_seed=0, numpy_random_seed=0,
                                          torch_random_seed=0, fewshot_random_seed=0,
                                          bootstrap_iters=bootstrap_iters,
                                          apply_chat_template=apply_chat_template)
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)
    metrics = res["results"][task]
    # uma amostra por questão e por filtro: fica a do primeiro filtro (o texto gerado é o mesmo)
    first_filter = "primeiro_numero" if task == GEN_TASK_NAME else "none"
    samples = sorted((s for s in res["samples"][task] if s.get("filter", "none") == first_filter),
                     key=lambda s: s["doc_id"])
    contexts = [s["arguments"][0][0] if isinstance(s["arguments"], list) else
                s["arguments"]["gen_args_0"]["arg_0"] for s in samples]
    if task == GEN_TASK_NAME:
        out = {"generations": [s["resps"][0][0] for s in samples], "contexts": contexts}
        for name in ("primeiro_numero", "ultimo_numero"):
            out[name] = float(metrics[f"exact_match,{name}"])
            out[f"{name}_stderr"] = _float_or_nan(metrics.get(f"exact_match_stderr,{name}"))
        return out
    stderr = {f"{m}_stderr": _float_or_nan(metrics.get(f"{m}_stderr,none"))
              for m in ("acc", "acc_norm")}
    return {"acc": float(metrics["acc,none"]), "acc_norm": float(metrics["acc_norm,none"]),
            **stderr,
            "loglikelihoods": [[float(r[0][0]) for r in s["resps"]] for s in samples],
            "contexts": contexts}


def _float_or_nan(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):     # o harness escreve "N/A" sem bootstrap
        return float("nan")
