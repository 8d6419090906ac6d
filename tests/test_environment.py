"""Testes de lncc_llm.environment: linha estável, modo offline, sementes e dispositivo."""
import configparser
import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from lncc_llm import choose_device, seed_everything, set_offline, setup_notebook
from lncc_llm.environment import environment_line, is_offline

ROOT = Path(__file__).resolve().parents[1]


def _sanitize(text):
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "tests" / "sanitize.cfg", encoding="utf-8")
    for section in cfg.sections():
        text = re.sub(cfg[section]["regex"], cfg[section].get("replace", ""), text)
    return text


def test_setup_prints_two_short_stable_lines_and_returns_device(capsys):
    device = setup_notebook(seed=0)
    out = capsys.readouterr().out.strip()
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("lncc_llm ") and "torch " in lines[0]
    assert lines[1].startswith("dispositivo: ") and "semente: 0" in lines[1] and "offline: sim" in lines[1]
    assert lines[1].endswith("| TF32: desligado")
    # a saída de código do livro mostra cerca de 80 colunas sem rolar (issue 9: a linha era cortada)
    assert max(len(line) for line in lines) <= 80
    assert isinstance(device, torch.device)
    setup_notebook(seed=0)
    assert capsys.readouterr().out.strip() == out


def test_setup_turns_tf32_off_for_matmul_and_cudnn_and_says_so(capsys):
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    try:
        setup_notebook()
        assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
        assert torch.backends.cuda.matmul.fp32_precision == "ieee"  # a API nova vê o mesmo
        assert "TF32: desligado" in capsys.readouterr().out
        assert "TF32: ligado" in environment_line(torch.device("cuda"), 0, tf32_off=False)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False


def test_environment_line_identical_on_cpu_and_gpu_after_sanitize():
    cpu = environment_line(torch.device("cpu"), 0)
    gpu = environment_line(torch.device("cuda", 0), 0)
    assert cpu != gpu
    assert _sanitize(cpu) == _sanitize(gpu)


def test_sanitize_hides_device_inside_tensor_repr_and_addresses():
    assert _sanitize("tensor([1.], device='cuda:0')") == "tensor([1.])"
    assert _sanitize("<Figure at 0x7f3a2b1c4d50>") == "<Figure at 0x<ENDERECO>>"


def test_setup_forces_offline_mode():
    setup_notebook()
    import huggingface_hub.constants

    assert os.environ["HF_HUB_OFFLINE"] == "1" and huggingface_hub.constants.HF_HUB_OFFLINE
    set_offline(False)
    assert not is_offline()
    set_offline(True)
    assert is_offline()


def test_seed_everything_repeats_random_streams():
    seed_everything(7)
    a = (torch.rand(3), np.random.rand(3))
    seed_everything(7)
    b = (torch.rand(3), np.random.rand(3))
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    with pytest.raises(ValueError, match="semente"):
        seed_everything(-1)


def test_choose_device():
    assert choose_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match="Dispositivo desconhecido"):
        choose_device("banana")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="não há GPU"):
            choose_device("cuda")
        assert choose_device() == torch.device("cpu")


def test_setup_and_model_loading_print_nothing_to_stderr(tmp_path):
    # Num processo novo, como num kernel: importar e carregar não pode sujar o stderr
    # (torchao, bitsandbytes e torch.utils._pytree escrevem lá ao serem importados).
    import subprocess
    import sys

    code = (
        "import lncc_llm\n"
        "lncc_llm.setup_notebook()\n"
        "import torchao, bitsandbytes, peft\n"
        "model, tok = lncc_llm.load_encoder()\n"
        "print(type(model).__name__)\n"
    )
    env = {**os.environ, "LNCC_LLM_QUIET": "0", "PYTHONWARNINGS": "default"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "BertModel"
    assert done.stderr == "", done.stderr


def test_progress_is_quiet_under_nbval_and_visible_otherwise(monkeypatch):
    from lncc_llm import progress

    monkeypatch.setenv("LNCC_LLM_QUIET", "1")
    bar = progress(range(3))
    assert bar.disable and list(bar) == [0, 1, 2]
    monkeypatch.setenv("LNCC_LLM_QUIET", "0")
    bar = progress(range(3))
    assert not bar.disable
    bar.close()


def test_rounded_gives_plain_lists_without_negative_zero():
    from lncc_llm import rounded

    t = torch.tensor([[0.12345, -0.00001], [1.0, 2.71828]])
    assert rounded(t) == [[0.123, 0.0], [1.0, 2.718]]
    assert str(rounded(torch.tensor(-0.0001), 2)) == "0.0"  # sem "-0.0", que mudaria a saída guardada
    assert rounded([1.23456], 4) == [1.2346]
    assert rounded(torch.tensor([0.5], dtype=torch.float16), 1) == [0.5]
