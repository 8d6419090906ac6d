"""O exercício que confere a resposta do leitor: ``verificar``, ``dica`` e a solução recolhida.

Cada :class:`Exercicio` carrega a própria prova: o código da solução de referência (em
``lncc_llm/dados/exercicios/``), o valor esperado calculado por outro caminho (a biblioteca, uma fórmula
fechada ou uma propriedade), os erros comuns com a mensagem de cada um e o contexto mínimo para rodar a
solução fora do notebook (``tests/test_exercicios.py``). Nada aqui importa o torch.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import html
import re
import sys
import types
from dataclasses import dataclass, field
from enum import Enum
from importlib import resources
from typing import Callable

from . import registro
from .comparar import Incorreto, comparar


class _Lacuna:
    """O marcador ``____`` da célula inicial: a resposta ainda não foi escrita.

    Uma conta com a lacuna dá a lacuna (``____ @ W``, ``____[0]``, ``f(____)`` com ``f = ____``): a
    célula roda até o ``verificar()``, que diz "não tentado" e nomeia a primeira variável ainda vazia.
    Cópias (``copy.deepcopy``) são a própria lacuna; ela só é igual a si mesma."""

    __array_ufunc__ = None          # o NumPy devolve a conta para a lacuna, que a absorve
    __array_priority__ = 10_000

    def __repr__(self) -> str:
        return "____"

    def __bool__(self) -> bool:
        return False

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return "____"

    def __format__(self, especificacao):
        return "____"

    def _sem_conteudo(self, *args):
        raise TypeError("a resposta ainda é `____`: troque-a pelo seu código antes de percorrê-la, "
                        "medi-la ou procurar algo nela.")

    __iter__ = __len__ = __contains__ = _sem_conteudo

    def __getattr__(self, nome):
        if nome.startswith("__"):
            raise AttributeError(nome)
        return self

    def _absorve(self, *args, **kwargs):
        return self

    __call__ = __getitem__ = _absorve
    __neg__ = __pos__ = __abs__ = __invert__ = _absorve
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _absorve
    __matmul__ = __rmatmul__ = __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _absorve
    __mod__ = __rmod__ = __pow__ = __rpow__ = _absorve
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _absorve
    __lt__ = __le__ = __gt__ = __ge__ = _absorve

    def __eq__(self, outro):
        return outro is self

    def __ne__(self, outro):
        return outro is not self

    def __hash__(self):
        return id(self)


____ = _Lacuna()


MARCA_DA_EDICAO = ".edicao_do_aluno"     # o arquivo que `scripts/edicao_do_aluno.py` grava ao lado dos notebooks


def edicao_do_aluno() -> bool:
    """Se o notebook roda na edição do aluno (a pasta de trabalho tem o arquivo ``.edicao_do_aluno``, ou
    ``LNCC_LLM_SEM_SOLUCOES=1``): então ``mostrar_solucao()`` não mostra a solução. Ver o README, "Edição do
    aluno"."""
    import os
    from pathlib import Path

    return os.environ.get("LNCC_LLM_SEM_SOLUCOES") == "1" or (Path.cwd() / MARCA_DA_EDICAO).exists()


class NaoTentado(Exception):
    """A resposta ainda é a lacuna ``____`` (ou a função levanta ``NotImplementedError``)."""


class ErroDoLeitor(Exception):
    """O código do leitor levantou uma exceção; a mensagem a resume numa linha."""


class Status(Enum):
    CORRETO = "correto"
    INCORRETO = "incorreto"
    NAO_TENTADO = "nao_tentado"
    ERRO = "erro"


_ROTULO = {
    Status.CORRETO: ("[OK] Correto", "✓ Correto", "#2e7d32"),
    Status.INCORRETO: ("[X] Ainda não", "✗ Ainda não", "#c62828"),
    Status.NAO_TENTADO: ("[..] Não tentado", "… Não tentado", "#8d6e00"),
    Status.ERRO: ("[!] Erro no seu código", "⚠ Erro no seu código", "#c62828"),
}


def _em_html(texto: str) -> str:
    """Escapa o texto e transforma `código` em <code>código</code> (o único markdown das mensagens)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(texto, quote=False))


def _caixa(cor: str, corpo: str) -> str:
    return (f'<div style="border-left:4px solid {cor};padding:4px 10px;margin:4px 0">'
            f"{corpo}</div>")


@dataclass(frozen=True)
class Resultado:
    """O veredito de uma conferência: status e uma mensagem curta em pt-BR."""

    status: Status
    mensagem: str = ""
    erro: "ErroComum | None" = field(default=None, compare=False, repr=False)   # o erro comum reconhecido

    def __bool__(self) -> bool:
        return self.status is Status.CORRETO

    def __repr__(self) -> str:
        rotulo = _ROTULO[self.status][0]
        return f"{rotulo}: {self.mensagem}" if self.mensagem else rotulo

    def _repr_html_(self) -> str:
        _, rotulo, cor = _ROTULO[self.status]
        corpo = f'<b style="color:{cor}">{rotulo}</b>'
        if self.mensagem:
            corpo += f" — {_em_html(self.mensagem)}"
        return _caixa(cor, corpo)


@dataclass(frozen=True)
class ErroComum:
    """Um erro que os leitores cometem: ``resposta(ns)`` devolve as variáveis erradas (valores ou
    funções) e ``mensagem`` é o diagnóstico que o leitor deve ver quando a resposta dele bater com elas."""

    mensagem: str
    resposta: Callable[[dict], dict]
    dica: str | int | None = None   # a dica para quem cometeu este erro (texto, ou o número de uma das dicas)


class Exibivel:
    def __init__(self, texto: str, html_: str):
        self._texto, self._html = texto, html_

    def __repr__(self) -> str:
        return self._texto

    def _repr_html_(self) -> str:
        return self._html


def mostrar(objeto) -> None:
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - o curso sempre tem IPython
        print(repr(objeto))
        return
    display(objeto)


def _namespace_do_leitor(profundidade: int = 2) -> dict:
    try:
        from IPython import get_ipython
        ip = get_ipython()
    except ImportError:  # pragma: no cover
        ip = None
    if ip is not None:
        return ip.user_ns
    return sys._getframe(profundidade).f_globals


def _vazio(valor) -> bool:
    if isinstance(valor, _Lacuna) or valor is Ellipsis:
        return True
    if isinstance(valor, (list, tuple)):
        return any(_vazio(v) for v in valor)
    if isinstance(valor, dict):
        return any(_vazio(v) for v in valor.values())
    if getattr(valor, "dtype", None) is not None and str(valor.dtype) == "object":   # np.array([…, ____])
        return any(_vazio(v) for v in getattr(valor, "flat", ()))
    return False


def _codigos(codigo):
    """O objeto de código e os aninhados nele (funções internas, lambdas, compreensões)."""
    yield codigo
    for const in codigo.co_consts:
        if hasattr(const, "co_names"):
            yield from _codigos(const)


def _linha_da_lacuna(funcao) -> int | None:
    """A linha (do arquivo ou da célula) da primeira ``____`` no corpo de ``funcao``; ``None`` se não há."""
    import dis

    codigo = getattr(funcao, "__code__", None)
    if codigo is None and isinstance(funcao, type):         # uma classe: os métodos dela
        linhas = [_linha_da_lacuna(m) for m in vars(funcao).values() if hasattr(m, "__code__")]
        linhas = [n for n in linhas if n is not None]
        return min(linhas) if linhas else None
    if codigo is None:
        return None
    linhas = []
    for c in _codigos(codigo):
        if "____" in c.co_names:
            linhas += [i.positions.lineno for i in dis.get_instructions(c)
                       if i.argval == "____" and i.opname.startswith(("LOAD_GLOBAL", "LOAD_NAME"))
                       and i.positions is not None and i.positions.lineno is not None]
    return min(linhas) if linhas else None


BIBLIOTECAS = ("torch", "numpy", "transformers", "tokenizers", "tiktoken", "peft", "bitsandbytes", "trl",
               "gguf", "scipy", "sklearn", "lncc_llm", "math", "operator")


def _de_biblioteca(funcao) -> str | None:
    """O nome qualificado de ``funcao`` se ela vem pronta de uma biblioteca (ou do ``lncc_llm``)."""
    import functools
    import inspect

    if not (inspect.isroutine(funcao) or inspect.isclass(funcao) or isinstance(funcao, functools.partial)):
        return None           # um objeto chamável (um modelo, um tokenizador) é um valor, não a função pedida
    if isinstance(funcao, functools.partial):
        funcao = funcao.func
    modulo = getattr(funcao, "__module__", None) or getattr(type(funcao), "__module__", "")
    if modulo and modulo.split(".")[0] in BIBLIOTECAS and not modulo.startswith("lncc_llm.exercicios"):
        nome = getattr(funcao, "__qualname__", None) or getattr(funcao, "__name__", None) or type(funcao).__name__
        return f"{modulo}.{nome}"
    return None


def _resolver(caminho: str):
    """``"torch.nn.functional.softmax"`` → (módulo, atributo, objeto); ``None`` se não existe."""
    import importlib

    partes = caminho.split(".")
    for corte in range(len(partes) - 1, 0, -1):
        try:
            dono = importlib.import_module(".".join(partes[:corte]))
        except ImportError:
            continue
        for nome in partes[corte:-1]:
            dono = getattr(dono, nome, None)
        if dono is not None and hasattr(dono, partes[-1]):
            return dono, partes[-1], getattr(dono, partes[-1])
        return None
    return None


_AUSENTE = object()


def _chave(objeto):
    """A identidade de um objeto para comparar com os proibidos: um método ligado (``Q4_0.dequantize``,
    um ``classmethod``) é recriado a cada acesso, então vale o par (função, dono)."""
    funcao, dono = getattr(objeto, "__func__", None), getattr(objeto, "__self__", None)
    if funcao is not None and dono is not None:
        return ("metodo", id(funcao), id(dono))
    return ("objeto", id(objeto))


class _AtalhoUsado(BaseException):
    """Uma função proibida foi chamada. ``BaseException``: um ``except Exception`` do leitor não a engole."""


def _modulos_do_curso() -> list[dict]:
    """Os dicionários dos módulos do ``lncc_llm`` já carregados (menos os dos exercícios)."""
    return [vars(modulo) for nome, modulo in list(sys.modules.items())
            if (nome == "lncc_llm" or nome.startswith("lncc_llm.")) and not nome.startswith("lncc_llm.exercicios")
            and hasattr(modulo, "__dict__")]


@contextlib.contextmanager
def _armadilhas(caminhos: tuple[str, ...], globais: dict | None = None):
    """Troca, durante a chamada do leitor, cada função proibida por uma que acusa o uso: no módulo dela, em
    todo módulo do ``lncc_llm`` que a importou com o próprio nome (``widgets`` chama a ``sampling_distribution``
    que importou de ``sampling``) e, em ``globais`` (o namespace do notebook, onde a lição a importou), em todo
    nome ligado a ela. Assim uma função do curso ou da lição que a chama por outro caminho também acusa o
    atalho. Na saída, tudo volta, inclusive o que um ``lncc_llm.<nome>`` preguiçoso tenha guardado no meio."""
    trocas, trocas_globais, acusadoras, por_original = [], [], {}, {}
    for caminho in caminhos:
        achado = _resolver(caminho)
        if achado is None:
            continue
        dono, nome, original = achado
        proprio = vars(dono).get(nome, _AUSENTE) if hasattr(dono, "__dict__") else _AUSENTE

        def acusa(*args, _caminho=caminho, **kwargs):
            raise _AtalhoUsado(_caminho)

        acusadoras[id(acusa)] = (acusa, original)
        por_original[id(original)] = (original, acusa)
        for chave, valor in list((globais or {}).items()):
            if valor is original or _chave(valor) == _chave(original):
                globais[chave] = acusa
                trocas_globais.append((chave, original))
        try:
            setattr(dono, nome, acusa)
        except (AttributeError, TypeError):
            continue
        trocas.append((dono, nome, proprio))
    if por_original:                                  # uma passada só pelos módulos do curso
        for dicionario in _modulos_do_curso():
            for chave, valor in list(dicionario.items()):
                par = por_original.get(id(valor))
                if par is not None and valor is par[0]:
                    dicionario[chave] = par[1]
                    trocas_globais.append((chave, valor, dicionario))
    try:
        yield
    finally:
        for dono, nome, proprio in reversed(trocas):    # o atributo como estava: um @staticmethod continua um
            if proprio is _AUSENTE:
                delattr(dono, nome)                       # era herdado: volta a ser
            else:
                setattr(dono, nome, proprio)
        for troca in reversed(trocas_globais):
            chave, original, *dicionario = troca
            (dicionario[0] if dicionario else globais)[chave] = original
        pacote = sys.modules.get("lncc_llm")             # só o pacote guarda nomes preguiçosos (__getattr__)
        if acusadoras and pacote is not None:            # um nome resolvido durante a chamada volta ao original
            for chave, valor in list(vars(pacote).items()):
                if id(valor) in acusadoras and acusadoras[id(valor)][0] is valor:
                    vars(pacote)[chave] = acusadoras[id(valor)][1]


_CARREGA_GLOBAL = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"}
_CARREGA_NOME = _CARREGA_GLOBAL | {"LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"}


def _usa_proibida(funcao, caminhos: tuple[str, ...]) -> str | None:
    """Se o código de ``funcao`` nomeia, por um nome global ou do fecho, um objeto proibido."""
    if not caminhos:
        return None
    proibidos = {}
    for caminho in caminhos:
        achado = _resolver(caminho)
        if achado is not None:
            proibidos[_chave(achado[2])] = caminho
    if _chave(funcao) in proibidos:            # a própria função pronta (um op do torch.ops, um builtin)
        return proibidos[_chave(funcao)]
    codigo = getattr(funcao, "__code__", None)
    if codigo is None:
        return None
    import dis

    globais = getattr(funcao, "__globals__", {})
    fecho = dict(zip(codigo.co_freevars, (c.cell_contents for c in (funcao.__closure__ or ()))))
    for c in _codigos(codigo):
        # só os nomes lidos como globais ou do fecho: `self.causal_mask` (um atributo) não é a função
        # `causal_mask` do notebook; um atributo de módulo (`F.softmax`) cai na armadilha, na chamada
        for i in dis.get_instructions(c):
            if i.opname not in _CARREGA_NOME or not isinstance(i.argval, str):
                continue
            if i.opname in _CARREGA_GLOBAL:
                alvo = globais.get(i.argval)
            else:          # do fecho: só o da própria função; uma local de uma compreensão não é global
                alvo = fecho.get(i.argval)
            if alvo is not None and _chave(alvo) in proibidos:
                return proibidos[_chave(alvo)]
    return None


def _classe_usa_pronta(classe, caminhos: tuple[str, ...]) -> str | None:
    """Uma classe do leitor que herda uma classe pronta do ``lncc_llm``, ou cujos métodos nomeiam uma função
    proibida: o nome do que ela usa. (Herdar de ``torch.nn.Module`` é o esperado.)"""
    import inspect

    if not inspect.isclass(classe):
        return None
    for base in classe.__mro__[1:]:
        modulo = getattr(base, "__module__", "") or ""
        if modulo.startswith("lncc_llm") and not modulo.startswith("lncc_llm.exercicios"):
            return f"{modulo}.{base.__qualname__}"
    for base in classe.__mro__:
        if _de_biblioteca(base) is not None or base is object:
            continue
        for membro in vars(base).values():
            funcao = getattr(membro, "__func__", membro)
            achado = _usa_proibida(funcao, caminhos) if inspect.isfunction(funcao) else None
            if achado is not None:
                return achado
    return None


def _sem_gradiente():
    torch = sys.modules.get("torch")
    return torch.no_grad() if torch is not None else contextlib.nullcontext()


class Exercicio:
    """Um exercício com resposta computável.

    - ``variaveis``: os nomes que o leitor define na célula inicial;
    - ``esperado(ns)``: o valor certo de cada variável, calculado por um caminho independente da solução
      (para uma variável que é uma função, a função de referência);
    - ``entradas(ns)``: as chamadas de teste, quando o leitor escreve uma função (uma lista de tuplas ou de
      dicionários de argumentos; ou, com várias funções, um dicionário nome → lista);
    - ``conferir(valores, ns)``: uma conferência sob medida (levanta :class:`Incorreto`), no lugar da
      comparação com ``esperado``;
    - ``erros_comuns``: os erros previstos, cada um com a sua mensagem;
    - ``contexto()``: o namespace mínimo para rodar a solução de referência fora do notebook;
    - ``atalhos``: respostas sem o trabalho (o valor impresso na lição, a fórmula fechada de uma dica, a
      biblioteca chamada no lugar da conta), cada uma com a mensagem que diz o que fazer; nenhuma passa;
    - ``proibidas``: as funções prontas (``"torch.nn.functional.softmax"``) que a função do leitor não pode
      ser, nem chamar: quem as usa recebe "não tentado";
    - ``gradiente``: a função do leitor treina (o verificador a chama com o autograd ligado);
    - ``seguir``: num exercício núcleo, a linha que faz as células seguintes usarem a versão do leitor (a
      lição segue com a cópia do ``lncc_llm``; a célula inicial mostra a linha, comentada);
    - ``erros_explicados``: pares (tipo de exceção, explicação) acrescentados à linha do erro quando a
      função do leitor levanta aquela exceção;
    - ``tipo``: ``"nucleo"`` (o leitor escreve a peça central da lição, no fluxo principal; o verificador a
      chama em entradas sorteadas que o notebook nunca mostra) ou ``"consolidacao"``;
    - ``inicio``: as linhas da célula inicial que o leitor completa (com ``____``).

    Ver Introdução, "Exercícios que conferem a sua resposta".
    """

    def __init__(self, id: str, titulo: str, variaveis: tuple[str, ...], dicas: tuple[str, ...], *,
                 esperado: Callable[[dict], dict] | None = None,
                 entradas: Callable[[dict], list[tuple]] | None = None,
                 conferir: Callable[[dict, dict], None] | None = None,
                 erros_comuns: tuple[ErroComum, ...] = (),
                 contexto: Callable[[], dict] | None = None,
                 rtol: float = 1e-4, atol: float = 1e-6,
                 parabens: str = "", inicio: str = "",
                 atalhos: tuple[ErroComum, ...] = (), proibidas: tuple[str, ...] = (),
                 tipo: str = "consolidacao", gradiente: bool = False, seguir: str = "",
                 erros_explicados: tuple[tuple[type, str], ...] = ()):
        if tipo not in ("nucleo", "consolidacao"):
            raise ValueError(f"{id}: tipo {tipo!r} desconhecido (use 'nucleo' ou 'consolidacao').")
        if esperado is None and conferir is None:
            raise ValueError(f"{id}: defina `esperado` ou `conferir`.")
        self.id = id
        self.capitulo, self.nome = id.split(".")
        self.numero = int(self.nome.removeprefix("ex"))
        self.titulo = titulo
        self.variaveis = tuple(variaveis)
        self.dicas = tuple(dicas)
        self.esperado = esperado
        self.entradas = entradas
        self._conferir_sob_medida = conferir
        self.erros_comuns = tuple(erros_comuns)
        self.contexto = contexto
        self.rtol, self.atol = rtol, atol
        self.parabens = parabens
        self.inicio = inicio.strip("\n")
        self.atalhos = tuple(atalhos)
        self.proibidas = tuple(proibidas)
        self.tipo = tipo
        self.gradiente = gradiente          # a função do leitor treina: chamada com o autograd ligado
        self.seguir = seguir.strip()
        self.erros_explicados = tuple(erros_explicados)   # (tipo de exceção, o que ela costuma querer dizer)
        if tipo == "nucleo" and ((entradas is None and conferir is None) or not self.seguir):
            raise ValueError(f"{id}: um exercício núcleo pede uma função chamada em `entradas` (ou uma peça, como "
                             "um template, que `conferir` aplica a entradas que a lição não mostra) e a linha "
                             "`seguir`, que roda o resto da lição com a versão do leitor.")
        self._dica_atual = 0
        self._erro_reconhecido: ErroComum | None = None
        self._dica_do_erro_mostrada = False

    def __repr__(self) -> str:
        return f"<exercício {self.numero} de {self.capitulo}: {self.titulo}>"

    # ------------------------------------------------------------------ o código da solução
    @property
    def solucao(self) -> str:
        """O código da solução de referência: o mesmo da célula recolhida do notebook."""
        arquivo = resources.files("lncc_llm") / "dados" / "exercicios" / f"{self.capitulo}_{self.nome}.py"
        return arquivo.read_text(encoding="utf-8")

    # ------------------------------------------------------------------ núcleo (nunca levanta)
    def _respostas(self, valores: dict, ns: dict, do_leitor: bool = True) -> dict:
        """Troca cada função pelas suas saídas nas ``entradas``; valores passam como estão."""
        saidas = {}
        for nome, valor in valores.items():
            if do_leitor and callable(valor):
                linha = _linha_da_lacuna(valor)
                if linha is not None:
                    raise NaoTentado(f"`{nome}` ainda tem `____` (linha {linha} da célula): complete-a e "
                                     "rode a célula de novo.")
                if self.entradas is None:              # um exercício de valor: a resposta não é uma função
                    if isinstance(valor, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                                          functools.partial)):
                        raise ErroDoLeitor(f"`{nome}` é uma função, e a resposta é um valor: chame-a (com os "
                                           "parênteses e os argumentos) e guarde o resultado.")
                pronta = (_de_biblioteca(valor) or _usa_proibida(valor, self.proibidas)
                          or _classe_usa_pronta(valor, self.proibidas))
                if pronta is not None and self.entradas is not None:
                    raise NaoTentado(f"`{nome}` usa a função pronta `{pronta}`: o exercício pede que você "
                                     "escreva a conta, com as operações da lição.")
            if callable(valor) and self.entradas is not None and not isinstance(valor, type):
                resultados = []
                try:
                    casos = self.entradas(ns)
                except (KeyError, NameError) as erro:
                    raise ErroDoLeitor("o verificador precisa das células da lição: rode as células do capítulo "
                                       f"antes do exercício (falta {erro}).") from None
                if isinstance(casos, dict):                 # entradas próprias de cada função
                    casos = casos[nome]
                for i, args in enumerate(casos, start=1):
                    try:
                        with (contextlib.nullcontext() if self.gradiente else _sem_gradiente()), \
                                _armadilhas(self.proibidas if do_leitor else (),
                                            getattr(valor, "__globals__", None) if do_leitor else None):
                            if isinstance(args, dict):          # chamada por nome: valor(**args)
                                saida = valor(**copy.deepcopy(args))
                            else:
                                saida = valor(*copy.deepcopy(args))
                    except NotImplementedError:
                        raise NaoTentado(f"a função `{nome}` ainda não foi escrita.") from None
                    except Incorreto:            # uma entrada de teste que vigia o jeito da conta (um MoE denso)
                        raise
                    except _AtalhoUsado as atalho:
                        raise NaoTentado(f"`{nome}` chama a função pronta `{atalho.args[0]}`: o exercício pede "
                                         "que você escreva a conta, com as operações da lição.") from None
                    except Exception as erro:  # o código do leitor: uma linha, sem traceback
                        if not do_leitor:
                            raise
                        texto = str(erro).strip().splitlines()[0] if str(erro).strip() else ""
                        raise ErroDoLeitor(
                            f"`{nome}` levantou {type(erro).__name__}"
                            + (f": {texto}" if texto else "")
                            + f" (na chamada de teste {i} de {len(casos)})."
                            + (" As formas não casam numa multiplicação de matrizes: confira as transpostas "
                               "pedidas no enunciado (como em `x @ W.T`)." if "shapes cannot be multiplied" in texto
                               else "")
                            + "".join(f" {explicacao}" for tipo, explicacao in self.erros_explicados
                                      if isinstance(erro, tipo))) from None
                    if _vazio(saida):
                        raise NaoTentado(f"a função `{nome}` ainda devolve `____`.")
                    resultados.append(saida)
                saidas[nome] = resultados
            else:
                saidas[nome] = valor
        return saidas

    def _conferir(self, respostas: dict, ns: dict) -> None:
        if self._conferir_sob_medida is not None:
            self._conferir_sob_medida(respostas, ns)
            return
        esperado = self._respostas(self.esperado(ns), ns, do_leitor=False)
        for nome in self.variaveis:
            obtido, certo = respostas[nome], esperado[nome]
            if callable(ns.get(nome)) and self.entradas is not None and isinstance(certo, list):
                if not isinstance(obtido, list) or len(obtido) != len(certo):
                    raise Incorreto(f"`{nome}` não devolveu uma saída por chamada de teste.")
                for i, (a, b) in enumerate(zip(obtido, certo), start=1):   # chamada por chamada
                    comparar(a, b, rtol=self.rtol, atol=self.atol,
                             nome=f"a saída de `{nome}` na chamada de teste {i} de {len(certo)}")
            else:
                comparar(obtido, certo, rtol=self.rtol, atol=self.atol, nome=f"`{nome}`")

    def _bate_com(self, respostas: dict, erro: ErroComum, ns: dict) -> bool:
        try:
            errado = self._respostas(erro.resposta(ns), ns, do_leitor=False)
            for nome, valor in errado.items():
                obtido = respostas[nome]
                if isinstance(valor, list) and isinstance(obtido, list) and callable(ns.get(nome)):
                    if len(obtido) != len(valor):      # uma função: chamada por chamada, como em _conferir
                        return False
                    for a, b in zip(obtido, valor):
                        comparar(a, b, rtol=self.rtol, atol=self.atol)
                else:
                    comparar(obtido, valor, rtol=self.rtol, atol=self.atol)
        except Exception:
            return False
        return True

    def checar(self, ns: dict) -> Resultado:
        """Confere as variáveis do leitor no namespace ``ns`` e devolve o :class:`Resultado` (nunca levanta)."""
        valores = {}
        for nome in self.variaveis:
            if nome not in ns:
                return Resultado(Status.NAO_TENTADO,
                                 f"`{nome}` ainda não existe: complete a célula do exercício {self.numero} e rode-a.")
            if _vazio(ns[nome]):
                return Resultado(Status.NAO_TENTADO,
                                 f"troque `____` pela sua resposta em `{nome}` e rode a célula de novo.")
            linha = _linha_da_lacuna(ns[nome]) if callable(ns[nome]) else None
            if linha is not None:                      # a primeira resposta ainda em branco, na ordem da célula
                return Resultado(Status.NAO_TENTADO, f"`{nome}` ainda tem `____` (linha {linha} da célula): "
                                                     "complete-a e rode a célula de novo.")
            valores[nome] = ns[nome]
        try:
            respostas = self._respostas(valores, ns)
        except Incorreto as incorreto:
            return Resultado(Status.INCORRETO, str(incorreto))
        except NaoTentado as aviso:
            return Resultado(Status.NAO_TENTADO, str(aviso))
        except ErroDoLeitor as erro:
            return Resultado(Status.ERRO, str(erro))
        try:
            if self._conferir_sob_medida is not None and any(isinstance(v, type) for v in respostas.values()):
                with _armadilhas(self.proibidas, ns):     # a conferência sob medida instancia a classe do leitor
                    self._conferir(respostas, ns)
            else:
                self._conferir(respostas, ns)
        except _AtalhoUsado as atalho:
            return Resultado(Status.NAO_TENTADO, f"a sua resposta chama a função pronta `{atalho.args[0]}`: o "
                                                 "exercício pede que você escreva a conta, com as operações da lição.")
        except Incorreto as incorreto:
            for erro in self.erros_comuns + self.atalhos:
                if self._bate_com(respostas, erro, ns):
                    return Resultado(Status.INCORRETO, erro.mensagem, erro)
            return Resultado(Status.INCORRETO, str(incorreto))
        except (KeyError, NameError) as erro:  # falta um nome da lição (o kernel foi reiniciado?)
            nome = erro.args[0] if isinstance(erro, KeyError) and erro.args else getattr(erro, "name", None)
            if nome is not None and nome not in ns:
                return Resultado(Status.ERRO,
                                 f"o verificador precisa de `{nome}` da lição: rode as células do capítulo "
                                 "antes do exercício.")
            return Resultado(Status.INCORRETO,
                             f"não consegui conferir a resposta ({type(erro).__name__}); confira o tipo e o "
                             "formato pedidos no enunciado.")
        except Exception as erro:  # uma resposta num formato que a conferência não previu
            return Resultado(Status.INCORRETO,
                             f"não consegui conferir a resposta ({type(erro).__name__}); confira o tipo e o "
                             "formato pedidos no enunciado.")
        return Resultado(Status.CORRETO, self.parabens)

    # ------------------------------------------------------------------ o leitor
    def verificar(self) -> None:
        """Confere a resposta do leitor (as variáveis da célula inicial) e mostra o veredito em pt-BR.

        Ver Introdução, "Exercícios que conferem a sua resposta".
        """
        estados = _estados_aleatorios()          # conferir não mexe nos geradores aleatórios do leitor
        try:
            resultado = self.checar(_namespace_do_leitor())
        finally:
            _restaurar_estados(estados)
        registro.registrar(self.id, resultado.status.value)
        erro = self.erro_reconhecido(resultado)
        if erro is not self._erro_reconhecido:
            self._erro_reconhecido, self._dica_do_erro_mostrada = erro, False
        mostrar(resultado)

    def erro_reconhecido(self, resultado: Resultado) -> ErroComum | None:
        """O erro comum (ou atalho) que o veredito ``resultado`` reconheceu, se algum."""
        if resultado.status is not Status.INCORRETO:
            return None
        return resultado.erro

    def dica_do_erro(self, erro: ErroComum) -> str | None:
        """A dica para quem cometeu ``erro``: a dele ou a dica numerada que ele aponta (``None`` se não tem)."""
        if isinstance(erro.dica, str) and erro.dica:
            return erro.dica
        if isinstance(erro.dica, int) and 1 <= erro.dica <= len(self.dicas):
            return self.dicas[erro.dica - 1]
        return None       # sem dica própria: a mensagem do veredito já diz o erro, e segue a próxima dica geral

    def dica(self, n: int | None = None) -> None:
        """Mostra a próxima dica (ou a dica ``n``), uma de cada vez. Ver Introdução, "Exercícios que conferem a sua resposta"."""
        if (n is None and self._erro_reconhecido is not None and not self._dica_do_erro_mostrada
                and self.dica_do_erro(self._erro_reconhecido) is not None):
            self._dica_do_erro_mostrada = True       # a próxima dica segue o erro que o leitor cometeu
            texto = self.dica_do_erro(self._erro_reconhecido)
            depois = f" As dicas gerais continuam com `{self.nome}.dica()`."
            registro.registrar(self.id, "dica")
            mostrar(Exibivel(f"Dica sobre o seu erro: {texto}{depois}",
                               _caixa("#1565c0", '<b style="color:#1565c0">Dica sobre o seu erro</b>: '
                                      f"{_em_html(texto)}<br><i>{_em_html(depois.strip())}</i>")))
            return
        if not self.dicas:
            mostrar(Exibivel("Este exercício não tem dicas.", "<p>Este exercício não tem dicas.</p>"))
            return
        if n is None:
            self._dica_atual = min(self._dica_atual + 1, len(self.dicas))
            n = self._dica_atual
        n = max(1, min(int(n), len(self.dicas)))
        texto = self.dicas[n - 1]
        depois = (f" Para a próxima: `{self.nome}.dica()`." if n < len(self.dicas)
                  else " Era a última; nesta edição do curso, a solução fica com o professor." if edicao_do_aluno()
                  else f" Era a última; a solução fica na célula recolhida logo abaixo (ou `{self.nome}.mostrar_solucao()`).")
        registro.registrar(self.id, "dica")
        mostrar(Exibivel(f"Dica {n} de {len(self.dicas)}: {texto}{depois}",
                           _caixa("#1565c0", f'<b style="color:#1565c0">Dica {n} de {len(self.dicas)}</b>: '
                                  f"{_em_html(texto)}<br><i>{_em_html(depois.strip())}</i>")))

    def mostrar_solucao(self) -> None:
        """Mostra o código da solução de referência (o mesmo da célula recolhida). Ver Introdução, "Exercícios que conferem a sua resposta"."""
        if edicao_do_aluno():
            texto = "Nesta edição do curso (a edição do aluno), as soluções ficam com o professor."
            mostrar(Exibivel(texto, f"<p>{texto}</p>"))
            return
        registro.registrar(self.id, "solucao")
        codigo = self.solucao
        mostrar(Exibivel(codigo, f"<pre><code>{html.escape(codigo)}</code></pre>"))

    def dicas_markdown(self) -> str:
        """As dicas em ``<details>`` de HTML: abrem no livro estático, no JupyterLab e no Colab, sem kernel."""
        partes = []
        for i, texto in enumerate(self.dicas, start=1):
            partes.append(f'<details class="lncc-dica"><summary>Dica {i}</summary>\n\n{texto}\n\n</details>')
        return "\n".join(partes)

    # ------------------------------------------------------------------ a célula de solução
    @contextlib.contextmanager
    def solucao_recolhida(self, ns: dict | None = None):
        """Roda a solução de referência à parte, guarda a saída num bloco recolhido e confere que ela passa.

        Nada da solução fica no namespace do leitor: ao sair, os nomes que ela criou são apagados, os que
        ela trocou voltam ao que eram (a resposta que o leitor escreveu acima fica intacta) e os geradores
        aleatórios (``random``, NumPy, torch) voltam ao estado de antes. Assim "Run All" não responde os
        exercícios, e as células seguintes rodam como se a solução não existisse (a edição do aluno a
        tira). Levanta ``AssertionError`` (e o nbval falha) se a solução deixar de passar pelo
        verificador. Ver Introdução, "Exercícios que conferem a sua resposta".
        """
        if ns is None:
            ns = _namespace_do_leitor(profundidade=3)
        with isolado(ns, chave=f"exercício {self.numero}"):
            with _capturar() as saida:
                yield
            resultado = self.checar(ns)
        if resultado.status is not Status.CORRETO:
            saida.show()
            raise AssertionError(f"a solução de referência de {self.id} não passa pelo verificador: "
                                 f"{resultado!r}")
        mostrar(_SaidaRecolhida(f"Saída da solução do exercício {self.numero}", saida.stdout,
                                saida.outputs, conferida=True))


def _estados_aleatorios() -> dict:
    import random

    estados = {"random": random.getstate()}
    np = sys.modules.get("numpy")
    if np is not None:
        estados["numpy"] = np.random.get_state()
    torch = sys.modules.get("torch")
    if torch is not None:
        estados["torch"] = torch.random.get_rng_state()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            estados["cuda"] = torch.cuda.get_rng_state_all()
    return estados


def _restaurar_estados(estados: dict) -> None:
    import random

    random.setstate(estados["random"])
    if "numpy" in estados:
        sys.modules["numpy"].random.set_state(estados["numpy"])
    torch = sys.modules.get("torch")
    if torch is not None and "torch" in estados:
        torch.random.set_rng_state(estados["torch"])
        if "cuda" in estados:
            torch.cuda.set_rng_state_all(estados["cuda"])


_SOLUCOES: dict[str, dict] = {}    # o que cada solução definiu, para a célula "(continuação)" dela


@contextlib.contextmanager
def isolado(ns: dict, chave: str | None = None, retomar: bool = False):
    """Roda o bloco e depois devolve ``ns`` ao que era: nomes novos apagados, trocados restaurados, e os
    geradores aleatórios (``random``, NumPy, torch) no estado de antes. O namespace da solução de um
    exercício é o do bloco; o do leitor não muda. Com ``chave``, o que o bloco definiu fica guardado à
    parte, e um bloco seguinte com a mesma chave e ``retomar=True`` (a "continuação" da solução) o recebe
    de volta. Ver Introdução, "Exercícios que conferem a sua resposta"."""
    antes = dict(ns)
    estados = _estados_aleatorios()
    gradiente = sys.modules["torch"].is_grad_enabled() if "torch" in sys.modules else None
    if retomar and chave in _SOLUCOES:
        ns.update(_SOLUCOES[chave])
    try:
        yield
    finally:
        if chave is not None:
            definidos = {n: v for n, v in ns.items() if antes.get(n, _FALTA) is not v}
            _SOLUCOES[chave] = {**(_SOLUCOES.get(chave, {}) if retomar else {}), **definidos}
        for nome in [n for n in ns if n not in antes]:
            del ns[nome]
        for nome, valor in antes.items():
            if ns.get(nome, _FALTA) is not valor:
                ns[nome] = valor
        _restaurar_estados(estados)
        if gradiente is not None:
            sys.modules["torch"].set_grad_enabled(gradiente)


_FALTA = object()


@contextlib.contextmanager
def _capturar():
    from IPython.utils.capture import capture_output

    with capture_output(stdout=True, stderr=False, display=True) as saida:
        try:
            yield saida
        except BaseException:
            saida.show()
            raise


@contextlib.contextmanager
def saida_recolhida(titulo: str):
    """Roda o bloco e mostra a saída dele dentro de um ``<details>`` fechado, com ``titulo`` no resumo.

    Para as soluções sem verificador (as de reflexão que têm código): a saída também fica escondida até o
    leitor pedir, no livro, no JupyterLab e no Colab. Ver Introdução, "Exercícios que conferem a sua resposta".
    """
    numero = re.search(r"exercício (\d+)", titulo)
    with isolado(_namespace_do_leitor(profundidade=3), chave=numero and f"exercício {numero.group(1)}",
                 retomar="continuação" in titulo):
        with _capturar() as saida:
            yield
    mostrar(_SaidaRecolhida(titulo, saida.stdout, saida.outputs, conferida=False))


class _SaidaRecolhida:
    """A saída de uma solução dentro de um ``<details>`` fechado: o livro, o JupyterLab e o Colab a escondem."""

    def __init__(self, titulo: str, texto: str, ricas: list, conferida: bool):
        self.titulo, self.texto, self.ricas, self.conferida = titulo, texto, ricas, conferida

    def __repr__(self) -> str:
        corpo = self.texto.rstrip("\n")
        fim = "\n[OK] a solução de referência passa pelo verificador" if self.conferida else ""
        return f"[{self.titulo}, recolhida]\n{corpo}{fim}"

    def _repr_html_(self) -> str:
        partes = [f'<details class="lncc-solucao"><summary><b>{html.escape(self.titulo)}</b> '
                  "(clique para abrir)</summary>"]
        if self.texto:
            texto = html.escape(self.texto.rstrip("\n"))
            partes.append(f'<pre style="white-space:pre-wrap">{texto}</pre>')
        for rica in self.ricas:
            dados = getattr(rica, "data", {}) or {}
            if "image/png" in dados:
                partes.append(f'<img alt="figura da solução" src="data:image/png;base64,{dados["image/png"]}">')
            elif "text/html" in dados:
                partes.append(dados["text/html"])
            elif "text/plain" in dados:
                partes.append(f"<pre>{html.escape(dados['text/plain'])}</pre>")
        if self.conferida:
            partes.append('<p style="color:#2e7d32">✓ a solução de referência passa pelo verificador.</p>')
        partes.append("</details>")
        return "".join(partes)
