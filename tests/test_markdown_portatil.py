"""O markdown dos notebooks é legível como CommonMark puro (Colab) e volta ao MyST no livro."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

from myst_portatil import notebook_para_myst, para_commonmark, para_myst, referencias  # noqa: E402

NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
REFS = referencias(ROOT / "book" / "references.bib")
_COMMONMARK = MarkdownIt("commonmark")


def _markdown_cells(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(i, "".join(c["source"])) for i, c in enumerate(nb["cells"])
            if c["cell_type"] == "markdown"]


def _visible_text(html: str) -> str:
    """O texto que um leitor de CommonMark mostra, sem o que está em código."""
    html = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", " ", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_raw_myst_when_rendered_as_plain_commonmark(path):
    for i, text in _markdown_cells(path):
        html = _COMMONMARK.render(text)
        where = f"{path.name}, célula {i}"
        assert "language-{" not in html, f"{where}: diretiva MyST crua ({{admonition}}?)"
        outside_blocks = re.sub(r"<pre>.*?</pre>", " ", html, flags=re.S)
        assert not re.search(r"\{[\w:-]+\}(<code>|`)", outside_blocks), \
            f"{where}: papel MyST cru ({{cite}}?)"
        visible = _visible_text(html)
        assert not re.search(r"(^|\n)\s*:[\w-]+:\s", visible), f"{where}: opção de diretiva crua"


def test_the_book_gets_back_every_admonition_and_citation():
    admonitions = citations = 0
    for path in NOTEBOOKS:
        myst = json.loads(notebook_para_myst(path.read_text(encoding="utf-8")))
        for cell in myst["cells"]:
            if cell["cell_type"] == "markdown":
                admonitions += len(re.findall(r"^```\{admonition\}", cell["source"], re.M))
                citations += len(re.findall(r"\{cite(:t)?\}`", cell["source"]))
                assert "<div class=\"admonition" not in cell["source"]
                assert '"cite:' not in cell["source"]
    # os números da revisão de 2026-11 (43 caixas, 174 {cite} e 11 {cite:t}), mais as 5 comparações com
    # o texto-base e 1 com a resolução da prova da issue 51 (cap01 ×2, cap02_atencao, cap03 ×2, apA), o min-p
    # (Nguyen et al., issue 52); da issue 53, a nota da continuação do cap07 e o quadro do bf16 e do LLM.int8
    # no cap06, o Hu et al. da primeira parte do cap07 e o Dettmers et al. da tabela do QLoRA; e nenhum a menos
    assert admonitions == 51
    assert citations == 188


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_cells_are_the_converted_form_of_their_myst(path):
    for i, text in _markdown_cells(path):
        assert para_commonmark(para_myst(text), REFS) == text, f"{path.name}, célula {i}"


def test_conversion_round_trip_and_readable_forms():
    myst = ("Antes {cite}`vaswani2017attention,devlin2019bert`; e {cite:t}`raschka2024build` diz.\n\n"
            "```{admonition} Comparação com o texto-base\n:class: dropdown\nO texto-base usa "
            "$x^2$.\n```\n\n```{admonition} O modelo\n:class: note\n\nCorpo com **negrito**.\n\n```\n")
    portable = para_commonmark(myst, REFS)
    assert "[\\[Vaswani et al., 2017; Devlin et al., 2019\\]](" in portable
    assert '"cite:vaswani2017attention,devlin2019bert")' in portable
    assert "[Raschka (2024)](" in portable and '"cite:t:raschka2024build")' in portable
    assert ('<details class="admonition dropdown">\n<summary>Comparação com o texto-base</summary>'
            "\n\nO texto-base usa $x^2$.\n\n</details>") in portable
    assert '<div class="admonition note">\n\n**O modelo**\n\nCorpo com **negrito**.\n\n</div>' in portable
    assert para_commonmark(portable, REFS) == portable  # idempotente
    back = para_myst(portable)
    assert "{cite}`vaswani2017attention,devlin2019bert`" in back
    assert "{cite:t}`raschka2024build`" in back
    assert "```{admonition} Comparação com o texto-base\n:class: dropdown\nO texto-base usa $x^2$.\n```" in back
    assert "```{admonition} O modelo\n:class: note\nCorpo com **negrito**.\n```" in back
    html = _COMMONMARK.render(portable)
    assert "Vaswani et al., 2017" in html and "<summary>" in html and "{cite" not in html


def test_links_go_to_the_work_and_unknown_keys_fail():
    assert REFS["hf2024smollm2card"]["url"] == "https://huggingface.co/HuggingFaceTB/SmolLM2-135M"
    assert all(ref["url"].startswith("https://") for ref in REFS.values())
    with pytest.raises(KeyError, match="nao_existe2099"):
        para_commonmark("{cite}`nao_existe2099`", REFS)
    with pytest.raises(ValueError, match="summary"):
        para_commonmark("```{admonition} Com `código`\n:class: dropdown\nx\n```", REFS)


def test_the_book_config_loads_the_extension_and_the_script_finds_nothing_to_convert():
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s+myst_portatil: _ext$", config, re.M)
    result = subprocess.run([sys.executable, "scripts/markdown_portatil.py", "--conferir"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 notebooks ainda têm MyST cru" in result.stdout
