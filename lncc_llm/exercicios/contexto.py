"""O contexto de um exercício fora do notebook: as células da lição que a solução usa, executadas num dicionário.

Os testes (``tests/test_exercicios.py``) rodam a solução de referência sem kernel. Em vez de repetir o código
da lição, executam as próprias células do notebook, escolhidas pelo ``id`` de célula (estável quando outras
células entram ou saem), com o matplotlib sem janela e a saída impressa descartada.
"""
from __future__ import annotations

import contextlib
import io
import json
import warnings
from pathlib import Path
from typing import Callable

LIVRO = Path(__file__).resolve().parents[2] / "book"
_CACHE: dict[tuple, dict] = {}


def _so_definicoes(fonte: str) -> str:
    """Só os ``import``, ``def`` e ``class`` de primeiro nível de uma célula (sem as contas dela)."""
    import ast

    arvore = ast.parse(fonte)
    tipos = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)
    return "\n\n".join(ast.get_source_segment(fonte, no) for no in arvore.body if isinstance(no, tipos))


def celulas_do_notebook(notebook: str, ids: tuple[str, ...] | list[str], extra: str = "",
                        definicoes: tuple[str, ...] = ()) -> Callable[[], dict]:
    """Devolve uma função que monta o namespace: executa as células ``ids`` de ``book/<notebook>.ipynb``
    (das células em ``definicoes``, só os ``import``, ``def`` e ``class``) e depois o código ``extra``. O
    resultado fica em cache por processo; cada chamada recebe uma cópia rasa.
    """
    chave = (notebook, tuple(ids), extra, tuple(definicoes))

    def construir() -> dict:
        if chave not in _CACHE:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            caderno = json.loads((LIVRO / f"{notebook}.ipynb").read_text(encoding="utf-8"))
            por_id = {c.get("id"): c for c in caderno["cells"]}
            faltam = [i for i in ids if i not in por_id]
            if faltam:
                raise KeyError(f"{notebook}: células {faltam} não existem mais; atualize o contexto do exercício.")
            from IPython.display import display

            ns: dict = {"__name__": "__contexto_do_exercicio__", "display": display}
            fontes = [_so_definicoes("".join(por_id[i]["source"])) if i in definicoes
                      else "".join(por_id[i]["source"]) for i in ids] + ([extra] if extra else [])
            import torch

            gradiente = torch.is_grad_enabled()   # uma célula como `torch.set_grad_enabled(False)` (Apêndice B)
            try:                                  # não pode desligar o gradiente do processo inteiro
                with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    for n, fonte in enumerate(fontes):
                        linhas = [ln for ln in fonte.splitlines() if not ln.lstrip().startswith(("%", "!"))]
                        # dont_inherit: o `from __future__ import annotations` deste módulo não vale
                        # para as células (uma @dataclass da lição procuraria o módulo em sys.modules)
                        exec(compile("\n".join(linhas), f"{notebook}[{n}]", "exec", dont_inherit=True), ns)
            finally:
                torch.set_grad_enabled(gradiente)
            plt.close("all")
            _CACHE[chave] = ns
        return dict(_CACHE[chave])

    return construir


_MEMORIA: dict = {}


def celula_da_resposta(ns: dict, nome: str) -> str:
    """O texto da última célula do histórico do IPython (``In``) que atribui ``nome``: a célula em que o
    leitor escreveu a resposta. Fora de um kernel (nos testes), ``""``. Os verificadores a leem para recusar
    uma resposta que só copia a peça pronta do curso."""
    return next((c for c in reversed(ns.get("In") or []) if nome in c and "=" in c), "")


def sem_comentarios(codigo: str) -> str:
    """O código sem os comentários (inclusive os do fim de uma linha), pelo ``tokenize`` do Python; se o
    texto não for Python válido (uma mágica do IPython), tira só as linhas que começam por ``#``."""
    import io
    import tokenize

    try:
        fichas = [f for f in tokenize.generate_tokens(io.StringIO(codigo).readline) if f.type != tokenize.COMMENT]
        return tokenize.untokenize(fichas)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return "\n".join(linha for linha in codigo.splitlines() if not linha.lstrip().startswith("#"))


def memorizar(chave, calcular):
    """Guarda uma conta determinística com o modelo (uma geração, um lote de margens): os testes conferem
    a mesma resposta certa e os mesmos erros comuns várias vezes, e cada conta roda uma vez por processo."""
    if chave not in _MEMORIA:
        _MEMORIA[chave] = calcular()
    return _MEMORIA[chave]


def sonda_de_multipla_escolha(model, tokenizer, items):
    """A ``multiple_choice_accuracy`` do modelo nas questões ``items``, uma vez por processo para o mesmo modelo
    com os mesmos pesos: os contextos do Cap. 8 (avaliação II) e do Cap. 9 partem da mesma sonda do modelo base.
    A chave leva a soma dos pesos e o número de módulos, para que um modelo treinado ou com adaptador no meio
    do caminho seja medido de novo."""
    import torch

    from ..benchmarks import multiple_choice_accuracy

    with torch.no_grad():
        soma = float(sum(p.double().sum() for p in model.parameters()))
    chave = ("sonda de múltipla escolha", id(model), soma, len(list(model.modules())),
             tuple(repr(item) for item in items))
    return memorizar(chave, lambda: multiple_choice_accuracy(model, tokenizer, items))
