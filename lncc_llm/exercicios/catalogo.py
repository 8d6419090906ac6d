"""O catálogo de exercícios: cada enunciado de cada notebook, com o tipo, o verificador e o tempo.

Os enunciados são lidos dos próprios notebooks (``book/<notebook>.ipynb``, a partir do título
``## Exercícios``); o tipo e o verificador, do registro (:func:`lncc_llm.exercicios.do_capitulo`);
os minutos estimados, de ``lncc_llm/dados/catalogo_exercicios.json``.
``python scripts/catalogo_exercicios.py`` grava a página ``book/exercicios.md`` com
:func:`pagina_markdown`, e ``tests/test_catalogo_exercicios.py`` confere que ela está em dia.
Importar este módulo não importa o torch.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from . import NOTEBOOKS, do_capitulo

LIVRO = Path(__file__).resolve().parents[2] / "book"
ARQUIVO_DOS_MINUTOS = "dados/catalogo_exercicios.json"

_TITULO_EXERCICIOS = re.compile(r"^#+ Exercícios", re.M)
_TITULO = re.compile(r"^(#{1,6})\s+(.*?)\s*$", re.M)
# **N. Título.** no começo de uma linha (o título pode quebrar a linha, mas não o parágrafo); o
# fecho ** não pode ser seguido de outro * (um título que termina em *ênfase*)
_ENUNCIADO = re.compile(r"(?:^|\n)\*\*(\d+)\.[ \t]+((?:.|\n(?!\s*\n))+?)\*\*(?!\*)")
# **Exercício N (núcleo). Título.** (ou (previsão), um exercício curto de prever um número) no fluxo da
# lição, antes da seção de exercícios
_ENUNCIADO_NUCLEO = re.compile(r"(?:^|\n)\*\*Exercício (\d+) \((?:núcleo|previsão)\)\.[ \t]+((?:.|\n(?!\s*\n))+?)\*\*(?!\*)")
_SOLUCAO_EM_CODIGO = re.compile(r"^# @title Solução do exercício (\d+)\b")
_CERCA = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.M | re.S)

TIPOS = ("núcleo", "consolidação", "conceitual")


@dataclass(frozen=True)
class Linha:
    """Um exercício do catálogo; ``minutos`` é ``None`` quando o JSON ainda não tem o tempo dele.
    Ver Introdução, "Exercícios que conferem a sua resposta".
    """

    notebook: str
    numero: int
    titulo: str
    tipo: str            # "núcleo", "consolidação" ou "conceitual"
    verificador: bool    # um Exercicio com este número confere a resposta
    opcional: bool       # o enunciado fica sob "Para ir além (opcional)"
    minutos: int | None


def _fonte(celula: dict) -> str:
    return "".join(celula["source"])


def ler_notebook(notebook: str, livro: Path = LIVRO) -> dict:
    """O notebook ``book/<notebook>.ipynb`` como dicionário (o JSON do arquivo).
    Ver Introdução, "Exercícios que conferem a sua resposta".
    """
    return json.loads((livro / f"{notebook}.ipynb").read_text(encoding="utf-8"))


def titulo_do_notebook(caderno: dict) -> str:
    """O primeiro título ``# …`` do notebook ("Capítulo 3 — Variações modernas do …").
    Ver Introdução, "Exercícios que conferem a sua resposta".
    """
    for celula in caderno["cells"]:
        if celula["cell_type"] == "markdown":
            m = re.search(r"^#\s+(.+?)\s*$", _fonte(celula), re.M)
            if m:
                return m.group(1)
    raise LookupError("notebook sem título '# …'")


def enunciados(caderno: dict) -> list[tuple[int, str, bool]]:
    """Os enunciados, em ordem: ``(N, título, opcional)``. Primeiro os exercícios núcleo, no fluxo da
    lição (``**Exercício N (núcleo). Título.**``); depois os ``**N. Título.**`` da seção de exercícios.

    A seção começa no título ``Exercícios`` e vai até o fim do notebook; um enunciado é opcional
    quando fica sob um título "Para ir além" (até o próximo título do mesmo nível ou de nível
    acima). O título sai sem o número e sem o ponto final. Ver Introdução, "Exercícios que conferem
    a sua resposta".
    """
    celulas = caderno["cells"]
    inicio = next((i for i, c in enumerate(celulas) if c["cell_type"] == "markdown"
                   and _TITULO_EXERCICIOS.search(_fonte(c))), None)
    if inicio is None:
        return []
    achados: list[tuple[int, str, bool]] = []
    for celula in celulas[:inicio]:          # os exercícios núcleo, no fluxo da lição
        if celula["cell_type"] == "markdown" and not _fonte(celula).lstrip().startswith("<details"):
            for m in _ENUNCIADO_NUCLEO.finditer(_CERCA.sub("", _fonte(celula))):
                titulo = " ".join(m.group(2).split())
                achados.append((int(m.group(1)), titulo[:-1].rstrip() if titulo.endswith(".") else titulo,
                                False))
    nivel_opcional = None  # o nível do título "Para ir além" em vigor
    for n, celula in enumerate(celulas[inicio:]):
        fonte = _fonte(celula)
        if celula["cell_type"] != "markdown" or fonte.lstrip().startswith("<details"):
            continue  # as dicas e os comentários recolhidos não são enunciados
        # num bloco de código do enunciado, "# …" não é título (o bloco fica em branco)
        fonte = _CERCA.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), fonte)
        if n == 0:  # na célula do título, só o que vem depois de "## Exercícios"
            fonte = fonte[_TITULO_EXERCICIOS.search(fonte).start():]
        eventos = sorted([(m.start(), "titulo", m) for m in _TITULO.finditer(fonte)]
                         + [(m.start(), "enunciado", m) for m in _ENUNCIADO.finditer(fonte)],
                         key=lambda e: e[0])
        for _, tipo, m in eventos:
            if tipo == "titulo":
                nivel = len(m.group(1))
                if "Para ir além" in m.group(2):
                    nivel_opcional = nivel
                elif nivel_opcional is not None and nivel <= nivel_opcional:
                    nivel_opcional = None
            else:
                titulo = " ".join(m.group(2).split())
                titulo = titulo[:-1].rstrip() if titulo.endswith(".") else titulo
                achados.append((int(m.group(1)), titulo, nivel_opcional is not None))
    numeros = [numero for numero, _, _ in achados]
    repetidos = sorted({k for k in numeros if numeros.count(k) > 1})
    if repetidos:
        raise ValueError(f"enunciados repetidos na seção de exercícios: {repetidos}")
    return achados


def solucoes_em_codigo(caderno: dict) -> set[int]:
    """Os números dos exercícios com uma célula de código ``# @title Solução do exercício N``.
    Ver Introdução, "Exercícios que conferem a sua resposta".
    """
    return {int(m.group(1)) for c in caderno["cells"] if c["cell_type"] == "code"
            for m in [_SOLUCAO_EM_CODIGO.match(_fonte(c))] if m}


def minutos() -> dict[str, dict[str, int]]:
    """Os minutos estimados de cada exercício: ``{notebook: {"N": minutos}}``, sem ``_sobre``.
    Ver Introdução, "Exercícios que conferem a sua resposta".
    """
    texto = resources.files("lncc_llm").joinpath(ARQUIVO_DOS_MINUTOS).read_text(encoding="utf-8")
    return {k: v for k, v in json.loads(texto).items() if not k.startswith("_")}


def linhas(livro: Path = LIVRO) -> list[Linha]:
    """Cada exercício do livro, notebook por notebook (na ordem de ``NOTEBOOKS``) e enunciado por
    enunciado: o título, o tipo ("núcleo" se o ``Exercicio`` é ``tipo="nucleo"``; "consolidação"
    se há verificador ou solução em código; senão "conceitual"), se um verificador o confere, se é
    opcional e os minutos estimados. Ver Introdução, "Exercícios que conferem a sua resposta".
    """
    tempos = minutos()
    saida = []
    for notebook in NOTEBOOKS:
        caderno = ler_notebook(notebook, livro)
        conferidos = {ex.numero: ex for ex in do_capitulo(notebook)}
        em_codigo = solucoes_em_codigo(caderno)
        for numero, titulo, opcional in enunciados(caderno):
            ex = conferidos.get(numero)
            if ex is not None and ex.tipo == "nucleo":
                tipo = "núcleo"
            elif ex is not None or numero in em_codigo:
                tipo = "consolidação"
            else:
                tipo = "conceitual"
            saida.append(Linha(notebook, numero, titulo, tipo, ex is not None, opcional,
                               tempos.get(notebook, {}).get(str(numero))))
    return saida


def _celula_da_tabela(texto: str) -> str:
    return texto.replace("|", r"\|")


def _min(valor: int | None) -> str:
    return "?" if valor is None else str(valor)


def _soma(itens: list[Linha]) -> int:
    return sum(linha.minutos or 0 for linha in itens)


def _horas(minutos: int) -> str:
    horas, resto = divmod(minutos, 60)
    return f"{horas} h {resto:02d} min" if horas else f"{resto} min"


def _total(itens: list[Linha]) -> str:
    n = len(itens)
    partes = [f"{n} {'exercício' if n == 1 else 'exercícios'}",
              f"{sum(linha.verificador for linha in itens)} com verificador",
              f"{_soma(itens)} min"]
    opcionais = [linha for linha in itens if linha.opcional]
    if opcionais:
        obrigatorios = [linha for linha in itens if not linha.opcional]
        partes[-1] += f" ({_soma(obrigatorios)} min sem os opcionais)"
    return ", ".join(partes)


INTRODUCAO = """\
Para o professor que monta as sessões do curso: cada notebook do livro, com os seus exercícios, o
tipo de cada um, se um verificador confere a resposta e o tempo estimado. Esta página é gerada do
registro dos exercícios (`lncc_llm.exercicios`), dos enunciados dos notebooks e dos tempos em
`lncc_llm/dados/catalogo_exercicios.json`, por `python scripts/catalogo_exercicios.py`; não a edite
à mão.

As colunas:

- **tipo**: **núcleo** é a função central da lição, escrita pelo leitor no fluxo principal e
  conferida em entradas sorteadas que o notebook nunca mostra; **consolidação** retoma uma conta ou
  um experimento da lição com outros números, com código (e, quase sempre, um verificador);
  **conceitual** pede uma resposta em prosa, comentada numa solução recolhida.
- **verificador**: "sim" quando a célula inicial do exercício chama `exN.verificar()`, que
  responde "Correto", "Ainda não" (com o diagnóstico do erro) ou "Não tentado" (veja a
  [Introdução](intro.md), "Exercícios que conferem a sua resposta").
- **min**: o tempo estimado para o leitor descrito na Introdução ("Para quem é"), depois de ler o
  capítulo e rodar as células da lição. Os marcados com *(opcional)* ficam sob **Para ir além
  (opcional)** e podem ficar para depois.

No livro, a solução de cada exercício vem logo abaixo dele, recolhida. Para uma turma em que as
respostas não devem estar a um clique, gere a edição do aluno, os mesmos notebooks sem as soluções e
sem os comentários delas, com `python scripts/edicao_do_aluno.py pasta/` (veja o README, "Edição do
aluno"): as dicas, as células iniciais e os verificadores continuam lá.
"""


def pagina_markdown(livro: Path = LIVRO) -> str:
    """A página ``book/exercicios.md`` inteira, em MyST: a introdução para o professor, uma tabela
    por notebook (Nº, exercício, tipo, verificador, minutos) com o total e o resumo do livro. Ver
    Introdução, "Exercícios que conferem a sua resposta".
    """
    todas = linhas(livro)
    partes = ["# Catálogo de exercícios\n", INTRODUCAO]
    resumo = []
    for notebook in NOTEBOOKS:
        titulo = titulo_do_notebook(ler_notebook(notebook, livro))
        itens = [linha for linha in todas if linha.notebook == notebook]
        tabela = ["| Nº | exercício | tipo | verificador | min |", "|---:|---|---|---|---:|"]
        for linha in itens:
            nome = _celula_da_tabela(linha.titulo) + (" *(opcional)*" if linha.opcional else "")
            tabela.append(f"| {linha.numero} | {nome} | {linha.tipo} | "
                          f"{'sim' if linha.verificador else 'não'} | {_min(linha.minutos)} |")
        corpo = "\n".join(tabela) if itens else "Este notebook não tem exercícios."
        partes.append(f"## [{titulo}]({notebook}.ipynb)\n\n{corpo}\n\n"
                      f"**Total:** {_total(itens)}.\n")
        sem_opcionais = _soma([linha for linha in itens if not linha.opcional])
        conferidos = sum(linha.verificador for linha in itens)
        resumo.append(f"| [{notebook}]({notebook}.ipynb) | {len(itens)} | {conferidos} | "
                      f"{_soma(itens)} | {sem_opcionais} |")
    por_tipo = ", ".join(f"{tipo} {sum(linha.tipo == tipo for linha in todas)}" for tipo in TIPOS)
    sem_opcionais = _soma([linha for linha in todas if not linha.opcional])
    partes.append(
        "## Totais do livro\n\n"
        "| notebook | exercícios | com verificador | min | min sem os opcionais |\n"
        "|---|---:|---:|---:|---:|\n"
        + "\n".join(resumo) + "\n"
        f"| **livro** | **{len(todas)}** | **{sum(linha.verificador for linha in todas)}** | "
        f"**{_soma(todas)}** | **{sem_opcionais}** |\n\n"
        f"Por tipo: {por_tipo}. Ao todo, {_horas(_soma(todas))} de exercícios, "
        f"{_horas(sem_opcionais)} sem os opcionais."
        + ("" if any(linha.tipo == "núcleo" for linha in todas) else
           " Nenhum notebook tem ainda o seu exercício de núcleo: eles entram capítulo a capítulo, e esta "
           "página os lista à medida que chegam.")
        + "\n")
    return "\n".join(partes)
