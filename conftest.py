"""Configuração comum do pytest: testes de unidade e nbval rodam calados e sem rede.

As variáveis abaixo são herdadas pelos kernels que o nbval inicia, de modo que os
notebooks executam como ao gerar as saídas guardadas (ver README, "Manutenção").

Com o pytest-xdist (``-n 2``, o comando de testes do README), cada *worker* e os kernels que ele
inicia usam ``núcleos // workers`` threads (uma, numa CPU de 2 núcleos): dois processos que
disputassem os mesmos núcleos andariam mais devagar que um só. Fora do xdist nada muda, e um
notebook rodado sozinho usa a máquina inteira. Os arquivos mais longos vão primeiro (tempos em
``tests/duracoes.json``), para que os dois *workers* terminem juntos.

O nbval compara cada saída recalculada com a guardada pela regra dos números do livro
(``lncc_llm.stored_outputs``): um número com casas decimais pode mudar uma unidade na última casa
impressa; inteiros e texto, nada. Com ``LNCC_LLM_DERIVA=arquivo``, cada célula que passou por
causa da regra acrescenta ao arquivo uma linha JSON com os números tolerados (a matriz de
portabilidade usa isso para contar o que mudou em cada configuração).
"""
import json
import os
import sys
from pathlib import Path

os.environ["LNCC_LLM_QUIET"] = "1"  # sem barras de progresso nem avisos de conversão
os.environ["LNCC_LLM_PROGRESSO"] = "0"  # exercícios: sem registro de progresso (nem no nbval)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DRIFT_LOG = "LNCC_LLM_DERIVA"
ROOT = Path(__file__).resolve().parent
DURATIONS = ROOT / "tests" / "duracoes.json"
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def threads_per_worker(workers: int) -> int:
    """Threads de cada worker: os núcleos disponíveis divididos entre os workers, no mínimo 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS e Windows não têm sched_getaffinity
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, workers))


if os.environ.get("PYTEST_XDIST_WORKER"):
    _threads = threads_per_worker(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    for _name in THREAD_VARIABLES:  # lidas pelo torch ao ser importado, aqui e nos kernels do nbval
        os.environ[_name] = str(_threads)  # mesmo se já definidas: dois workers não podem disputar
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(_threads)


def file_order(items, durations):
    """Os itens agrupados por arquivo, do arquivo mais demorado ao mais rápido.

    Dentro de um arquivo a ordem não muda (as células de um notebook dependem das anteriores).
    Um notebook sem tempo anotado vai primeiro (costuma ser longo); um arquivo de teste sem tempo,
    por último.
    """
    def seconds(item):
        path = Path(str(item.path)).resolve()
        try:
            key = path.relative_to(ROOT).as_posix()
        except ValueError:
            key = path.name
        return durations.get(key, float("inf") if key.endswith(".ipynb") else 0.0)

    return sorted(items, key=lambda item: -seconds(item))  # sorted é estável


def pytest_collection_modifyitems(session, config, items):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    durations = json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.exists() else {}
    items[:] = file_order(items, durations)


def install_number_rule(cell_class):
    """Faz o ``compare_outputs`` do nbval aplicar a regra dos números antes da comparação literal.

    Os textos novos que concordam com os guardados pela regra são trocados pelos guardados; o resto
    segue para a comparação do próprio nbval, que mostra a diferença se houver.
    """
    literal = cell_class.compare_outputs
    if getattr(literal, "number_rule", False):
        return

    def compare_outputs(self, test, ref, skip_compare=None):
        # importado só aqui: o pytest que não compara notebooks não carrega o lncc_llm (e o torch)
        from lncc_llm.stored_outputs import reconcile_outputs

        test, drift = reconcile_outputs(test, ref, self.sanitize)
        agrees = literal(self, test, ref, skip_compare)
        if agrees and drift and os.environ.get(DRIFT_LOG):
            line = {"celula": self.nodeid, "numeros": [list(pair) for pair in drift]}
            with open(os.environ[DRIFT_LOG], "a", encoding="utf-8") as log:
                log.write(json.dumps(line, ensure_ascii=False) + "\n")
        return agrees

    compare_outputs.number_rule = True
    cell_class.compare_outputs = compare_outputs


RUN_ALL_CHECK = ("from lncc_llm.exercicios import conferir_nao_tentados\n"
                 "conferir_nao_tentados({notebook!r})")


def install_run_all_check(file_class, cell_class):
    """Depois da última célula de cada notebook com exercícios, o nbval roda mais um item no
    mesmo kernel: cada verificador do notebook tem de responder "não tentado", porque as soluções
    recolhidas rodam à parte e não respondem pelo leitor (o "Run All" de um estudante). Sem custo:
    o kernel já está aberto."""
    collect = file_class.collect
    if getattr(collect, "run_all_check", False):
        return

    def collect_with_check(self):
        import nbformat

        cells = list(collect(self))
        yield from cells
        notebook = Path(str(self.fspath)).stem
        import importlib.util

        if importlib.util.find_spec("lncc_llm") is None:  # chega com a 1ª célula (ensaio_colab.py)
            return
        from lncc_llm.exercicios import NOTEBOOKS, do_capitulo

        if notebook not in NOTEBOOKS or not do_capitulo(notebook) or not cells:
            return
        from collections import defaultdict

        cell = nbformat.v4.new_code_cell(RUN_ALL_CHECK.format(notebook=notebook))
        number = cells[-1].cell_num + 1
        name = f"Cell {number} (exercícios: não tentados após Run All)"
        yield cell_class.from_parent(self, name=name, cell_num=number, cell=cell,
                                     options=defaultdict(bool, {"check": False}))

    collect_with_check.run_all_check = True
    file_class.collect = collect_with_check


def pytest_configure(config):
    try:
        from nbval.plugin import IPyNbCell, IPyNbFile
    except ImportError:  # sem nbval, não há saídas guardadas a comparar
        return
    install_number_rule(IPyNbCell)
    install_run_all_check(IPyNbFile, IPyNbCell)
