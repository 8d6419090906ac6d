"""MyST portátil: o markdown dos notebooks legível fora do livro (Colab, JupyterLab sem extensão).

Os notebooks guardam as caixas e as citações numa forma que qualquer leitor de CommonMark mostra
bem, e o livro as recebe de volta como diretivas e papéis do MyST, antes de ler cada notebook:

- ```` ```{admonition} Título ```` com ``:class: note`` ou ``:class: tip`` vira
  ``<div class="admonition note">`` com o título em negrito e o corpo em markdown; com
  ``:class: dropdown``, vira ``<details class="admonition dropdown">`` com o título em
  ``<summary>`` (fechado, como no livro);
- ``{cite}`chave1,chave2``` vira ``[\\[Autor et al., 2023; Outro, 2020\\]](URL "cite:chave1,chave2")``
  e ``{cite:t}`chave``` vira ``[Autor et al. (2023)](URL "cite:t:chave")``: texto autor–ano com
  link para a obra (a URL, o DOI ou o arXiv da entrada em ``references.bib``; sem nenhum deles, uma
  busca pelo título), e a chave no título do link.

``para_commonmark`` faz a primeira conversão (``scripts/markdown_portatil.py`` a aplica aos
notebooks); ``para_myst`` desfaz, e esta extensão do Sphinx a aplica no evento ``source-read`` de
cada notebook, de modo que o livro compila o mesmo MyST de antes. ``tests/test_markdown_portatil.py``
confere as duas. O Capítulo 1 (intro.md, "Como usar este livro") explica onde cada forma aparece.
"""
from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path

# ------------------------------------------------------------------------------------ caixas

_ADMONITION = re.compile(
    r"^(?P<fence>`{3,})\{admonition\}[ \t]*(?P<title>.*)\n"
    r":class:[ \t]*(?P<cls>[\w-]+)[ \t]*\n"
    r"(?P<body>(?:.*\n)*?)"
    r"(?P=fence)[ \t]*$",
    re.M,
)
_DIV = re.compile(
    r'^<div class="admonition (?P<cls>[\w-]+)">\n\n\*\*(?P<title>.+)\*\*\n\n'
    r"(?P<body>(?:.*\n)*?)\n</div>$",
    re.M,
)
_DETAILS = re.compile(
    r'^<details class="admonition dropdown">\n<summary>(?P<title>.+)</summary>\n\n'
    r"(?P<body>(?:.*\n)*?)\n</details>$",
    re.M,
)


def _admonition_portatil(m: re.Match) -> str:
    title, cls, body = m.group("title").strip(), m.group("cls"), m.group("body").strip("\n")
    if not title:
        raise ValueError("Uma caixa {admonition} sem título não tem forma portátil: dê um título.")
    if cls == "dropdown":
        if any(ch in title for ch in "<>*`$"):
            raise ValueError(f"O título {title!r} de uma caixa recolhida vai para <summary>, que não "
                             "lê markdown: use só texto.")
        return (f'<details class="admonition dropdown">\n<summary>{title}</summary>\n\n'
                f"{body}\n\n</details>")
    if "**" in title:
        raise ValueError(f"O título {title!r} já vai em negrito: tire os **.")
    return f'<div class="admonition {cls}">\n\n**{title}**\n\n{body}\n\n</div>'


def _admonition_myst(title: str, cls: str, body: str) -> str:
    return f"```{{admonition}} {title}\n:class: {cls}\n{body.rstrip(chr(10))}\n```"


# ------------------------------------------------------------------------------------ citações

_ROLE = re.compile(r"\{cite(?P<t>:t|:p)?\}`(?P<keys>[^`]+)`")
_LINK = re.compile(r'\[(?P<text>(?:\\.|[^\]\\])*)\]\((?P<url>\S+) "cite:(?P<t>t:)?(?P<keys>[^"]+)"\)')


def _last_names(persons) -> list[str]:
    names = []
    for person in persons:
        last = " ".join(person.prelast_names + person.last_names)
        names.append(re.sub(r"[{}\\]", "", last).strip())
    return names


def referencias(bib_path: str | Path) -> dict[str, dict]:
    """As entradas de ``references.bib``: chave → ``{"autores": "Vaswani et al.", "ano": "2017",
    "url": ...}``. Lê com o ``pybtex`` (que vem com o ``sphinxcontrib-bibtex``)."""
    from pybtex.database import parse_file

    data = parse_file(str(bib_path), bib_format="bibtex")
    refs = {}
    for key, entry in data.entries.items():
        persons = entry.persons.get("author") or entry.persons.get("editor") or []
        names = _last_names(persons)
        if not names:
            org = entry.fields.get("organization") or entry.fields.get("institution") or key
            authors = re.sub(r"[{}\\]", "", org)
        elif len(names) == 1:
            authors = names[0]
        elif len(names) == 2:
            authors = f"{names[0]} e {names[1]}"
        else:
            authors = f"{names[0]} et al."
        fields = entry.fields
        in_text = [m.group(0) for name in ("howpublished", "note")
                   for m in re.finditer(r"https?://[^\s{}]+", fields.get(name, ""))]
        if fields.get("url"):
            url = fields["url"]
        elif in_text:
            url = in_text[0]
        elif fields.get("doi"):
            url = "https://doi.org/" + fields["doi"]
        elif fields.get("eprint") and "arxiv" in fields.get("archiveprefix", "arxiv").lower():
            url = "https://arxiv.org/abs/" + fields["eprint"]
        else:
            title = re.sub(r"[{}\\]", "", fields.get("title", key))
            url = "https://scholar.google.com/scholar?q=" + urllib.parse.quote_plus(title)
        refs[key] = {"autores": authors, "ano": fields.get("year", "s.d."), "url": url.strip()}
    return refs


def _cite_portatil(m: re.Match, refs: dict[str, dict]) -> str:
    keys = [k.strip() for k in m.group("keys").split(",")]
    missing = [k for k in keys if k not in refs]
    if missing:
        raise KeyError(f"Citação de chave(s) ausente(s) em references.bib: {missing}.")
    url = refs[keys[0]]["url"].replace(" ", "%20").replace(")", "%29").replace("(", "%28")
    if m.group("t") == ":t":
        text = "; ".join(f"{refs[k]['autores']} ({refs[k]['ano']})" for k in keys)
        return f'[{text}]({url} "cite:t:{",".join(keys)}")'
    text = "; ".join(f"{refs[k]['autores']}, {refs[k]['ano']}" for k in keys)
    return f'[\\[{text}\\]]({url} "cite:{",".join(keys)}")'


# ------------------------------------------------------------------------------------ conversões


def para_commonmark(markdown: str, refs: dict[str, dict]) -> str:
    """MyST → forma portátil (caixas em HTML, citações em texto autor–ano com link). Idempotente."""
    markdown = _ADMONITION.sub(_admonition_portatil, markdown)
    return _ROLE.sub(lambda m: _cite_portatil(m, refs), markdown)


def para_myst(markdown: str) -> str:
    """Forma portátil → MyST (o que o livro compila). Desfaz ``para_commonmark``."""
    markdown = _LINK.sub(
        lambda m: f"{{cite{':t' if m.group('t') else ''}}}`{m.group('keys')}`", markdown)
    markdown = _DETAILS.sub(
        lambda m: _admonition_myst(m.group("title"), "dropdown", m.group("body")), markdown)
    return _DIV.sub(lambda m: _admonition_myst(m.group("title"), m.group("cls"), m.group("body")),
                    markdown)


def notebook_para_myst(text: str) -> str:
    """O JSON de um notebook com as células de markdown devolvidas ao MyST."""
    nb = json.loads(text)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            source = cell["source"]
            joined = "".join(source) if isinstance(source, list) else source
            cell["source"] = para_myst(joined)
    return json.dumps(nb, ensure_ascii=False)


# ------------------------------------------------------------------------------------ Sphinx


def _source_read(app, docname: str, source: list[str]) -> None:
    if str(app.env.doc2path(docname)).endswith(".ipynb"):
        source[0] = notebook_para_myst(source[0])


def setup(app):
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
