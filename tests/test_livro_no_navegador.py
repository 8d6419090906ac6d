"""O livro compilado (``book/_build/html``) num navegador de verdade: Chromium headless, via Playwright.

Para cada página do sumário: ela carrega sem nenhuma requisição sair da máquina (tudo o que não é
``127.0.0.1`` é bloqueado e anotado), o MathJax terminou de compor (nenhum ``$$`` cru), as figuras
carregam, e cada solução, código e saída, fica recolhida até o clique e abre com ele; as dicas abrem sem
kernel. Usa o Chromium do Debian (``apt install chromium``); o Playwright não baixa navegador.

Sem Chromium, sem Playwright ou sem o livro compilado, o teste é pulado com uma linha que diz o que
instalar; com ``LNCC_LLM_NAVEGADOR_OBRIGATORIO=1`` (o ``.ci/run`` exporta), ele falha em vez de pular.
"""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest
import yaml

RAIZ = Path(__file__).resolve().parents[1]
HTML = RAIZ / "book" / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]


def _paginas() -> list[str]:
    toc = yaml.safe_load((RAIZ / "_toc.yml").read_text(encoding="utf-8"))
    nomes = []

    def andar(no):
        if isinstance(no, dict):
            for chave in ("root", "file"):
                if chave in no:
                    nomes.append(Path(no[chave]).with_suffix("").as_posix())
            for valor in no.values():
                andar(valor)
        elif isinstance(no, list):
            for item in no:
                andar(item)

    andar(toc)
    return nomes


PAGINAS = _paginas()
# O sphinx-book-theme 1.x inclui o script do sphinx-thebe duas vezes em toda página (o thebe está
# desligado no _config.yml); o segundo "const" falha sem efeito nenhum na página.
ERROS_CONHECIDOS = {"Identifier 'THEBE_JS_URL' has already been declared"}


def _falta() -> str | None:
    if CHROMIUM is None:
        return ("Chromium ausente: instale o do Debian/Ubuntu com `sudo apt install chromium` para testar o "
                "livro no navegador")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright ausente: `pip install -r requirements.txt -c requirements-lock.txt`"
    if not (HTML / "index.html").exists():
        return "livro não compilado: rode `jupyter-book build book` (o primeiro comando do README)"
    return None


@pytest.fixture(scope="module")
def navegador():
    motivo = _falta()
    if motivo:
        if os.environ.get("LNCC_LLM_NAVEGADOR_OBRIGATORIO") == "1":
            pytest.fail(motivo)
        pytest.skip(motivo)
    from playwright.sync_api import sync_playwright

    class Calado(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Calado, directory=str(HTML))
    servidor = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=servidor.serve_forever, daemon=True).start()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser, f"http://127.0.0.1:{servidor.server_address[1]}"
        browser.close()
    servidor.shutdown()


def _abrir(navegador, pagina):
    browser, base = navegador
    contexto = browser.new_context()
    de_fora = []

    def rota(route):
        url = route.request.url
        if url.startswith(base) or url.startswith("data:") or url.startswith("blob:"):
            route.continue_()
        else:
            de_fora.append(url)
            route.abort()

    contexto.route("**/*", rota)
    page = contexto.new_page()
    erros = []
    page.on("pageerror", lambda e: erros.append(str(e)))
    resposta = page.goto(f"{base}/{pagina}.html", wait_until="load")
    assert resposta is not None and resposta.ok, f"{pagina}: HTTP {resposta and resposta.status}"
    page.wait_for_function("() => !window.MathJax || (window.MathJax.startup && window.MathJax.startup.promise"
                           " && (window.__mj = window.__mj || window.MathJax.startup.promise.then(() => true)))")
    page.evaluate("() => window.MathJax && window.MathJax.startup ? window.MathJax.startup.promise : null")
    return contexto, page, de_fora, erros


# Algum filho do <details>, fora o <summary>, está sendo desenhado na tela?
VISIVEL = ("d => [...d.children].filter(c => c.tagName !== 'SUMMARY')"
           ".some(c => c.checkVisibility() && c.getBoundingClientRect().height > 0)")


def _fechados_abrem_no_clique(page, seletor, descricao, pagina):
    itens = page.locator(seletor)
    n = itens.count()
    for i in range(n):
        item = itens.nth(i)
        assert item.get_attribute("open") is None, f"{pagina}: {descricao} {i + 1} já vem aberto(a)"
        assert not item.evaluate(VISIVEL), f"{pagina}: {descricao} {i + 1} mostra conteúdo fechado(a)"
        item.locator(":scope > summary").first.click()
        assert item.get_attribute("open") is not None, f"{pagina}: {descricao} {i + 1} não abre no clique"
        assert item.evaluate(VISIVEL), f"{pagina}: {descricao} {i + 1} abriu sem mostrar nada"
    return n



@pytest.mark.parametrize("pagina", PAGINAS)
def test_pagina_offline_com_math_figuras_e_solucoes_recolhidas(navegador, pagina):
    contexto, page, de_fora, erros = _abrir(navegador, pagina)
    try:
        assert de_fora == [], f"{pagina}: requisições para fora da máquina: {de_fora[:5]}"
        erros = [e for e in erros if e not in ERROS_CONHECIDOS]
        assert erros == [], f"{pagina}: erros de JavaScript: {erros[:3]}"
        texto = page.inner_text("main")
        assert "$$" not in texto, f"{pagina}: há $$ cru no texto (o MathJax não compôs)"
        if page.locator("span.math, div.math").count():
            assert page.locator("mjx-container").count() > 0, f"{pagina}: o MathJax não compôs nenhuma fórmula"
        quebradas = page.evaluate("() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
                                  ".map(i => i.src.slice(0, 80))")
        assert quebradas == [], f"{pagina}: figuras que não carregaram: {quebradas[:3]}"

        codigo = _fechados_abrem_no_clique(
            page, "div.cell.tag_hide-input > details.above-input", "o código recolhido", pagina)
        saidas = _fechados_abrem_no_clique(page, "details.lncc-solucao", "a saída de solução", pagina)
        dicas = _fechados_abrem_no_clique(page, "details.lncc-dica", "a dica", pagina)
        comentarios = _fechados_abrem_no_clique(page, "details.lncc-comentario", "o comentário", pagina)
        if "Solução do exercício" in (HTML / f"{pagina}.html").read_text(encoding="utf-8"):
            assert codigo and saidas + comentarios, f"{pagina}: há soluções, mas nenhuma recolhida"
        print(f"{pagina}: {codigo} códigos, {saidas} saídas, {dicas} dicas e {comentarios} comentários "
              "recolhidos e abertos no clique")
    finally:
        contexto.close()
