"""Testes de lncc_llm.stored_outputs: a regra dos números com que o nbval compara as saídas guardadas."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from lncc_llm.formatting import THIN_SPACE as T
from lncc_llm.stored_outputs import number_drift, numbers_agree, reconcile_outputs

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("stored, new", [
    ("SFT: PPL geral 25.95", "SFT: PPL geral 25.96"),             # cap07, célula 34, numa CPU com AVX-512
    ("s = 4.0: PPL geral 112.20", "s = 4.0: PPL geral 112.21"),    # cap07, célula 42
    ("perda 2.345", "perda 2.344"),
    ("perda 9.99 |", "perda 10.00 |"),                            # vai-um: a largura muda
    ("| 9.99 | x", "|10.00 | x"),                                 # coluna alinhada à direita
    ("média -0.00", "média 0.00"),
    ("| -0.00 |", "|  0.00 |"),
    ("Δ = −0.01", "Δ = 0.00"),                                    # o menos tipográfico
    ("taxa 6.6 % ± 1.2 %", "taxa 6.7 % ± 1.2 %"),
    ("erro 1.5e-03", "erro 1.6e-03"),
    ("[0.125, -0.333]", "[0.126, -0.332]"),
    (f"parâmetros: 124{T}439{T}808 | perda 2.31", f"parâmetros: 124{T}439{T}808 | perda 2.32"),
    ("texto igual, 7/8 e 0.5", "texto igual, 7/8 e 0.5"),
    ("margem 0.05", "margem 0.04"),                               # duas casas, um algarismo
    ("razão 0.9", "razão 1.0"),                                   # o vai-um chega a dois algarismos
    ("erro 9.99e-01", "erro 1.00e+00"),                           # vai-um no expoente
    ("s = 4.0: PPL 30.18", "s = 4.0: PPL 30.19"),
    ("lncc_llm 0.1.0 | Python 3.11 | torch 2.13.0\nPPL 25.95",
     "lncc_llm 0.1.0 | Python 3.11 | torch 2.13.0\nPPL 25.96"),
])
def test_agrees_within_one_unit_of_the_last_printed_digit(stored, new):
    assert numbers_agree(stored, new)


@pytest.mark.parametrize("stored, new", [
    ("PPL 25.95", "PPL 25.97"),                # duas unidades
    ("PPL 25.95", "PPL 25.98"),
    ("PPL 25.95", "PPL 25.85"),                # um algarismo antes do último
    ("PPL 25.95", "PPL 26.95"),
    ("PPL 25.95", "PPL 25.950"),               # outro formato não é deriva
    ("PPL 25.95", "PPL 2.595e+01"),
    ("acertos 7/8", "acertos 6/8"),            # inteiros: exatos
    (f"124{T}439{T}808", f"124{T}439{T}809"),   # inteiro com espaço fino: exato
    (f"124{T}439{T}808", "124 439 808"),        # e o espaço fino continua sendo espaço fino
    ("passo 10: 0.50", "passo 11: 0.50"),
    ("SFT 2.34", "LoRA 2.34"),                 # uma palavra mudou
    ("Paris 0.50", "Paris  0.50"),             # espaço a mais sem mudança de largura
    ("perda 2.34", "perda 2.34 2.35"),         # um número apareceu
    ("a 1.00 b 2.00", "a 1.00 b"),             # e um sumiu
    ("torch 2.13.0", "torch 2.13.1"),          # versões são texto
    ("fp32 0.50", "fp16 0.50"),
    ("v1.5", "v1.6"),                          # número colado numa palavra: texto
    ("Llama-3.2-1B", "Llama-3.1-1B"),          # nomes com hífen: texto
    ("GPT-3.5", "GPT-3.6"),
    ("beta = 0.0, epsilon = 0.2", "beta = 0.1, epsilon = 0.2"),  # um algarismo: configuração
    ("epsilon = 0.2", "epsilon = 0.3"),
    ("lr 5e-04", "lr 6e-04"),
    ("eps 1e-05", "eps 1e-06"),                # expoentes diferentes: não é uma unidade
    ("eps 1e-05", "eps 1e-04"),
    ("1.00e+00", "9.91e-01"),                  # nove unidades da casa menor
    ("lncc_llm 0.1.0 | Python 3.11 | torch 2.13.0", "lncc_llm 0.1.0 | Python 3.12 | torch 2.13.0"),
    ("variação +304%", "variação +305%"),      # sem casas decimais: inteiro
])
def test_disagrees_on_real_changes(stored, new):
    assert not numbers_agree(stored, new)


def test_drift_lists_exactly_the_numbers_that_moved():
    assert number_drift("a 25.95 b 1.00", "a 25.96 b 1.00") == [("25.95", "25.96")]
    assert number_drift("igual 1.0", "igual 1.0") == []
    assert number_drift("a 25.95", "a 25.97") is None


def test_rejects_what_is_not_text():
    with pytest.raises(TypeError, match="compara dois textos"):
        numbers_agree(25.95, "25.96")


def _stream(text, name="stdout"):
    return nbformat.from_dict({"output_type": "stream", "name": name, "text": text})


def _result(text):
    return nbformat.from_dict({"output_type": "execute_result", "execution_count": 3, "metadata": {},
                               "data": {"text/plain": text}})


def test_reconcile_replaces_agreeing_texts_and_leaves_the_rest():
    stored = [_stream("PPL 25.95\n"), _result("0.125"), _stream("aviso\n", "stderr")]
    new = [_stream("PPL 25.96\n"), _result("0.127"), _stream("aviso\n", "stderr")]
    out, drift = reconcile_outputs(new, stored)
    assert out[0]["text"] == "PPL 25.95\n" and out[0].output_type == "stream"  # ainda um NotebookNode
    assert out[1]["data"]["text/plain"] == "0.127"     # duas unidades: fica como veio
    assert drift == [("25.95", "25.96")]
    assert new[0]["text"] == "PPL 25.96\n"              # as saídas recebidas não mudam


def test_reconcile_applies_the_sanitize_rules_first():
    stored, new = [_stream("máx |Δ| 2e-07 | 0.50\n")], [_stream("máx |Δ| 9e-06 | 0.51\n")]
    assert reconcile_outputs(new, stored)[0][0]["text"] == new[0]["text"]
    sanitize = lambda text: text.replace("2e-07", "<Δ>").replace("9e-06", "<Δ>")  # noqa: E731
    assert reconcile_outputs(new, stored, sanitize)[0][0]["text"] == stored[0]["text"]


def test_reconcile_does_not_pair_different_outputs():
    stored, new = [_stream("0.50\n")], [_stream("0.51\n", "stderr")]
    assert reconcile_outputs(new, stored)[0][0]["text"] == "0.51\n"
    assert reconcile_outputs(new + new, stored)[0][0]["text"] == "0.51\n"


def _notebook(stored_text, printed):
    cell = {"cell_type": "code", "execution_count": 1, "id": "c0", "metadata": {},
            "source": [f"print({printed!r})"],
            "outputs": [{"name": "stdout", "output_type": "stream", "text": [stored_text + "\n"]}]}
    return {"cells": [cell], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                         "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


@pytest.mark.parametrize("printed, passes", [
    ("s = 4.0: PPL geral 112.21", True),
    ("s = 4.0: PPL geral 112.20", True),
    ("s = 4.0: PPL geral 112.30", False),
    ("s = 4.0: PPL geral 122.20", False),
])
def test_the_repository_conftest_applies_the_rule_in_nbval(tmp_path, printed, passes):
    """O conftest.py do repositório, copiado ao lado de um notebook de uma célula, sob o nbval."""
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "celula.ipynb").write_text(json.dumps(_notebook("s = 4.0: PPL geral 112.20", printed)),
                                           encoding="utf-8")
    log = tmp_path / "deriva.jsonl"
    done = subprocess.run([sys.executable, "-m", "pytest", "celula.ipynb", "--nbval",
                           "--nbval-current-env", "-q", "-p", "no:cacheprovider"],
                          cwd=tmp_path, capture_output=True, text=True,
                          env={**_env(), "LNCC_LLM_DERIVA": str(log)})
    assert (done.returncode == 0) == passes, done.stdout[-2000:]
    if not passes:
        assert "mismatch" in done.stdout  # a diferença de verdade aparece como sempre
    moved = printed != "s = 4.0: PPL geral 112.20" and passes
    assert log.exists() == moved
    if moved:
        assert json.loads(log.read_text(encoding="utf-8"))["numeros"] == [["112.20", "112.21"]]


def test_a_cell_that_fails_elsewhere_logs_no_drift(tmp_path):
    """Uma célula com um número tolerado no stdout e uma mudança real no stderr falha, sem registro."""
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")
    nb = _notebook("PPL 25.95", "PPL 25.96")
    cell = nb["cells"][0]
    cell["source"] = ["import sys\n", "print('PPL 25.96')\n", "print('aviso 2', file=sys.stderr)"]
    cell["outputs"].append({"name": "stderr", "output_type": "stream", "text": ["aviso 1\n"]})
    (tmp_path / "celula.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    log = tmp_path / "deriva.jsonl"
    done = subprocess.run([sys.executable, "-m", "pytest", "celula.ipynb", "--nbval",
                           "--nbval-current-env", "-q", "-p", "no:cacheprovider"],
                          cwd=tmp_path, capture_output=True, text=True,
                          env={**_env(), "LNCC_LLM_DERIVA": str(log)})
    assert done.returncode == 1 and "aviso" in done.stdout
    assert not log.exists()


def _env():
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
