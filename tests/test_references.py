"""Referências cruzadas: todo "Capítulo N", "seção N.M" ou "§N.M" aponta um título que existe no livro.

Vale para as docstrings de ``lncc_llm`` ("Ver Capítulo 2, seção 2.7.") e para o markdown dos
notebooks e das páginas do livro. Uma seção numerada N.M tem de ser um título do Capítulo N (ou do
Apêndice N, para A.3); com "Capítulo K, seção N.M", K tem de ser N; uma seção citada pelo nome
(``seção "Verificação do ambiente"``) tem de ser um título do capítulo citado logo antes.

As referências quebradas que outras issues vão consertar ficam em ``KNOWN_BROKEN``, cada uma com o
motivo; o teste falha também quando uma delas passa a funcionar, para que saia da lista.
"""
import ast
import functools
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
PACKAGE = ROOT / "lncc_llm"

ID = r"(?:\d+|[A-Z](?![\wÀ-ÿ]))"  # 7 ou A (mas não o "A" de "A pode")
SEC = r"(?:\d+|[A-Z])(?:\.\d+)+"  # 7.4.9 ou A.11
JOIN = r"\s*(?:,|\be\b|\ba\b|–|-)\s*"
CHAPTERS = re.compile(rf"\b(Capítulos?|Apêndices?|Introdução)(?:\s+({ID}(?:{JOIN}{ID})*))?")
SECTIONS = re.compile(rf"(?:\b[Ss]eç(?:ão|ões)|§§?)\s*(?:({SEC}(?:{JOIN}{SEC})*)|[\"“]([^\"”]+)[\"”])")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)
HEADING_NUMBER = re.compile(rf"^({SEC})(?:\s+(a|e)\s+({SEC}))?\s+")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)

# Referências que apontam para nada hoje, com a issue que as conserta. Chave: (arquivo, referência).
KNOWN_BROKEN = {
    ("book/cap05_prompting_icl.ipynb", "seção 5.2"): (
        "célula 0, 'os objetivos da atividade (a seção 5.2 do texto)': número de seção do texto-base, "
        "que o livro não tem; a issue dos Capítulos 4–5 leva a comparação para um quadro recolhido"
    ),
}

# Frases que dizem o que outro capítulo ensina: algum título do capítulo citado deve conter o termo.
# (arquivo, trecho da frase, capítulo citado, termo)
TOPIC_CLAIMS = [
    ("book/apendice_a_gpt_do_zero.ipynb", "top-k ou top-p (o Capítulo 4 trata deles)", "4", "top-k"),
]
KNOWN_BROKEN_TOPICS = {
    ("book/apendice_a_gpt_do_zero.ipynb", "top-k"): (
        "o Capítulo 4 ensina temperatura e top-p, mas não top-k; a issue dos Capítulos 4–5 acrescenta "
        "o top-k ao Capítulo 4 (ou muda a frase)"
    ),
}


def _strip_fences(text):
    return FENCE.sub("", text)


def _plain(text):
    return re.sub(r"[*_`$]", "", text).strip().lower()


@functools.lru_cache(maxsize=1)
def book_pages():
    """{arquivo relativo: markdown (sem blocos de código)} dos notebooks e das páginas do livro."""
    pages = {}
    for path in sorted(BOOK.glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        pages[path] = [(i, _strip_fences("".join(c["source"])))
                       for i, c in enumerate(cells) if c["cell_type"] == "markdown"]
    for path in sorted(BOOK.glob("*.md")):
        pages[path] = [(0, _strip_fences(path.read_text(encoding="utf-8")))]
    return {str(p.relative_to(ROOT)): cells for p, cells in pages.items()}


def chapter_id(title):
    """'Capítulo 4 — …' → '4'; 'Apêndice A — …' → 'A'; a página inicial → 'Introdução'."""
    m = re.match(r"(?:Capítulo|Apêndice)\s+(\d+|[A-Z])\b", title)
    return m.group(1) if m else None


def _expand(first, how, last):
    if not how:
        return [first]
    if how == "e":
        return [first, last]
    head, a = first.rsplit(".", 1)
    head_b, b = last.rsplit(".", 1)
    assert head == head_b, f"intervalo de seções estranho: {first} a {last}"
    return [f"{head}.{k}" for k in range(int(a), int(b) + 1)]


@functools.lru_cache(maxsize=1)
def book_headings():
    """{capítulo: {'numbers': {seções numeradas}, 'titles': {títulos sem número}}}."""
    index = {}
    for name, cells in book_pages().items():
        text = "\n".join(src for _, src in cells)
        titles = HEADING.findall(text)
        if not titles:
            continue
        chapter = "Introdução" if name == "book/intro.md" else chapter_id(titles[0])
        if chapter is None:
            continue
        entry = index.setdefault(chapter, {"numbers": set(), "titles": set(), "headings": titles})
        for title in titles:
            m = HEADING_NUMBER.match(title)
            if m:
                entry["numbers"].update(_expand(m.group(1), m.group(2), m.group(3)))
                title = title[m.end():]
            entry["titles"].add(_plain(title))
    return index


def _ids(group):
    """'4, 6, 9' → 4, 6, 9; '1–3' ou '4 a 6' → 1, 2, 3 (capítulos) ou 4, 5, 6; 'A' → A."""
    if not group:
        return []
    parts = re.split(rf"({JOIN})", group)
    ids = [parts[0]]
    for sep, item in zip(parts[1::2], parts[2::2]):
        if sep.strip() in {"a", "–", "-"} and ids[-1].isdigit() and item.isdigit():
            ids.extend(str(k) for k in range(int(ids[-1]) + 1, int(item) + 1))
        else:
            ids.append(item)
    return ids


def _sections(group):
    parts = re.split(rf"({JOIN})", group)
    out = [parts[0]]
    for sep, item in zip(parts[1::2], parts[2::2]):
        if sep.strip() in {"a", "–", "-"}:
            out.extend(_expand(out[-1], "a", item)[1:])
        else:
            out.append(item)
    return out


def references(text):
    """Cada referência de um texto: (trecho citado, problema ou None), com o capítulo citado antes."""
    text = re.sub(r"\s+", " ", text)
    headings = book_headings()
    found = []
    events = sorted([(m.start(), "chapter", m) for m in CHAPTERS.finditer(text)]
                    + [(m.start(), "section", m) for m in SECTIONS.finditer(text)], key=lambda e: e[0])
    previous = None  # (fim do trecho, capítulos) da última menção a capítulo
    for start, kind, m in events:
        if kind == "chapter":
            word, group = m.group(1), m.group(2)
            word = word.removesuffix("s")  # Capítulos → Capítulo, Apêndices → Apêndice
            ids = ["Introdução"] if word == "Introdução" else _ids(group)
            if not ids:
                continue
            for chapter in ids:
                label = word if word == "Introdução" else f"{word} {chapter}"
                found.append((label, None if chapter in headings else f"o livro não tem {label}"))
            previous = (m.end(), ids)
            continue
        # Um capítulo citado "logo antes" é o da forma "Capítulo K, seção …" (só uma vírgula no meio).
        cited = previous[1] if previous and re.fullmatch(r",? ?", text[previous[0]:start]) else None
        if m.group(1):
            for number in _sections(m.group(1)):
                owner = number.split(".", 1)[0]
                ref = f"seção {number}"
                if cited and owner not in cited:
                    found.append((ref, f"a seção {number} não é do Capítulo {', '.join(cited)} citado antes"))
                elif number not in headings.get(owner, {}).get("numbers", set()):
                    found.append((ref, f"nenhum título {number} no capítulo {owner}"))
                else:
                    found.append((ref, None))
        else:
            name = m.group(2)
            ref = f'seção "{name}"'
            if not cited:
                found.append((ref, "seção citada pelo nome sem o capítulo antes ('Capítulo N, seção \"…\"')"))
            elif not any(_plain(name) in headings.get(c, {}).get("titles", set()) for c in cited):
                found.append((ref, f"nenhum título {name!r} no capítulo {', '.join(cited)}"))
            else:
                found.append((ref, None))
    return found


def docstrings():
    """(arquivo, lugar, docstring) de cada módulo, classe e função de lncc_llm."""
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = [tree] + [n for n in ast.walk(tree)
                          if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        for node in nodes:
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield str(path.relative_to(ROOT)), getattr(node, "name", "módulo"), doc


def all_references():
    """(arquivo, lugar, referência, problema) de todas as referências do pacote e do livro."""
    out = []
    for name, where, doc in docstrings():
        out += [(name, where, ref, problem) for ref, problem in references(doc)]
    for name, cells in book_pages().items():
        for i, src in cells:
            out += [(name, f"célula {i}", ref, problem) for ref, problem in references(src)]
    return out


def test_every_reference_names_a_heading_of_the_book():
    broken = [f"{name} ({where}): {ref}: {problem}" for name, where, ref, problem in all_references()
              if problem and (name, ref) not in KNOWN_BROKEN]
    assert not broken, "referências que não apontam nenhum título:\n" + "\n".join(broken)


def test_known_broken_references_are_still_broken():
    """Quando uma referência conhecida é consertada, ela deve sair de KNOWN_BROKEN."""
    still = {(name, ref) for name, _, ref, problem in all_references() if problem}
    fixed = [f"{name}: {ref}" for name, ref in KNOWN_BROKEN if (name, ref) not in still]
    assert not fixed, "já consertadas; tire-as de KNOWN_BROKEN:\n" + "\n".join(fixed)


def test_docstrings_and_book_have_references_to_check():
    """O teste acima não passa por não achar nada: há centenas de referências, nos dois lados."""
    refs = all_references()
    in_package = [r for r in refs if r[0].startswith("lncc_llm/")]
    in_book = [r for r in refs if r[0].startswith("book/")]
    assert len(in_package) > 100 and len(in_book) > 100


@pytest.mark.parametrize("text, expected", [
    ("Ver Capítulo 2, seção 2.7.", [("Capítulo 2", None), ("seção 2.7", None)]),
    ("Ver Capítulo 2, seção 2.7.3.", [("Capítulo 2", None), ("seção 2.7.3", "nenhum título 2.7.3 no capítulo 2")]),
    ("Ver Capítulo 3, seção 2.7.", [("Capítulo 3", None),
                                    ("seção 2.7", "a seção 2.7 não é do Capítulo 3 citado antes")]),
    ("Ver Capítulo 7, seções 7.9–7.11.", [("Capítulo 7", None), ("seção 7.9", None), ("seção 7.10", None),
                                          ("seção 7.11", None)]),
    ("Ver Apêndice A, seções A.9 e A.12.", [("Apêndice A", None), ("seção A.9", None), ("seção A.12", None)]),
    ("(Capítulos 4 a 6)", [("Capítulo 4", None), ("Capítulo 5", None), ("Capítulo 6", None)]),
    ("o Capítulo 12 e o Apêndice B", [("Capítulo 12", "o livro não tem Capítulo 12"),
                                      ("Apêndice B", "o livro não tem Apêndice B")]),
    ('Ver Capítulo 1, seção "Verificação do ambiente".', [("Capítulo 1", None),
                                                          ('seção "Verificação do ambiente"', None)]),
    ('Ver Capítulo 2, seção "Verificação do ambiente".', [("Capítulo 2", None), (
        'seção "Verificação do ambiente"', "nenhum título 'Verificação do ambiente' no capítulo 2")]),
    ("a seção\n7.4.2 mostra", [("seção 7.4.2", None)]),  # dentro do título "7.4.1 a 7.4.4"
    ("veja o §3.7.3", [("seção 3.7.3", None)]),
    ("O Apêndice A pode ser lido depois", [("Apêndice A", None)]),
])
def test_reference_parser_on_known_cases(text, expected):
    assert references(text) == expected


def test_topic_claims_hold():
    """Uma frase que diz que o Capítulo N trata de X exige um título de X no Capítulo N."""
    pages = {name: "\n".join(src for _, src in cells) for name, cells in book_pages().items()}
    headings = book_headings()
    stale, broken, fixed = [], [], []
    for name, phrase, chapter, term in TOPIC_CLAIMS:
        if phrase not in re.sub(r"\s+", " ", pages[name]):
            stale.append(f"{name}: a frase {phrase!r} mudou; atualize TOPIC_CLAIMS")
            continue
        holds = any(term in _plain(h) for h in headings[chapter]["headings"])
        known = (name, term) in KNOWN_BROKEN_TOPICS
        if not holds and not known:
            broken.append(f"{name}: diz que o Capítulo {chapter} trata de {term}, mas nenhum título dele fala nisso")
        if holds and known:
            fixed.append(f"{name}: {term} já consertado; tire-o de KNOWN_BROKEN_TOPICS")
    assert not (stale or broken or fixed), "\n".join(stale + broken + fixed)
