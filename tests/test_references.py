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
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
PACKAGE = ROOT / "lncc_llm"

ID = r"(?:\d+|[A-Z](?![\wÀ-ÿ]))"  # 7 ou A (mas não o "A" de "A pode")
SEC = r"(?:\d+|[A-Z])(?:\.\d+)+"  # 7.4.9 ou A.11
JOIN = r"\s*(?:,|\be\b|\ba\b|–|-)\s*"
# Singular leva um número só ("Capítulo 9, 12 passos" não cita um Capítulo 12); plural, uma lista.
CHAPTERS = re.compile(rf"\b(?:(Capítulo|Apêndice)\s+({ID})|(Capítulos|Apêndices)\s+({ID}(?:{JOIN}{ID})*)"
                      rf"|(Introdução))")
SECTIONS = re.compile(rf"(?:\b[Ss]eção\s*({SEC})|\b[Ss]eções\s*({SEC}(?:{JOIN}{SEC})*)|§\s*({SEC})"
                      rf"|§§\s*({SEC}(?:{JOIN}{SEC})*)|\b[Ss]eção\s+[\"“]([^\"”]+)[\"”])"
                      rf"(?:\s+d[oa]\s+(Capítulo|Apêndice)\s+({ID}))?")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)
HEADING_NUMBER = re.compile(rf"^({SEC})(?:\s+(a|e)\s+({SEC}))?\s+")
FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})(.*)$")

# Referências que apontam para nada hoje, com a issue que as conserta. Chave: (arquivo, referência).
KNOWN_BROKEN: dict = {}

# Frases que dizem o que outro capítulo ensina: algum título do capítulo citado deve conter o termo.
# (arquivo, trecho da frase, capítulo citado, termo)
TOPIC_CLAIMS = [
    ("book/apendice_a_treino.ipynb", "sem filtros como o top-k e o top-p do Capítulo 4", "4", "top-k"),
]
KNOWN_BROKEN_TOPICS: dict = {}

# Frases que citam uma seção pelo número e dizem o assunto: o título daquela seção tem de conter o termo.
# O número sozinho não basta: depois de uma renumeração, "seção 9.1.1" continuava existindo, mas era
# outra seção (o template de chat, e não o GGUF). (arquivo, trecho da frase, seção, termo do título)
SECTION_TOPICS = [
    ("book/cap06_velocidade_memoria.ipynb", "o GGUF do Capítulo 9 (seção 9.1.3, a interoperabilidade entre formatos)",
     "9.1.3", "interoperabilidade"),
    ("book/apendice_b_llama_do_zero.ipynb", "(Q4_1, Capítulo 9, seção 9.1.3)", "9.1.3", "formatos"),
    ("book/cap08_alinhamento.ipynb", "arquivo GGUF em Q4_1 desquantizado (Capítulo 9, seção 9.1.3)", "9.1.3",
     "formatos"),
    ("book/cap03_variacoes_modernas.ipynb", "seção 9.1.3, desfaz exatamente essa permutação ao ler o GGUF",
     "9.1.3", "formatos"),
    ("book/cap09_tendencias.ipynb", "guarda o *KV cache* (seção 4.14) em blocos", "4.14", "kv cache"),
]


def _strip_fences(text):
    """O markdown sem os blocos de código; o corpo das diretivas (```{admonition}, :::{note}) fica.

    As comparações com o texto-base e as soluções vão em quadros recolhidos: as referências deles
    também têm de apontar títulos que existem.
    """
    kept, stack = [], []  # stack: (marcador, é código?)
    for line in text.splitlines():
        m = FENCE_LINE.match(line)
        if m:
            fence, info = m.group(1), m.group(2).strip()
            if stack and not info and fence[0] == stack[-1][0][0] and len(fence) >= len(stack[-1][0]):
                stack.pop()  # fecha o bloco aberto mais recente
                continue
            if not (stack and stack[-1][1]):  # dentro de código, uma cerca nova é só texto
                stack.append((fence, not info.startswith("{")))
                continue
        if not (stack and stack[-1][1]):
            kept.append(line)
    return "\n".join(kept)


def _comments(code):
    """Os comentários de uma célula de código, inteiros ou no fim da linha (onde também se cita seção)."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(code).readline)
        return "\n".join(t.string.lstrip("#") for t in tokens if t.type == tokenize.COMMENT)
    except (tokenize.TokenError, SyntaxError):  # mágicas do IPython e afins: linhas que começam por #
        return "\n".join(ln.split("#", 1)[1] for ln in code.splitlines() if ln.lstrip().startswith("#"))


def _plain(text):
    return re.sub(r"[*_`$]", "", text).strip().lower()


@functools.lru_cache(maxsize=1)
def book_pages():
    """{arquivo relativo: markdown (sem blocos de código)} dos notebooks e das páginas do livro."""
    pages = {}
    for path in sorted(BOOK.glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        pages[path] = [(f"célula {i}", _strip_fences("".join(c["source"])))
                       for i, c in enumerate(cells) if c["cell_type"] == "markdown"]
        pages[path] += [(f"célula {i} (comentário)", _comments("".join(c["source"])))
                        for i, c in enumerate(cells) if c["cell_type"] == "code"]
    for path in sorted(BOOK.glob("*.md")):
        pages[path] = [("página", _strip_fences(path.read_text(encoding="utf-8")))]
    return {str(p.relative_to(ROOT)): cells for p, cells in pages.items()}


def chapter_id(title):
    """'Capítulo 4 — …' → 'Capítulo 4'; 'Apêndice A — …' → 'Apêndice A'; senão None."""
    m = re.match(r"(Capítulo|Apêndice)\s+(\d+|[A-Z])\b", title)
    return f"{m.group(1)} {m.group(2)}" if m else None


def owner_of(number):
    """'7.4.9' → 'Capítulo 7'; 'A.11' → 'Apêndice A'."""
    head = number.split(".", 1)[0]
    return f"Capítulo {head}" if head.isdigit() else f"Apêndice {head}"


def _expand(first, how, last):
    if not how:
        return [first]
    if how == "e":
        return [first, last]
    head, a = first.rsplit(".", 1)
    head_b, b = last.rsplit(".", 1)
    assert head == head_b, f"intervalo de seções estranho: {first} a {last}"
    return [f"{head}.{k}" for k in range(int(a), int(b) + 1)]


def index_headings(titles_by_chapter):
    """{'Capítulo 4': [títulos]} → {'Capítulo 4': {'numbers', 'titles', 'headings'}}."""
    index = {}
    for chapter, titles in titles_by_chapter.items():
        entry = index.setdefault(chapter, {"numbers": set(), "titles": set(), "headings": []})
        for title in titles:
            entry["headings"].append(title)
            m = HEADING_NUMBER.match(title)
            if m:
                entry["numbers"].update(_expand(m.group(1), m.group(2), m.group(3)))
                title = title[m.end():]
            entry["titles"].add(_plain(title))
    return index


@functools.lru_cache(maxsize=1)
def book_headings():
    """Os títulos de cada capítulo do livro, indexados por ``index_headings``."""
    titles_by_chapter = {}
    for name, cells in book_pages().items():
        text = "\n".join(src for where, src in cells if not where.endswith("(comentário)"))
        titles = HEADING.findall(text)
        chapter = "Introdução" if name == "book/intro.md" else (chapter_id(titles[0]) if titles else None)
        if chapter:
            titles_by_chapter.setdefault(chapter, []).extend(titles)
    return index_headings(titles_by_chapter)


def _ids(group):
    """'4, 6, 9' → 4, 6, 9; '1–3' ou '4 a 6' → 1, 2, 3 ou 4, 5, 6; 'A' → A."""
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


def _chapter_labels(m):
    """Os capítulos de uma menção: ['Capítulo 4'], ['Capítulo 4', 'Capítulo 6'] ou ['Introdução']."""
    if m.group(5):
        return ["Introdução"]
    if m.group(1):
        return [f"{m.group(1)} {m.group(2)}"]
    word = m.group(3).removesuffix("s")  # Capítulos → Capítulo, Apêndices → Apêndice
    return [f"{word} {i}" for i in _ids(m.group(4))]


def references(text, headings=None):
    """Cada referência de um texto: (trecho citado, problema ou None).

    Uma seção numerada tem de ser um título do capítulo dono do número; se o texto diz de que
    capítulo ela é ("Capítulo K, seção N.M" ou "seção N.M do Capítulo K"), tem de ser o mesmo.
    """
    text = re.sub(r"\s+", " ", text)
    headings = book_headings() if headings is None else headings
    found = []
    events = sorted([(m.start(), "chapter", m) for m in CHAPTERS.finditer(text)]
                    + [(m.start(), "section", m) for m in SECTIONS.finditer(text)], key=lambda e: e[0])
    previous = None  # (fim do trecho, capítulos) da última menção a capítulo
    skip_until = -1  # "do Capítulo K" depois de uma seção já foi contado com ela
    for start, kind, m in events:
        if start < skip_until:
            continue
        if kind == "chapter":
            labels = _chapter_labels(m)
            found += [(label, None if label in headings else f"o livro não tem {label}")
                      for label in labels]
            previous = (m.end(), labels)
            continue
        # Um capítulo citado "logo antes" é o da forma "Capítulo K, seção …" (só uma vírgula no meio).
        cited = previous[1] if previous and re.fullmatch(r",? ?", text[previous[0]:start]) else None
        if m.group(6):  # "seção N.M do Capítulo K"
            after = f"{m.group(6)} {m.group(7)}"
            found.append((after, None if after in headings else f"o livro não tem {after}"))
            cited = [after]
            skip_until = m.end()
        numbers = m.group(1) or m.group(3) or m.group(2) or m.group(4)
        if numbers:
            for number in _sections(numbers):
                ref, owner = f"seção {number}", owner_of(number)
                if cited and owner not in cited:
                    found.append((ref, f"a seção {number} não é do {' nem do '.join(cited)}"))
                elif number not in headings.get(owner, {}).get("numbers", set()):
                    found.append((ref, f"nenhum título {number} no {owner}"))
                else:
                    found.append((ref, None))
        else:
            name = m.group(5)
            ref = f'seção "{name}"'
            if not cited:
                found.append((ref, "seção citada pelo nome sem o capítulo antes ('Capítulo N, seção \"…\"')"))
            elif not any(_plain(name) in headings.get(c, {}).get("titles", set()) for c in cited):
                found.append((ref, f"nenhum título {name!r} no {' nem no '.join(cited)}"))
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
        for where, src in cells:
            out += [(name, where, ref, problem) for ref, problem in references(src)]
    return out


def test_every_reference_names_a_heading_of_the_book():
    broken = [f"{name} ({where}): {ref}: {problem}" for name, where, ref, problem in all_references()
              if problem and (name, where, ref) not in KNOWN_BROKEN]
    assert not broken, "referências que não apontam nenhum título:\n" + "\n".join(broken)


def test_known_broken_references_are_still_broken():
    """Quando uma referência conhecida é consertada, ela deve sair de KNOWN_BROKEN."""
    still = {(name, where, ref) for name, where, ref, problem in all_references() if problem}
    fixed = [f"{name} ({where}): {ref}" for name, where, ref in KNOWN_BROKEN
             if (name, where, ref) not in still]
    assert not fixed, "já consertadas; tire-as de KNOWN_BROKEN:\n" + "\n".join(fixed)


def test_docstrings_and_book_have_references_to_check():
    """O teste acima não passa por não achar nada: há centenas de referências, nos dois lados."""
    refs = all_references()
    in_package = [r for r in refs if r[0].startswith("lncc_llm/")]
    in_book = [r for r in refs if r[0].startswith("book/")]
    assert len(in_package) > 100 and len(in_book) > 100


# Um livro de mentira, para que os casos abaixo não dependam dos títulos de hoje.
FAKE_BOOK = index_headings({
    "Capítulo 1": ["Capítulo 1 — Introdução", "Verificação do ambiente"],
    "Capítulo 2": ["Capítulo 2 — Núcleo", "2.2 Tokenização", "2.7 Conexões residuais"],
    "Capítulo 3": ["Capítulo 3 — Variações", "3.7 Escala", "3.7.3 Escala, softmax e entropia"],
    "Capítulo 4": ["Capítulo 4 — Inferência"],
    "Capítulo 5": ["Capítulo 5 — Prompting"],
    "Capítulo 6": ["Capítulo 6 — Pré-treino"],
    "Capítulo 7": ["Capítulo 7 — Treino", "7.4.1 a 7.4.4 Configuração", "7.9 SFT", "7.10 LoRA", "7.11 QLoRA"],
    "Capítulo 9": ["Capítulo 9 — Tendências"],
    "Apêndice A": ["Apêndice A — GPT do zero", "A.9 Gerando texto", "A.12 Temperatura"],
    "Introdução": ["Large Language Models", "Como ler as saídas"],
})


@pytest.mark.parametrize("text, expected", [
    ("Ver Capítulo 2, seção 2.7.", [("Capítulo 2", None), ("seção 2.7", None)]),
    ("Ver Capítulo 2, seção 2.7.3.", [("Capítulo 2", None), ("seção 2.7.3", "nenhum título 2.7.3 no Capítulo 2")]),
    ("Ver Capítulo 3, seção 2.7.", [("Capítulo 3", None), ("seção 2.7", "a seção 2.7 não é do Capítulo 3")]),
    ("a seção 3.7 do Capítulo 2", [("Capítulo 2", None), ("seção 3.7", "a seção 3.7 não é do Capítulo 2")]),
    ("a seção 2.7 do Capítulo 2", [("Capítulo 2", None), ("seção 2.7", None)]),
    ("Ver Capítulo 7, seções 7.9–7.11.", [("Capítulo 7", None), ("seção 7.9", None), ("seção 7.10", None),
                                          ("seção 7.11", None)]),
    ("Ver Apêndice A, seções A.9 e A.12.", [("Apêndice A", None), ("seção A.9", None), ("seção A.12", None)]),
    ("(Capítulos 4 a 6)", [("Capítulo 4", None), ("Capítulo 5", None), ("Capítulo 6", None)]),
    ("(Capítulos 4, 6, 9)", [("Capítulo 4", None), ("Capítulo 6", None), ("Capítulo 9", None)]),
    ("no Capítulo 9, 12 passos", [("Capítulo 9", None)]),  # singular: um número só
    ("o Capítulo 12 e o Apêndice B", [("Capítulo 12", "o livro não tem Capítulo 12"),
                                      ("Apêndice B", "o livro não tem Apêndice B")]),
    ("o Apêndice 4", [("Apêndice 4", "o livro não tem Apêndice 4")]),  # o número certo, a palavra errada
    ('Ver Capítulo 1, seção "Verificação do ambiente".', [("Capítulo 1", None),
                                                          ('seção "Verificação do ambiente"', None)]),
    ('Ver Capítulo 2, seção "Verificação do ambiente".', [("Capítulo 2", None), (
        'seção "Verificação do ambiente"', "nenhum título 'Verificação do ambiente' no Capítulo 2")]),
    ('Ver Introdução, seção "Como ler as saídas".', [("Introdução", None),
                                                     ('seção "Como ler as saídas"', None)]),
    ("a seção\n7.4.2 mostra", [("seção 7.4.2", None)]),  # dentro do título "7.4.1 a 7.4.4"
    ("veja o §3.7.3", [("seção 3.7.3", None)]),
    ("O Apêndice A pode ser lido depois", [("Apêndice A", None)]),
])
def test_reference_parser_on_known_cases(text, expected):
    assert references(text, FAKE_BOOK) == expected


def test_admonition_bodies_are_checked_and_code_blocks_are_not():
    text = (
        "Antes.\n\n````{admonition} Comparação com o texto-base\n:class: dropdown\n\n"
        "Na seção 5.2 do texto-base…\n\n```python\n# seção 9.9 num bloco de código\n```\n"
        "Depois do código, seção 3.7.\n````\n\n```\nseção 8.8\n```\nFim, seção 2.2.\n"
    )
    kept = _strip_fences(text)
    assert [ref for ref, _ in references(kept, FAKE_BOOK)] == ["seção 5.2", "seção 3.7", "seção 2.2"]


def test_topic_claims_hold():
    """Uma frase que diz que o Capítulo N trata de X exige um título de X no Capítulo N."""
    pages = {name: "\n".join(src for _, src in cells) for name, cells in book_pages().items()}
    headings = book_headings()
    stale, broken, fixed = [], [], []
    for name, phrase, chapter, term in TOPIC_CLAIMS:
        if phrase not in re.sub(r"\s+", " ", pages[name]):
            stale.append(f"{name}: a frase {phrase!r} mudou; atualize TOPIC_CLAIMS")
            continue
        holds = any(term in _plain(h) for h in headings[f"Capítulo {chapter}"]["headings"])
        known = (name, term) in KNOWN_BROKEN_TOPICS
        if not holds and not known:
            broken.append(f"{name}: diz que o Capítulo {chapter} trata de {term}, mas nenhum título dele fala nisso")
        if holds and known:
            fixed.append(f"{name}: {term} já consertado; tire-o de KNOWN_BROKEN_TOPICS")
    assert not (stale or broken or fixed), "\n".join(stale + broken + fixed)


def heading_of(number, headings):
    """O título numerado ``number`` ('9.1.3 Interoperabilidade…'), sem o número; None se não há."""
    for title in headings.get(owner_of(number), {}).get("headings", []):
        m = HEADING_NUMBER.match(title)
        if m and number in _expand(m.group(1), m.group(2), m.group(3)):
            return _plain(title[m.end():])
    return None


def section_topic_problems(pages, headings, claims=None):
    """As frases de ``claims`` (padrão: SECTION_TOPICS) que não valem: a frase sumiu, ou o título da
    seção citada não tem o termo."""
    problems = []
    for name, phrase, number, term in SECTION_TOPICS if claims is None else claims:
        if phrase not in re.sub(r"\s+", " ", pages.get(name, "")):
            problems.append(f"{name}: a frase {phrase!r} mudou; atualize SECTION_TOPICS")
            continue
        title = heading_of(number, headings)
        if title is None or term not in title:
            problems.append(f"{name}: cita a seção {number} por {term!r}, mas o título dela é {title!r}")
    return problems


def test_sections_cited_by_subject_have_that_subject_in_their_heading():
    pages = {name: "\n".join(src for _, src in cells) for name, cells in book_pages().items()}
    problems = section_topic_problems(pages, book_headings())
    assert not problems, "\n".join(problems)


def test_section_topic_check_catches_a_renumbered_section():
    """O caso que o teste dos números deixou passar: a seção 9.1.1 existe, mas é outra."""
    book = index_headings({"Capítulo 9": ["Capítulo 9 — Tendências", "9.1.1 Padrões de interface: o template de chat",
                                          "9.1.3 Interoperabilidade computacional: o mesmo modelo, dois formatos"]})
    page = {"cap06": "o GGUF do Capítulo 9 (seção 9.1.1) guarda essa matriz"}
    assert references(page["cap06"], book) == [("Capítulo 9", None), ("seção 9.1.1", None)]  # o número passa
    assert section_topic_problems(page, book, [("cap06", "(seção 9.1.1)", "9.1.1", "interoperabilidade")]) == [
        "cap06: cita a seção 9.1.1 por 'interoperabilidade', mas o título dela é 'padrões de interface: o template "
        "de chat'"]
    page = {"cap06": "o GGUF do Capítulo 9 (seção 9.1.3) guarda essa matriz"}
    assert section_topic_problems(page, book, [("cap06", "(seção 9.1.3)", "9.1.3", "interoperabilidade")]) == []
    assert section_topic_problems(page, book, [("cap06", "(seção 9.1.2)", "9.1.2", "x")]) == [
        "cap06: a frase '(seção 9.1.2)' mudou; atualize SECTION_TOPICS"]
