"""MathJax servido localmente, sem CDN.

O Sphinx carrega o MathJax de um CDN por padrão; sem internet, o leitor vê o
LaTeX cru (``$...$``). Esta extensão procura o MathJax 3 que vem no pacote do
PyPI ``django-static-mathjax`` (módulo ``mathjax``, localizado com
``importlib.util.find_spec``, sem importá-lo), aponta ``mathjax_path`` para uma
cópia local e, ao final do build HTML, copia os arquivos necessários (o script,
as extensões do TeX carregadas sob demanda e as fontes woff da saída CHTML) para
``_static/mathjax`` dentro da pasta de saída. Nada do MathJax fica no repositório.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

PACOTE_PIP = "django-static-mathjax==3.2.2.1"
MODULO = "mathjax"
SCRIPT = "tex-mml-chtml.js"  # o mesmo "combo" que o Sphinx usa do CDN
DESTINO = "mathjax"  # subpasta de _static na saída

# Pacotes alternativos do MathJax que este livro não usa (saída SVG, versões
# "full", a versão para Node). Fora isso, a pasta es5/ é copiada inteira: as
# extensões do TeX (\boldsymbol, \cancel...) são carregadas sob demanda e as
# fontes woff são buscadas relativamente ao script.
IGNORAR = shutil.ignore_patterns(
    "*-full*.js",
    "tex-svg*.js",
    "tex-mml-svg.js",
    "mml-*.js",
    "tex-chtml.js",
    "node-main.js",
    "latest.js",
    "svg",
    "svg.js",
)


def _pasta_es5() -> Path | None:
    """Pasta ``es5`` do MathJax instalado, ou ``None`` se o pacote faltar."""
    spec = importlib.util.find_spec(MODULO)
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        es5 = Path(base) / "static" / "mathjax" / "es5"
        if (es5 / SCRIPT).is_file() and (es5 / "output" / "chtml" / "fonts").is_dir():
            return es5
    return None


def _erro_pacote_ausente() -> ExtensionError:
    return ExtensionError(
        "MathJax local não encontrado. O livro serve o MathJax sem internet a partir "
        "do pacote do PyPI 'django-static-mathjax', que não está instalado neste "
        f"ambiente. Instale-o com:  pip install {PACOTE_PIP}  "
        "(ele consta de requirements.txt)."
    )


def _config_inited(app: Sphinx, config) -> None:
    es5 = _pasta_es5()
    app._mathjax_local_es5 = es5  # type: ignore[attr-defined]
    if es5 is not None:
        # Caminho relativo: o Sphinx o entende como relativo a _static/.
        config.mathjax_path = f"{DESTINO}/{SCRIPT}"


def _builder_inited(app: Sphinx) -> None:
    if app.builder.format == "html" and app._mathjax_local_es5 is None:  # type: ignore[attr-defined]
        raise _erro_pacote_ausente()


def _build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    es5: Path | None = app._mathjax_local_es5  # type: ignore[attr-defined]
    if es5 is None:
        raise _erro_pacote_ausente()
    destino = Path(app.outdir) / "_static" / DESTINO
    carimbo = destino / ".origem"
    origem = str(es5.resolve())
    if (destino / SCRIPT).is_file() and carimbo.is_file() and carimbo.read_text() == origem:
        return  # já copiado de build anterior
    if destino.exists():
        shutil.rmtree(destino)
    shutil.copytree(es5, destino, ignore=IGNORAR)
    licenca = es5.parent / "LICENSE"
    if licenca.is_file():
        shutil.copy2(licenca, destino / "LICENSE")
    carimbo.write_text(origem)
    logger.info("MathJax local copiado para %s", destino)


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("build-finished", _build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
