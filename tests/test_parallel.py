"""Testes da execução em dois workers (conftest.py da raiz): ordem dos arquivos e threads."""
import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("conftest_raiz", ROOT / "conftest.py")
root_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(root_conftest)


def item(path, name):
    return SimpleNamespace(path=ROOT / path, name=name)


def test_longest_files_first_and_cells_keep_their_order():
    items = [item("tests/test_rope.py", "a"), item("book/cap02.ipynb", "Cell 0"),
             item("book/cap08.ipynb", "Cell 0"), item("book/cap02.ipynb", "Cell 1"),
             item("book/cap08.ipynb", "Cell 1"), item("tests/test_rope.py", "b")]
    durations = {"tests/test_rope.py": 1, "book/cap02.ipynb": 20, "book/cap08.ipynb": 200}
    ordered = [(i.path.name, i.name) for i in root_conftest.file_order(items, durations)]
    assert ordered == [("cap08.ipynb", "Cell 0"), ("cap08.ipynb", "Cell 1"), ("cap02.ipynb", "Cell 0"),
                       ("cap02.ipynb", "Cell 1"), ("test_rope.py", "a"), ("test_rope.py", "b")]


def test_files_without_a_duration_new_notebooks_first_new_tests_last():
    items = [item("tests/test_novo.py", "t"), item("book/cap01.ipynb", "Cell 0"),
             item("book/cap10_novo.ipynb", "Cell 0")]
    ordered = [i.path.name for i in root_conftest.file_order(items, {"book/cap01.ipynb": 10})]
    assert ordered == ["cap10_novo.ipynb", "cap01.ipynb", "test_novo.py"]


@pytest.mark.parametrize("cores, workers, threads", [(2, 2, 1), (2, 1, 2), (16, 2, 8), (1, 2, 1), (3, 2, 1)])
def test_threads_per_worker_share_the_cores(monkeypatch, cores, workers, threads):
    monkeypatch.setattr(root_conftest.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    assert root_conftest.threads_per_worker(workers) == threads


def test_a_worker_and_its_kernels_get_the_thread_budget(monkeypatch):
    """Sob o xdist, o conftest fixa as variáveis que o torch (e os kernels do nbval) leem ao iniciar."""
    import os

    import torch

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("só faz sentido dentro de um worker do pytest-xdist")
    expected = root_conftest.threads_per_worker(int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    assert os.environ["OMP_NUM_THREADS"] == str(expected)
    assert torch.get_num_threads() == expected
