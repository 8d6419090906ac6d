"""Textos da interface do livro em português do Brasil.

Com ``language: pt_BR`` o Sphinx já traduz boa parte da interface, mas os temas
(pydata-sphinx-theme, sphinx-book-theme) e o sphinx-copybutton não trazem
catálogo pt_BR completo: sobram rótulos em inglês ("Skip to main content",
"On this page", "Open issue", "Copy to clipboard"...). Esta extensão põe na
frente dos catálogos existentes um pequeno catálogo em memória com esses textos,
e ensina o botão de copiar a falar português. No catálogo do Sphinx as nossas
mensagens só completam o que falta; no do sphinx-book-theme elas têm prioridade
(o catálogo "pt" dele traz traduções ruins, como "Launch" -> "Lançamento").
"""

from __future__ import annotations

import gettext
import json

from sphinx.application import Sphinx
from sphinx.locale import translators

# Catálogo "sphinx": Sphinx e pydata-sphinx-theme.
SPHINX = {
    "Skip to main content": "Pular para o conteúdo principal",
    "Back to top": "Voltar ao topo",
    "Search": "Pesquisar",
    "Error": "Erro",
    "Please activate JavaScript to enable the search functionality.":
        "Ative o JavaScript para usar a pesquisa.",
    "Breadcrumb": "Trilha de navegação",
    "Home": "Início",
    "Edit": "Editar",
    "On this page": "Nesta página",
    "previous page": "página anterior",
    "previous": "anterior",
    "next page": "próxima página",
    "next": "próxima",
    "Collapse Sidebar": "Recolher barra lateral",
    "Expand Sidebar": "Expandir barra lateral",
    "Section Navigation": "Navegação da seção",
    "Show Source": "Mostrar código-fonte",
    "Color mode": "Tema de cores",
    "Light": "Claro",
    "Dark": "Escuro",
    "System Settings": "Igual ao sistema",
    "Version warning": "Aviso de versão",
    "Announcement": "Aviso",
    "Site navigation": "Navegação do site",
    "Click to expand": "Clique para expandir",
    "Click to collapse": "Clique para recolher",
}

# Catálogo "booktheme": botões do cabeçalho do sphinx-book-theme.
BOOKTHEME = {
    "Contents": "Conteúdo",
    "Copyright": "Copyright",
    "Download notebook file": "Baixar o notebook",
    "Download source file": "Baixar o arquivo-fonte",
    "Download this page": "Baixar esta página",
    "Edit this page": "Editar esta página",
    "Fullscreen mode": "Tela cheia",
    "Launch": "Executar",
    "Launch Thebe": "Executar com Thebe",
    "Launch interactive content": "Abrir em ambiente interativo",
    "Launch on": "Abrir no",
    "Live Code": "Código ao vivo",
    "Open an issue": "Abrir uma issue",
    "Open issue": "Abrir issue",
    "open issue": "abrir issue",
    "Print to PDF": "Imprimir em PDF",
    "Repository": "Repositório",
    "repository": "repositório",
    "Show source": "Mostrar código-fonte",
    "Source repositories": "Repositório do livro",
    "Source repository": "Repositório do livro",
    "Suggest edit": "Sugerir edição",
    "suggest edit": "sugerir edição",
    "Toggle navigation": "Mostrar/ocultar navegação",
    "By": "Por",
    "By the": "Por",
    "Theme by the": "Tema por",
}

# Botão "copiar" dos blocos de código (sphinx-copybutton não tem pt).
COPYBUTTON = {
    "copy": "Copiar",
    "copy_to_clipboard": "Copiar para a área de transferência",
    "copy_success": "Copiado!",
    "copy_failure": "Falha ao copiar",
}
COPYBUTTON_JS = (
    "if (typeof messages !== 'undefined') {"
    f" messages['pt-BR'] = {json.dumps(COPYBUTTON, ensure_ascii=False)};"
    " locale = 'pt-BR'; }"
)


class _Catalogo(gettext.NullTranslations):
    """Catálogo em memória; o que não conhece passa ao catálogo seguinte."""

    def __init__(self, mensagens: dict[str, str]):
        super().__init__()
        self._mensagens = mensagens

    def gettext(self, message):
        if message in self._mensagens:
            return self._mensagens[message]
        return super().gettext(message)

    def ngettext(self, msgid1, msgid2, n):
        if n == 1 and msgid1 in self._mensagens:
            return self._mensagens[msgid1]
        return super().ngettext(msgid1, msgid2, n)


def _na_frente(catalogo: str, mensagens: dict[str, str]) -> None:
    chave = ("general", catalogo)
    novo = _Catalogo(mensagens)
    anterior = translators.get(chave)
    if anterior is not None:
        novo.add_fallback(anterior)
    translators[chave] = novo


def _no_fim(translator: gettext.NullTranslations, mensagens: dict[str, str]) -> None:
    """Acrescenta o catálogo ao fim da cadeia de um tradutor já existente."""
    translator.add_fallback(_Catalogo(mensagens))


def _builder_inited(app: Sphinx) -> None:
    if not (app.config.language or "").lower().startswith("pt"):
        return
    # Os modelos HTML usam o objeto app.translator, criado antes das extensões:
    # nossas mensagens entram no fim da cadeia dele e só valem para o que o
    # Sphinx e o tema deixaram sem tradução.
    _no_fim(app.translator, SPHINX)
    _na_frente("booktheme", BOOKTHEME)
    if app.builder.format == "html":
        # Depois do copybutton.js (prioridade 500), antes de os botões serem criados.
        app.add_js_file(None, body=COPYBUTTON_JS, priority=501)


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", _builder_inited)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
