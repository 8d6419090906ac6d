"""Cada exercício conferível carrega a própria prova (issue 34), sem kernel:

- a solução de referência (o código da célula recolhida) passa pelo verificador (quando o nbval roda o
  notebook na mesma sessão, a célula da solução já confere isso no contexto do notebook, com
  ``solucao_recolhida``, e o teste daqui é pulado: a mesma prova não roda duas vezes);
- cada erro comum falha com a sua própria mensagem;
- corrupções genéricas falham (1 % a mais, formato errado, ``None``, a entrada devolvida sem mudança);
- a lacuna ``____`` conta como "não tentado";
- a saída é a mesma em duas execuções;
- as células do notebook são as geradas das definições (a solução do notebook = a referência).
"""
from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lncc_llm.exercicios import Status, ____, todos
from lncc_llm.exercicios.celulas import (
    celula_dicas,
    celula_inicial,
    celula_solucao,
    posicao_do_enunciado,
)

RAIZ = Path(__file__).resolve().parents[1]
EXERCICIOS = todos()
IDS = [ex.id for ex in EXERCICIOS]


@pytest.fixture(scope="module")
def resolvidos():
    """O namespace de cada exercício depois de rodar a solução de referência (uma vez por exercício)."""
    cache = {}

    def resolver(ex):
        if ex.id not in cache:
            ns = ex.contexto()
            import matplotlib.pyplot as plt
            exec(compile(ex.solucao, f"<solução de {ex.id}>", "exec"), ns)
            plt.close("all")
            cache[ex.id] = ns
        return dict(cache[ex.id])

    return resolver


def _corrupcoes(valor):
    """Respostas erradas genéricas para um valor certo: cada uma tem de ser recusada."""
    if callable(valor) and not isinstance(valor, type):
        yield "devolve a entrada sem mudança", lambda *args, **kw: args[0] if args else None
        yield "devolve None", lambda *args, **kw: None
        return
    yield "None", None
    if isinstance(valor, dict):
        yield "dicionário vazio", {}
        return
    if isinstance(valor, str):
        yield "texto trocado", valor + " x"
        return
    if hasattr(valor, "detach"):
        valor = valor.detach().cpu().double().numpy()
    arr = np.asarray(valor)
    if arr.dtype.kind in "biu":
        yield "um a mais", arr + 1
    elif arr.dtype.kind == "f":
        yield "1 % a mais", arr * 1.01 + (arr == 0) * 0.01
    if arr.ndim >= 1:
        yield "formato errado", np.concatenate([arr.ravel(), arr.ravel()[:1]])
    else:
        yield "formato errado", np.stack([arr, arr])


def test_ha_exercicios_em_todos_os_capitulos_com_resposta_computavel():
    assert len(EXERCICIOS) >= 5
    assert len(set(IDS)) == len(IDS)


_PRIMEIRO_VEREDITO: dict[str, str] = {}     # o HTML do veredito da referência, para a conferência do determinismo


@pytest.fixture(scope="session")
def conferidos_pelo_nbval(request):
    """Os notebooks que o nbval roda nesta sessão: em cada um, a célula da solução de cada exercício roda o
    verificador com ``solucao_recolhida`` (que levanta ``AssertionError`` se a referência não passa) e o
    nbval compara o veredito com o guardado, que é o mesmo em duas execuções. Com o xdist, cada *worker*
    coleta todos os itens, então a lista é a da sessão inteira."""
    if not request.config.getoption("nbval", default=False):
        return set()
    return {Path(str(item.fspath)).stem for item in request.session.items if str(item.fspath).endswith(".ipynb")}


def _notebook(ex) -> str:
    return ex.id.split(".")[0]


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_solucao_de_referencia_passa(ex, resolvidos, conferidos_pelo_nbval):
    if _notebook(ex) in conferidos_pelo_nbval:
        pytest.skip(f"conferido pela célula da solução de {_notebook(ex)}.ipynb, que o nbval roda nesta sessão")
    resultado = ex.checar(resolvidos(ex))
    assert resultado.status is Status.CORRETO, repr(resultado)
    _PRIMEIRO_VEREDITO[ex.id] = resultado._repr_html_()


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_lacuna_conta_como_nao_tentado(ex, resolvidos):
    ns = resolvidos(ex)
    for nome in ex.variaveis:
        vazio = dict(ns, **{nome: ____})
        assert ex.checar(vazio).status is Status.NAO_TENTADO
        sem = {k: v for k, v in ns.items() if k != nome}
        assert ex.checar(sem).status is Status.NAO_TENTADO


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_cada_erro_comum_falha_com_a_sua_mensagem(ex, resolvidos):
    ns = resolvidos(ex)
    mensagens = [erro.mensagem for erro in ex.erros_comuns]
    assert len(set(mensagens)) == len(mensagens), "duas mensagens iguais não distinguem os erros"
    for erro in ex.erros_comuns:
        errado = dict(ns, **erro.resposta(ns))
        resultado = ex.checar(errado)
        assert resultado.status is Status.INCORRETO, f"{erro.mensagem!r} foi aceito"
        assert resultado.mensagem == erro.mensagem, f"esperava {erro.mensagem!r}, veio {resultado.mensagem!r}"


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_corrupcoes_genericas_falham(ex, resolvidos):
    ns = resolvidos(ex)
    for nome in ex.variaveis:
        for descricao, errado in _corrupcoes(ns[nome]):
            resultado = ex.checar(dict(ns, **{nome: errado}))
            assert resultado.status in (Status.INCORRETO, Status.ERRO), f"{nome}: {descricao} foi aceito"
            assert resultado.mensagem, f"{nome}: {descricao} sem diagnóstico"


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_saida_deterministica(ex, resolvidos, conferidos_pelo_nbval):
    ns = resolvidos(ex)
    if _notebook(ex) not in conferidos_pelo_nbval:   # com o nbval, o veredito certo já é comparado ao guardado
        # o primeiro veredito vem do teste acima, quando ele rodou neste processo (poupa uma rodada do verificador)
        primeiro = _PRIMEIRO_VEREDITO.get(ex.id) or ex.checar(ns)._repr_html_()
        assert ex.checar(ns)._repr_html_() == primeiro
    nome = ex.variaveis[0]
    for _, errado in _corrupcoes(ns[nome]):
        a, b = ex.checar(dict(ns, **{nome: errado})), ex.checar(dict(ns, **{nome: errado}))
        assert (repr(a), a._repr_html_()) == (repr(b), b._repr_html_())


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_celulas_do_notebook_sao_as_geradas(ex):
    notebook = importlib.import_module(f"lncc_llm.exercicios.{ex.capitulo}").NOTEBOOK
    caderno = json.loads((RAIZ / "book" / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    celulas = caderno["cells"]
    i = posicao_do_enunciado(celulas, ex.numero)
    fontes = ["".join(c["source"]) for c in celulas[i + 1:i + 4]]
    assert fontes == [celula_dicas(ex), celula_inicial(ex), celula_solucao(ex)], (
        f"{notebook}: as células do exercício {ex.numero} não são as geradas; rode "
        f"`python scripts/exercicios_nos_notebooks.py {ex.capitulo}` e reexecute o notebook")
    solucao = celulas[i + 3]
    assert solucao["metadata"].get("cellView") == "form" and solucao["metadata"]["jupyter"]["source_hidden"]
    saida = "".join("".join(o.get("data", {}).get("text/html", "")) for o in solucao.get("outputs", []))
    assert saida.startswith('<details class="lncc-solucao">'), "a saída guardada da solução não está recolhida"
    inicial = celulas[i + 2]
    texto = "".join("".join(o.get("data", {}).get("text/plain", "")) for o in inicial.get("outputs", []))
    assert texto.startswith("[..] Não tentado"), "a saída guardada da célula inicial deveria ser 'não tentado'"


def test_importar_os_exercicios_nao_importa_o_torch():
    codigo = ("import sys, lncc_llm.exercicios as e; e.todos(); "
              "assert 'torch' not in sys.modules, 'torch importado'")
    subprocess.run([sys.executable, "-c", codigo], check=True, cwd=RAIZ)


def test_resposta_que_levanta_excecao_vira_uma_linha():
    from lncc_llm.exercicios import Exercicio

    ex = Exercicio("cap00.ex1", "teste", ("f",), (), esperado=lambda ns: {"f": lambda x: x * 2},
                   entradas=lambda ns: [(1,), (2,)])

    def quebrada(x):
        raise ValueError("ops\nsegunda linha")

    resultado = ex.checar({"f": quebrada})
    assert resultado.status is Status.ERRO
    assert resultado.mensagem == "`f` levantou ValueError: ops (na chamada de teste 1 de 2)."

    def nao_feita(x):
        raise NotImplementedError

    assert ex.checar({"f": nao_feita}).status is Status.NAO_TENTADO
    assert ex.checar({"f": lambda x: ____}).status is Status.NAO_TENTADO
    assert ex.checar({"f": lambda x: x * 2}).status is Status.CORRETO


def test_saida_recolhida_esconde_a_saida_num_details():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from lncc_llm.exercicios import saida_recolhida

    InteractiveShell.instance()
    with capture_output() as fora:
        with saida_recolhida("Saída da solução do exercício 9"):
            print("x = 1 < 2")
    assert "x = 1" not in fora.stdout                      # nada solto: só o bloco recolhido
    html = fora.outputs[0].data["text/html"]
    assert html.startswith('<details class="lncc-solucao"><summary><b>Saída da solução do exercício 9</b>')
    assert "x = 1 &lt; 2" in html and "passa pelo verificador" not in html


@pytest.mark.parametrize("capitulo", sorted({ex.capitulo for ex in EXERCICIOS}))
def test_sincronizar_um_notebook_em_dia_nao_muda_nada(capitulo):
    """O script que gera as células não apaga as saídas guardadas de uma célula que já é a gerada."""
    import copy

    from lncc_llm.exercicios import do_capitulo
    from lncc_llm.exercicios.celulas import sincronizar

    notebook = importlib.import_module(f"lncc_llm.exercicios.{capitulo}").NOTEBOOK
    caderno = json.loads((RAIZ / "book" / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    assert sincronizar(copy.deepcopy(caderno), do_capitulo(capitulo), notebook) == caderno


def test_o_pacote_instalado_leva_os_exercicios_e_as_solucoes():
    """Uma instalação que não é editável (o Colab: ``pip install git+…``) precisa do subpacote
    ``lncc_llm.exercicios`` e das soluções de referência em ``dados/exercicios``."""
    import tomllib

    config = tomllib.loads((RAIZ / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    pacotes = {p.parent.relative_to(RAIZ).as_posix().replace("/", ".")
               for p in (RAIZ / "lncc_llm").rglob("__init__.py")}
    assert pacotes <= set(config["packages"]), f"faltam em packages: {sorted(pacotes - set(config['packages']))}"
    padroes = config["package-data"]["lncc_llm"]
    for arquivo in (RAIZ / "lncc_llm" / "dados").rglob("*"):
        if arquivo.is_file():
            relativo = arquivo.relative_to(RAIZ / "lncc_llm")
            assert any(relativo.match(padrao) for padrao in padroes), f"{relativo} fora do package-data"


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_cada_atalho_falha_com_a_sua_mensagem(ex, resolvidos):
    """Os atalhos listados (o valor impresso, a fórmula de uma dica, a biblioteca no lugar da conta) não passam,
    e cada um recebe a mensagem que diz o que fazer."""
    if not ex.atalhos:
        pytest.skip("sem atalhos listados")
    ns = resolvidos(ex)
    for atalho in ex.atalhos:
        resultado = ex.checar(dict(ns, **atalho.resposta(ns)))
        assert resultado.status is Status.INCORRETO, f"o atalho {atalho.mensagem!r} passou"
        assert resultado.mensagem == atalho.mensagem


def _funcoes(ex, ns):
    return [nome for nome in ex.variaveis if callable(ns[nome]) and not isinstance(ns[nome], type)]


@pytest.mark.parametrize("ex", [e for e in EXERCICIOS if e.entradas is not None], ids=lambda e: e.id)
def test_funcao_pronta_da_biblioteca_conta_como_nao_tentado(ex, resolvidos):
    """A função pronta da biblioteca, ou uma que só a chama, é "não tentado"; as entradas de teste são as
    mesmas a cada chamada (um gerador com semente) e o mesmo veredito sai duas vezes."""
    import torch

    from lncc_llm.exercicios.nucleo import _resolver

    ns = resolvidos(ex)
    nomes = _funcoes(ex, ns)
    classes = [nome for nome in ex.variaveis if isinstance(ns[nome], type)]
    for nome in classes:                 # uma classe: a do lncc_llm, ou uma herdada dela, não passa
        from lncc_llm import llama

        assert ex.checar(dict(ns, **{nome: llama.KVCache})).status is Status.NAO_TENTADO
        herdeira = type("Herdeira", (llama.KVCache,), {})      # herdar a classe pronta também não passa
        assert ex.checar(dict(ns, **{nome: herdeira})).status is Status.NAO_TENTADO
    if classes:
        return
    assert nomes, "um exercício com `entradas` pede uma função"
    for nome in nomes:
        for pronta in (torch.zeros_like, np.asarray):
            assert ex.checar(dict(ns, **{nome: pronta})).status is Status.NAO_TENTADO
        for caminho in ex.proibidas:
            achado = _resolver(caminho)
            if achado is None:
                continue
            original = achado[2]
            assert ex.checar(dict(ns, **{nome: original})).status is Status.NAO_TENTADO, caminho
            raiz = caminho.split(".")[0]
            pelo_caminho = eval(f"lambda *a, **k: {caminho}(*a, **k)", {raiz: importlib.import_module(raiz)})
            pelo_nome = eval(f"lambda *a, **k: {caminho.rsplit('.', 1)[1]}(*a, **k)",
                             {caminho.rsplit(".", 1)[1]: original})
            for invólucro in (pelo_caminho, pelo_nome):     # torch.linalg.svd(...) e `from … import svd`
                resultado = ex.checar(dict(ns, **{nome: invólucro}))
                assert resultado.status is Status.NAO_TENTADO, f"um invólucro de {caminho} passou: {resultado!r}"
    torch.manual_seed(1)
    np.random.seed(1)
    primeira = ex.entradas(ns)
    torch.manual_seed(2)                                 # as entradas vêm de um gerador com semente própria,
    np.random.seed(2)                                    # não do estado global que a lição deixou
    segunda = ex.entradas(ns)
    assert repr(primeira) == repr(segunda), "as entradas de teste dependem do gerador global"
    # o mesmo veredito duas vezes: test_saida_deterministica (aqui custaria outra rodada das chamadas de teste)


def _com_svd(alvo, steps=3000):
    import torch

    u, s, vt = torch.linalg.svd(alvo)
    b, a = u[:, :1] * s[0], vt[:1]
    return b, a, [float((alvo ** 2).sum())] + [float(((b @ a - alvo) ** 2).sum())] * (steps - 1)


def _com_eigh(alvo, steps=3000):
    """O mesmo atalho por outra porta: o maior autovetor de alvoᵀ·alvo (a revisão seguinte o achou)."""
    import torch

    _, vecs = torch.linalg.eigh(alvo.T @ alvo)
    a = vecs[:, -1:].T
    b = alvo @ a.T
    return b, a, [float((alvo ** 2).sum())] + [float(((b @ a - alvo) ** 2).sum())] * (steps - 1)


def _por_iteracao_de_potencia(alvo, steps=3000):
    """Sem nenhuma função proibida: o vetor singular por iteração de potência, e uma curva inventada."""
    import torch

    a = torch.ones(1, alvo.shape[1], dtype=alvo.dtype)
    for _ in range(200):
        a = (alvo.T @ alvo @ a.T).T
        a = a / a.norm()
    b = alvo @ a.T
    return b, a, [float((alvo ** 2).sum())] + [float(((b @ a - alvo) ** 2).sum())] * (steps - 1)


def _validador_so_no_fim(texto):
    import re

    achado = re.search(r"The review is (positive|negative)\.\s*$", texto)
    return achado.group(1) if achado else None


def _dots_sem_produto(ns):
    import torch

    gen = torch.Generator().manual_seed(5)
    return [torch.randn(20000, generator=gen) * d ** 0.5 for d in (2, 32, 512)]


def _idf_como_no_teste(ns):
    from lncc_llm.contamination import cross_similarities
    from lncc_llm.exercicios.cap08_avaliacao import PARAFRASES

    return {"best_paraphrases": cross_similarities(ns["train_texts"], list(PARAFRASES)).max(axis=1)}


# As dez respostas sem trabalho que as revisões de 2026-11 deram como "Correto", e as duas recusas de respostas
# certas: (exercício, o que o leitor fez, a resposta, o veredito esperado).
CASOS_DA_REVISAO = [
    ("cap07_treinamento_otimizacao.ex2", "o piso pela fórmula da dica 3 (SVD), sem descida",
     lambda ns: {"fit_rank1": _com_svd}, Status.NAO_TENTADO),
    ("cap07_treinamento_otimizacao.ex2", "o mesmo piso por autovetores (eigh), sem descida",
     lambda ns: {"fit_rank1": _com_eigh}, Status.NAO_TENTADO),
    ("cap07_treinamento_otimizacao.ex2", "iteração de potência e uma curva inventada, sem descida",
     lambda ns: {"fit_rank1": _por_iteracao_de_potencia}, Status.INCORRETO),
    ("cap02_atencao_camada.ex3", "a teoria digitada, sem simulação",
     lambda ns: {"raw_vars": [2, 32, 512], "scaled_vars": [1, 1, 1]}, Status.INCORRETO),
    ("cap02_atencao_camada.ex3", "normais sorteadas direto, sem o produto q·k",
     lambda ns: {"dots": _dots_sem_produto(ns),
                 "raw_vars": [v.var().item() for v in _dots_sem_produto(ns)],
                 "scaled_vars": [v.var().item() / d for v, d in zip(_dots_sem_produto(ns), (2, 32, 512))]},
     Status.INCORRETO),
    ("apendice_b_llama_do_zero.ex2", "a máscara de floats",
     lambda ns: {"my_future_mask": lambda n_new, n_past: __import__("torch").ones(n_new, n_past + n_new).triu(n_past + 1)},
     Status.INCORRETO),
    ("cap05_instrucoes_raciocinio.ex3", "o validador ancorado só no fim",
     lambda ns: {"sentence_label": _validador_so_no_fim}, Status.INCORRETO),
    ("cap07_sft_na_pratica.ex2", "`rates = used`, a lista impressa na seção 7.12.4",
     lambda ns: {"lr_at": lambda step, peak, warmup, total: [0.0, 6.7e-4, 1.3e-3, 2e-3, 1.9e-3, 1.8e-3, 1.5e-3,
                                                             1.2e-3, 8.3e-4, 5e-4, 2.3e-4, 6e-5][step % 12]},
     Status.INCORRETO),
    ("cap03_variacoes_modernas.ex3", "a fórmula fechada da seção 3.6, sem girar",
     lambda ns: {"logit_curve": lambda x, positions, base=10000.0: ns["expected_logit"](len(x), base)[positions]
                 * (x * x).sum() / len(x) ** 0.5} if "expected_logit" in ns else
     {"logit_curve": lambda x, positions, base=10000.0: (
         __import__("torch").cos(positions[:, None].double() * base ** (
             -__import__("torch").arange(0, len(x), 2, dtype=__import__("torch").float64) / len(x))).mean(-1)
         * (x * x).sum() / len(x) ** 0.5)},
     Status.INCORRETO),
    ("cap03_moe_bloco.ex3", "k = 2 com a porta do Switch",
     lambda ns: {"gates_top2": __import__("lncc_llm.moe", fromlist=["top_k_route"]).top_k_route(
         __import__("lncc_llm.moe", fromlist=["MoELayer"]).MoELayer(
             ns["d_model"], ns["d_ff"], ns["n_experts"], k=2, gate="switch",
             generator=__import__("torch").Generator().manual_seed(1)).double().router(ns["X"]).detach(),
         k=2, gate="switch").gates}, Status.INCORRETO),
    ("cap06_velocidade_memoria.ex2", "99 % dos parâmetros contados",
     lambda ns: {"used_bytes": {m: 0.99 * v for m, v in ns["used_bytes"].items()}}, Status.INCORRETO),
    ("cap09_tendencias.ex2", "o limiar das 48, sem a escolha nas pares",
     lambda ns: {"held_out_accuracy": lambda conf, right, pick, test, target=0.75: ns["held_out_accuracy"](
         conf, right, list(range(len(conf))), test, target)}, Status.INCORRETO),
    ("cap08_vieses_harness.ex2", "arredondar em vez de arredondar para cima",
     lambda ns: {"min_questions": lambda p, target: round(p * (1 - p) / target ** 2 + 1)}, Status.INCORRETO),
    # achados pela leitura seguinte
    ("cap09_tendencias.ex1", "um invólucro do `gguf.quants.dequantize`",
     lambda ns: {"dequantize_q4_0": lambda raw, shape: __import__("gguf").quants.dequantize(
         raw, __import__("gguf").GGMLQuantizationType.Q4_0).reshape(shape)}, Status.NAO_TENTADO),
    ("apendice_b_llama_do_zero.ex3", "a soma com laço da seção B.8, sem a fórmula fechada",
     lambda ns: {"positions_without": lambda P, N: sum(P + t for t in range(N))}, Status.INCORRETO),
    ("cap02_atencao_camada.ex2", "as linhas de `X_bs` trocadas",
     lambda ns: {"X_bs": ns["X_bs"].flip(0)}, Status.INCORRETO),
    # as duas recusas de respostas certas
    ("cap08_avaliacao.ex1", "o IDF ajustado só com o treino e as paráfrases, como o conjunto de teste (c10)",
     _idf_como_no_teste, Status.CORRETO),
    ("cap08_avaliacao.ex1", "o IDF ajustado com o treino e uma paráfrase de cada vez",
     lambda ns: {"best_paraphrases": [__import__("lncc_llm.contamination", fromlist=["x"]).cross_similarities(
         ns["train_texts"], [p]).max() for p in ns["paraphrases"]]}, Status.CORRETO),
    ("cap07_sft_na_pratica.ex1", "o template do curso guardado numa variável de outra célula",
     lambda ns: {"my_training_template": __import__("lncc_llm.chat_template", fromlist=["x"]).training_chat_template(),
                 "In": ["t = training_chat_template()", "my_training_template = t"]}, Status.INCORRETO),
    ("cap07_sft_lora_qlora.ex2", "as três configurações prontas do curso",
     lambda ns: {"bnb_config": ns["bnb_config"], "qlora_peft_config": ns["qlora_peft_config"],
                 "In": ["bnb_config = quantization_config('nf4', double_quant=True)\n"
                        "qlora_peft_config = lora_config()\nqlora_args = cpu_training_args(max_steps=2)"]},
     Status.INCORRETO),
    ("cap07_sft_lora_qlora.ex2", "o SFTConfig de `cpu_training_args`, feito em outra célula",
     lambda ns: {"qlora_args": __import__("lncc_llm.trainers", fromlist=["x"]).cpu_training_args(
         max_steps=2, learning_rate=2e-3)}, Status.INCORRETO),
    ("cap07_treinamento_otimizacao.ex2", "o leitor trocou o `D` da seção 7.4 e respondeu com a sua função",
     lambda ns: {"D": ns["D"] * 2 if "D" in ns else None}, Status.CORRETO),
]


@pytest.mark.parametrize("ident, descricao, resposta, status", CASOS_DA_REVISAO,
                         ids=[f"{c[0]}: {c[1]}" for c in CASOS_DA_REVISAO])
def test_casos_da_revisao(ident, descricao, resposta, status, resolvidos):
    ex = next(e for e in EXERCICIOS if e.id == ident)
    ns = resolvidos(ex)
    resultado = ex.checar(dict(ns, **resposta(ns)))
    assert resultado.status is status, f"{descricao}: {resultado!r}"
    if status is Status.INCORRETO:
        assert resultado.mensagem and "não consegui conferir" not in resultado.mensagem


_NUMERO = __import__("re").compile(r"(?<![\w.])[-−]?\d[\d\u202f]*(?:[.,]\d+)?(?:e[-+]?\d+)?")


def _numeros_impressos_antes(notebook: str, numero: int) -> list[float]:
    """Os números que as saídas guardadas mostram antes do enunciado do exercício (o que um leitor copiaria)."""
    caderno = json.loads((RAIZ / "book" / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    celulas = caderno["cells"][:posicao_do_enunciado(caderno["cells"], numero)]
    textos = []
    for c in celulas:
        if "".join(c.get("source", [])).startswith("# @title Solução"):
            continue                                     # a saída de outra solução fica recolhida
        for saida in c.get("outputs", []):
            textos.append("".join(saida.get("text", "")) + "".join(saida.get("data", {}).get("text/plain", "")))
    numeros = []
    for m in _NUMERO.finditer("\n".join(textos)):
        try:
            numeros.append(float(m.group().replace("\u202f", "").replace("−", "-").replace(",", ".")))
        except ValueError:
            pass
    return numeros


def _escalares(valor):
    if hasattr(valor, "detach"):
        valor = valor.detach().cpu().double().numpy()
    if isinstance(valor, dict):
        return [x for v in valor.values() for x in _escalares(v)]
    if isinstance(valor, str) or valor is None:
        return None
    try:
        arr = np.asarray(valor, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return arr.ravel().tolist()


@pytest.mark.parametrize("ex", [e for e in EXERCICIOS if e.entradas is None], ids=lambda e: e.id)
def test_nenhuma_resposta_de_valor_se_copia_das_saidas_da_licao(ex, resolvidos):
    """Um exercício de valor não passa com números copiados das saídas guardadas antes dele: ao menos uma
    das variáveis pedidas tem um número que a lição não imprimiu (com a tolerância do verificador)."""
    ns = resolvidos(ex)
    notebook = importlib.import_module(f"lncc_llm.exercicios.{ex.capitulo}").NOTEBOOK
    impressos = np.array(_numeros_impressos_antes(notebook, ex.numero) or [np.nan])
    copiaveis = []
    for nome in ex.variaveis:
        escalares = _escalares(ns[nome])
        if escalares is None or callable(ns[nome]):
            return                                       # um texto, uma função, uma classe: não se copia
        if all(np.any(np.abs(impressos - x) <= ex.atol + ex.rtol * abs(x)) for x in escalares):
            copiaveis.append(nome)
    assert copiaveis != list(ex.variaveis), (
        f"todas as respostas de {ex.id} ({', '.join(copiaveis)}) aparecem impressas antes do exercício")


@pytest.mark.parametrize("ex", EXERCICIOS, ids=IDS)
def test_cada_lacuna_da_celula_inicial_e_conferida_na_ordem_da_celula(ex):
    """Toda resposta em branco da célula inicial (uma atribuição ou uma função com `____`) é uma variável
    conferida, e na ordem da célula: o "Não tentado" aponta a primeira ainda vazia."""
    import ast

    def tem_lacuna(no):
        return any(isinstance(n, ast.Name) and n.id == "____" for n in ast.walk(no))

    nomes = []
    for no in ast.parse(ex.inicio).body:
        if isinstance(no, (ast.FunctionDef, ast.ClassDef)) and tem_lacuna(no):
            nomes.append(no.name)
        elif isinstance(no, ast.Assign) and tem_lacuna(no.value):
            nomes += [t.id for t in no.targets if isinstance(t, ast.Name)]
    assert nomes == list(ex.variaveis), (nomes, ex.variaveis)


def test_cada_erro_do_kv_cache_tem_a_sua_mensagem(resolvidos):
    """O núcleo do Apêndice B pede uma classe: os caches errados previstos (só as posições novas, a
    dimensão das cabeças, ``len`` que conta passos, soma camadas ou fica em 0, uma lista para todas as
    camadas) recebem cada um a sua mensagem, e um cache que funciona só até o prefill não passa."""
    from lncc_llm.exercicios import apendice_b_llama_do_zero as apb

    ns = resolvidos(apb.ex1)
    for mensagem, classe in apb._ERROS_EX1:
        resultado = apb.ex1.checar(dict(ns, MyKVCache=classe))
        assert resultado.status is Status.INCORRETO and resultado.mensagem == mensagem, classe.__name__

    class SemGuardar(apb._Referencia):       # devolve tudo, mas esquece as camadas além da 0
        def append(self, layer, k, v):
            return super().append(layer, k, v) if layer == 0 else (k, v)

    assert apb.ex1.checar(dict(ns, MyKVCache=SemGuardar)).status is Status.INCORRETO


def test_a_lição_que_chama_a_função_proibida_por_um_nome_do_notebook_também_é_atalho(resolvidos):
    """Depois de "Run All", a classe da lição (que chama `causal_attention_weights`, importada no notebook)
    não pode passar pelo exercício: a armadilha troca também o nome no namespace do notebook."""
    from lncc_llm.exercicios import apendice_a_gpt_do_zero as apa

    ns = resolvidos(apa.ex2)
    globais = ns["CausalSelfAttention"]._weights.__globals__
    exec("atalho = lambda q, k: CausalSelfAttention._weights(None, q, k)", globais)
    resultado = apa.ex2.checar(dict(ns, my_causal_weights=globais["atalho"]))
    assert resultado.status is Status.NAO_TENTADO, repr(resultado)
    assert callable(globais["causal_attention_weights"]) and globais["causal_attention_weights"].__module__ == "lncc_llm.gpt"


def test_a_atencao_do_leitor_nao_pode_ser_a_pronta(resolvidos):
    """O núcleo do Apêndice A, parte 2, pede uma classe: a que chama a atenção do PyTorch no `forward`, a que
    embrulha a `CausalSelfAttention` do lncc_llm e a que herda a `SeparateHeadsAttention` pronta não passam;
    a que escreve a conta passa (mesmo com um buffer chamado `causal_mask`, como a função que o notebook
    importou), e cada erro previsto tem a sua mensagem."""
    import math

    import torch
    import torch.nn.functional as F
    from torch import nn

    import lncc_llm.gpt as gpt_lib
    from lncc_llm.exercicios import apendice_a_treino as apt

    ns = resolvidos(apt.ex1)
    assert apt.ex1.checar(ns).status is Status.CORRETO
    globais = dict(ns, F=F, nn=nn, CausalSelfAttention=gpt_lib.CausalSelfAttention)
    exec(
        "class ComSdpa(nn.Module):\n"
        "    def __init__(self, d, h, n):\n"
        "        super().__init__()\n"
        "        self.h = h\n"
        "        self.q, self.k, self.v = (nn.Linear(d, d, bias=False) for _ in range(3))\n"
        "        self.proj = nn.Linear(d, d)\n"
        "    def forward(self, x):\n"
        "        b, n, d = x.shape\n"
        "        q, k, v = (m(x).view(b, n, self.h, d // self.h).transpose(1, 2) for m in (self.q, self.k, self.v))\n"
        "        z = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
        "        return self.proj(z.transpose(1, 2).reshape(b, n, d))\n"
        "class Embrulho(nn.Module):\n"
        "    def __init__(self, d, h, n):\n"
        "        super().__init__()\n"
        "        self.inner = CausalSelfAttention(d, h, n)\n"
        "        self.q, self.k, self.v = (nn.Linear(d, d, bias=False) for _ in range(3))\n"
        "        self.proj = self.inner.proj\n"
        "    def forward(self, x):\n"
        "        return self.inner(x)\n", globais)
    from lncc_llm.attention import causal_mask

    globais["causal_mask"], globais["math"], globais["torch"] = causal_mask, math, torch
    exec(
        "class ComBuffer(nn.Module):\n"                     # certa, com um buffer chamado causal_mask
        "    def __init__(self, d, h, n):\n"
        "        super().__init__()\n"
        "        self.h, self.dh = h, d // h\n"
        "        self.q, self.k, self.v = (nn.Linear(d, d, bias=False) for _ in range(3))\n"
        "        self.proj = nn.Linear(d, d)\n"
        "        self.register_buffer('causal_mask', torch.ones(n, n, dtype=torch.bool).tril())\n"
        "    def forward(self, x):\n"
        "        b, n, d = x.shape\n"
        "        q, k, v = (m(x).view(b, n, self.h, self.dh).transpose(1, 2) for m in (self.q, self.k, self.v))\n"
        "        s = (q @ k.transpose(-2, -1) / math.sqrt(self.dh)).masked_fill(~self.causal_mask[:n, :n], "
        "float('-inf'))\n"
        "        return self.proj((s.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))\n", globais)
    assert apt.ex1.checar(dict(ns, MySeparateHeadsAttention=globais["ComBuffer"])).status is Status.CORRETO
    herdeira = type("Herdeira", (gpt_lib.SeparateHeadsAttention,), {})
    for classe in (globais["ComSdpa"], globais["Embrulho"], herdeira, gpt_lib.SeparateHeadsAttention):
        resultado = apt.ex1.checar(dict(ns, MySeparateHeadsAttention=classe))
        assert resultado.status is Status.NAO_TENTADO, (classe.__name__, resultado)
    for erro in apt.ex1.erros_comuns:
        resultado = apt.ex1.checar(dict(ns, **erro.resposta(ns)))
        assert resultado.status is Status.INCORRETO and resultado.mensagem == erro.mensagem


def test_o_moe_que_calcula_todos_os_especialistas_nao_passa(resolvidos):
    """Calcular todos os especialistas em todos os tokens e depois escolher dá a mesma saída do top-1; os
    especialistas das chamadas de teste contam as linhas e recusam a conta densa. O roteador sem o .T
    (nenhum caso tem d = E) dá um erro que aponta a transposta."""
    import torch

    from lncc_llm.exercicios import cap03_moe_bloco as moe_ex

    ns = resolvidos(moe_ex.ex1)
    assert moe_ex.ex1.checar(ns).status is Status.CORRETO

    def todos_e_escolhe(x, router_weight, experts):
        probs = torch.softmax(x @ router_weight.T, dim=-1)
        gate, chosen = probs.max(dim=-1)
        every = torch.stack([expert(x) for expert in experts])          # (E, T, d): todos calculam
        return gate[:, None] * every[chosen, torch.arange(x.shape[0])]

    def sem_transposta(x, router_weight, experts):
        probs = torch.softmax(x @ router_weight, dim=-1)
        gate, chosen = probs.max(dim=-1)
        return torch.stack([gate[t] * experts[int(chosen[t])](x[t]) for t in range(x.shape[0])])

    def mistura_densa(x, router_weight, experts):                           # todos, pesados por p
        probs = torch.softmax(x @ router_weight.T, dim=-1)
        return sum(probs[:, e:e + 1] * expert(x) for e, expert in enumerate(experts))

    for densa in (todos_e_escolhe, mistura_densa):
        resultado = moe_ex.ex1.checar(dict(ns, switch_moe=densa))
        assert resultado.status is Status.INCORRETO and "só pelo especialista" in resultado.mensagem, resultado
    resultado = moe_ex.ex1.checar(dict(ns, switch_moe=sem_transposta))
    assert resultado.status is Status.ERRO and "transpostas" in resultado.mensagem, resultado


def test_a_mascara_do_apendice_b_tem_de_ser_um_tensor_booleano(resolvidos):
    """A `Attention` da lição passa a máscara ao `masked_fill`: um array do numpy ou uma lista com os
    valores certos não passam, e cada um recebe uma mensagem que diz o que devolver."""
    from lncc_llm.exercicios import apendice_b_llama_do_zero as apb

    ns = resolvidos(apb.ex2)
    assert apb.ex2.checar(ns).status is Status.CORRETO
    em_numpy = lambda n_new, n_past: np.triu(np.ones((n_new, n_past + n_new), dtype=bool), n_past + 1)  # noqa: E731
    em_lista = lambda n_new, n_past: em_numpy(n_new, n_past).tolist()  # noqa: E731
    for errada in (em_numpy, em_lista):
        resultado = apb.ex2.checar(dict(ns, my_future_mask=errada))
        assert resultado.status is Status.INCORRETO and "tensor do PyTorch" in resultado.mensagem, resultado


def test_o_nucleo_de_referencia_do_cap04_e_o_do_top_p_filter():
    """O tamanho de núcleo com que o exercício 2 do cap04 confere o leitor é o do `top_p_filter` (que, por sua
    vez, é conferido contra o `TopPLogitsWarper` em tests/test_sampling.py), em logits sorteados, com empates
    e com temperaturas dos dois lados de 1."""
    import torch

    from lncc_llm.exercicios.cap04_inferencia_causal import _nucleo
    from lncc_llm.sampling import apply_temperature, top_p_filter

    gerador = torch.Generator().manual_seed(11)
    tamanho = _nucleo()
    vetores = [torch.randn(300, generator=gerador, dtype=torch.float64) * 3 for _ in range(5)]
    vetores.append(torch.randint(-3, 4, (60,), generator=gerador).double())          # muitos empates
    for z in vetores:
        for p in (0.3, 0.6, 0.9):
            for tau in (0.5, 1.0, 1.5):
                assert tamanho(z, p, tau) == len(top_p_filter(apply_temperature(z, tau), p).indices), (p, tau)


def test_uma_funcao_do_curso_que_chama_a_proibida_por_outro_modulo_e_atalho(resolvidos):
    """`widgets.next_token_view` chama a `sampling_distribution` que `widgets` importou com o próprio nome; o
    nome preguiçoso `lncc_llm.top_p_filter` chega ao mesmo objeto. Os dois caminhos são atalhos, e depois da
    conferência cada módulo volta a ter a função original (nada da armadilha fica guardado)."""
    import lncc_llm
    from lncc_llm import sampling, widgets
    from lncc_llm.exercicios.cap04_inferencia_causal import ex2

    ns = resolvidos(ex2)
    originais = (sampling.top_p_filter, sampling.sampling_distribution, widgets.sampling_distribution)

    def pelo_widget(logits, p, tau):
        return widgets.next_token_view(logits, ns["tokenizer"], tau, p).nucleus_size

    def pelo_nome_preguicoso(logits, p, tau):
        return len(lncc_llm.top_p_filter(logits / tau, p).indices)

    lncc_llm.__dict__.pop("top_p_filter", None)         # ainda não resolvido: a 1ª leitura é dentro da conferência
    for atalho in (pelo_widget, pelo_nome_preguicoso):
        resultado = ex2.checar(dict(ns, nucleus_size=atalho))
        assert resultado.status is Status.NAO_TENTADO, (atalho.__name__, resultado)
    assert (sampling.top_p_filter, sampling.sampling_distribution, widgets.sampling_distribution) == originais
    assert lncc_llm.top_p_filter is sampling.top_p_filter


def test_a_margem_do_primeiro_token_pelo_generate_e_atalho(resolvidos):
    """`generate(..., return_probs=True)` dá a distribuição do primeiro token: ler a margem dela é usar a conta
    pronta, e o verificador da margem (cap05, segunda parte) a recusa."""
    import math

    from lncc_llm.exercicios.cap05_instrucoes_raciocinio import ex1
    from lncc_llm.sampling import generate

    ns = resolvidos(ex1)

    def pelo_generate(conversation):
        out = generate(ns["model"], ns["tokenizer"], conversation, max_new_tokens=1, greedy=True, chat=True,
                       return_probs=True)
        probs = out.step_probs[0]
        return math.log(probs[ns["positive_id"]]) - math.log(probs[ns["negative_id"]])

    resultado = ex1.checar(dict(ns, my_first_token_margin=pelo_generate))
    assert resultado.status is Status.NAO_TENTADO, resultado


def test_o_qlora_a_mao_nao_confunde_os_nomes_do_leitor_com_as_configuracoes_do_curso():
    """O exercício 2 do cap07 (parte 2) recusa as configurações prontas do curso lidas na célula, mas não um
    objeto do leitor com o mesmo nome, nem o argumento nomeado `quantization_config=` do `from_pretrained`."""
    from lncc_llm.exercicios.cap07_sft_lora_qlora import _prontas_lidas

    assert _prontas_lidas("m = M.from_pretrained(d, quantization_config=bnb_config)\nqlora_args = 1") == []
    assert _prontas_lidas("x = f(model_init_kwargs={'quantization_config': bnb_config})\nqlora_args = 1") == []
    assert _prontas_lidas("lora_config = LoraConfig(r=8)\nqlora_peft_config = lora_config\nqlora_args = 1") == []
    assert _prontas_lidas("bnb_config = quantization_config('nf4')\nqlora_args = 1") == ["quantization_config"]
    assert _prontas_lidas("from lncc_llm.trainers import cpu_training_args as c\nqlora_args = c()") == [
        "cpu_training_args"]


def test_a_linha_seguir_do_template_nao_conta_como_copia():
    """No cap07 (parte 3), a linha `seguir` descomentada, com espaços ou um comentário, não é cópia do template
    do curso; o template do curso na mesma célula é."""
    from lncc_llm.exercicios.cap07_sft_na_pratica import _linha_seguir

    for linha in ("training_template = my_training_template", "training_template=my_training_template  # o meu"):
        assert _linha_seguir(linha)
    assert not _linha_seguir("training_template = training_chat_template()")
    assert not _linha_seguir("my_training_template = training_template")
