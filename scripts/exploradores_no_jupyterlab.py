"""Move cada controle dos exploradores num JupyterLab de verdade e confere que a figura mudou.

    python scripts/exploradores_no_jupyterlab.py [--capturas PASTA]

Abre um JupyterLab local (sem token, numa pasta temporária, com um notebook que monta os dois
exploradores do livro: o de atenção do Capítulo 2 e o do próximo token do Capítulo 4), roda as
células no Chromium do Debian via Playwright e, para cada controle (dois menus e três sliders),
arrasta ou escolhe um valor novo e mede quanto tempo a figura leva para mudar. Imprime uma linha
por controle e sai com código 1 se algum controle não redesenhou em até 5 s. Precisa do Chromium
(``apt install chromium``); carrega os dois modelos do curso (uns 20 s).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CELULAS = [
    "from lncc_llm import setup_notebook\ndevice = setup_notebook()",
    # Capítulo 2: a atenção do MiniLM sobre a frase do capítulo
    "import torch\nfrom lncc_llm import load_encoder\n"
    "from lncc_llm.widgets import attention_explorer\n\n"
    "bert, bert_tok = load_encoder(device=device)\n"
    "enc = bert_tok('A cute teddy bear is reading a book.', return_tensors='pt').to(device)\n"
    "pieces = bert_tok.convert_ids_to_tokens(enc['input_ids'][0].tolist())\n"
    "with torch.no_grad():\n"
    "    attentions = bert(**enc, output_attentions=True).attentions\n"
    "attention_explorer(attentions, pieces, query=3, layer=1, head=10).show()",
    # Capítulo 4: o próximo token do SmolLM2
    "from lncc_llm import load_decoder\nfrom lncc_llm.widgets import next_token_explorer\n\n"
    "model, tokenizer = load_decoder(device=device)\n"
    "with torch.no_grad():\n"
    "    z = model(**tokenizer('Transformers are models that', return_tensors='pt').to(device))"
    ".logits[0, -1].float().cpu()\n"
    "next_token_explorer(z, tokenizer, temperature=1.0, top_k=10, top_p=0.9).show()",
]


def _notebook(pasta: Path) -> Path:
    caderno = {"nbformat": 4, "nbformat_minor": 5,
               "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                           "language": "python"}},
               "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {},
                          "execution_count": None,
                          "outputs": [], "source": fonte} for i, fonte in enumerate(CELULAS)]}
    caminho = pasta / "exploradores.ipynb"
    caminho.write_text(json.dumps(caderno), encoding="utf-8")
    return caminho


def _porta_livre() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _figura(page, indice: int) -> str:
    """O src (PNG em base64) da figura do explorador ``indice`` (0: atenção, 1: próximo token)."""
    return page.locator(".widget-output img").nth(indice).get_attribute("src") or ""


def _esperar_mudanca(page, indice: int, antes: str, limite: float = 5.0) -> float | None:
    inicio = time.perf_counter()
    while time.perf_counter() - inicio < limite:
        if _figura(page, indice) not in ("", antes):
            return time.perf_counter() - inicio
        page.wait_for_timeout(50)
    return None


def _arrastar(page, slider, dx: float) -> None:
    alca = slider.locator(".noUi-handle")
    caixa = alca.bounding_box()
    x, y = caixa["x"] + caixa["width"] / 2, caixa["y"] + caixa["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for passo in range(1, 11):                     # um arrasto com dez posições intermediárias
        page.mouse.move(x + dx * passo / 10, y)
        page.wait_for_timeout(30)
    page.mouse.up()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capturas", type=Path, help="pasta para a captura de tela do fim")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("Chromium ausente: instale com `sudo apt install chromium`.", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    pasta = Path(tempfile.mkdtemp(prefix="lncc-exploradores-"))
    _notebook(pasta)
    porta = _porta_livre()
    ambiente = {k: v for k, v in os.environ.items() if k not in ("LNCC_LLM_QUIET", "MPLBACKEND")}
    servidor = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={porta}",
         "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
         "--allow-root",  # máquinas de CI (e contêineres) rodam como root
         f"--ServerApp.root_dir={pasta}", "--LabApp.news_url=None",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        env=ambiente, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    falhas = 0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"])
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            for _ in range(60):
                try:
                    page.goto(f"http://127.0.0.1:{porta}/lab/tree/exploradores.ipynb", timeout=5000)
                    break
                except Exception:
                    time.sleep(1)
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60000)
            try:   # o JupyterLab 4.6 pergunta o kernel de um notebook novo
                page.locator(".jp-Dialog button", has_text="Select").click(timeout=15000)
            except Exception:
                pass
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                   timeout=120000)
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
            try:
                page.wait_for_selector(".widget-output img >> nth=1", timeout=180000)
            except Exception:
                if args.capturas:
                    args.capturas.mkdir(parents=True, exist_ok=True)
                    falha = args.capturas / "exploradores_falha.png"
                    page.screenshot(path=str(falha), full_page=True)
                raise
            page.wait_for_timeout(1000)

            print(f"{'explorador':<16} {'controle':<10} {'antes':>8} {'depois':>8}  "
                  "figura mudou em")
            menus = page.locator(".widget-dropdown select")
            for i, nome in enumerate(["camada", "cabeça"]):
                antes = _figura(page, 0)
                valor = menus.nth(i).input_value()
                novo = "3" if valor != "3" else "2"
                inicio = time.perf_counter()
                menus.nth(i).select_option(novo)
                t = _esperar_mudanca(page, 0, antes)
                t = None if t is None else t + (time.perf_counter() - inicio - t)
                falhas += t is None
                print(f"{'atenção (cap2)':<16} {nome:<10} {valor:>8} {novo:>8}  "
                      + (f"{t:.2f} s" if t is not None else "NÃO MUDOU em 5 s"))
            sliders = page.locator(".widget-slider")
            for i, (nome, dx) in enumerate([("τ", -90.0), ("top-k", 60.0), ("top-p", -60.0)]):
                slider = sliders.nth(i)
                leitura = slider.locator(".widget-readout")
                antes, valor = _figura(page, 1), leitura.inner_text()
                slider.scroll_into_view_if_needed()
                _arrastar(page, slider, dx)
                if leitura.inner_text() == valor:      # o arrasto não pegou: as setas do teclado
                    slider.locator(".noUi-handle").focus()
                    page.keyboard.press("ArrowLeft")
                t = _esperar_mudanca(page, 1, antes)
                falhas += t is None
                print(f"{'próximo token':<16} {nome:<10} {valor:>8} {leitura.inner_text():>8}  "
                      + (f"{t:.2f} s depois de soltar" if t is not None else "NÃO MUDOU em 5 s"))
            if args.capturas:
                args.capturas.mkdir(parents=True, exist_ok=True)
                destino = args.capturas / "exploradores_jupyterlab.png"
                page.screenshot(path=str(destino), full_page=True)
            browser.close()
    finally:
        servidor.terminate()
        servidor.wait(timeout=30)
        shutil.rmtree(pasta, ignore_errors=True)
    print(f"{falhas} controle(s) sem resposta" if falhas else "todos os controles redesenharam")
    return 1 if falhas else 0


if __name__ == "__main__":
    sys.exit(main())
