"""O script da matriz de portabilidade (scripts/matriz_portabilidade.py): as configurações e o relato."""
import importlib.util
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("matriz", ROOT / "scripts" / "matriz_portabilidade.py")
matriz = importlib.util.module_from_spec(spec)
spec.loader.exec_module(matriz)


def test_six_configurations_lower_torch_mkl_and_onednn_together():
    assert sorted(matriz.CONFIGS) == sorted(f"{c}-{n}t" for c in ("melhor", "avx2", "default")
                                            for n in (1, 2))
    for name, env in matriz.CONFIGS.items():
        threads = name.split("-")[1][0]
        assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == threads
        if name.startswith("melhor"):
            assert "ATEN_CPU_CAPABILITY" not in env
        else:
            assert {"ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA"} <= set(env)
    assert matriz.CONFIGS["default-1t"]["ATEN_CPU_CAPABILITY"] == "default"


def test_run_passes_the_environment_and_reports_the_cell_that_differs(tmp_path):
    """Um notebook que imprime o número de threads: guardado com "1", passa com 1 thread e falha com 2."""
    cell = {"cell_type": "code", "execution_count": 1, "id": "a1", "metadata": {},
            "source": ["import os\n", "print(os.environ['OMP_NUM_THREADS'])"],
            "outputs": [{"name": "stdout", "output_type": "stream", "text": ["1\n"]}]}
    nb = {"cells": [cell], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                      "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "threads.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert matriz.run(path, matriz.CONFIGS["default-1t"])[0] == []
    log = tmp_path / "log.txt"
    failed, _, drift = matriz.run(path, matriz.CONFIGS["melhor-2t"], log)
    assert failed == ["Cell 0"] and drift == []
    assert "mismatch" in log.read_text(encoding="utf-8")


def test_run_counts_what_the_number_rule_tolerated(tmp_path):
    """Guardado "0.50", impresso 0.51 (uma unidade na última casa): passa, e a deriva é relatada."""
    cell = {"cell_type": "code", "execution_count": 1, "id": "a1", "metadata": {},
            "source": ["print(0.51)"],
            "outputs": [{"name": "stdout", "output_type": "stream", "text": ["0.50\n"]}]}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")  # fora do repositório: o mesmo conftest
    path = tmp_path / "deriva.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    log = tmp_path / "log.txt"
    failed, _, drift = matriz.run(path, matriz.CONFIGS["melhor-1t"], log)
    assert failed == [] and drift == [("Cell 0", [["0.50", "0.51"]])]
    assert "Cell 0: [['0.50', '0.51']]" in log.read_text(encoding="utf-8")


def test_the_saved_table_names_the_cpu_capability():
    cpu = matriz.cpu_summary("AVX512")
    assert "capacidade do torch: AVX512" in cpu and cpu.startswith("CPU: ")
    table = matriz.markdown_table(cpu, ["melhor-2t"], [("cap07", ["ok (2 na última casa)"])])
    assert table.splitlines()[0] == cpu
    assert "| cap07 | ok (2 na última casa) |" in table
