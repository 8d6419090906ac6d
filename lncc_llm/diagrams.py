"""Diagramas de arquitetura desenhados em código: o Transformer genérico, o BERT e o GPT-2 lado a
lado.

Cada modelo vira uma faixa lida da esquerda para a direita (o sentido do *forward pass*), com a
mesma convenção de cores nas três: cinza para a entrada, azul para os embeddings, verde para a
computação principal (atenção e MLP/FFN, repetidas em blocos) e amarelo para a saída. Embaixo da
caixa de atenção, uma pequena grade mostra quem pode olhar para quem: cheia nos modelos
bidirecionais, triangular no GPT-2.
"""
from __future__ import annotations

from dataclasses import dataclass

# As cores que o texto usa para ler os diagramas (seção 4.3.1) e que a tabela da seção 4.5 repete.
PALETTE = {
    "entrada": "#d4d4d4",     # cinza
    "embedding": "#9ecae1",   # azul
    "computacao": "#a1d99b",  # verde
    "saida": "#fdd870",       # amarelo
}
_LEGEND = {
    "entrada": "entrada (cinza)",
    "embedding": "embeddings (azul)",
    "computacao": "computação: atenção e MLP/FFN (verde)",
    "saida": "saída (amarelo)",
}


@dataclass(frozen=True)
class Panel:
    """Uma faixa do diagrama: título, caixas (tipo, rótulo) na ordem do fluxo, rótulo da repetição e
    máscara.

    As caixas do tipo ``"computacao"`` formam o bloco repetido; a primeira delas é a atenção.
    Ver Capítulo 4, seção 4.3.
    """

    title: str
    boxes: tuple[tuple[str, str], ...]
    repeat_label: str
    causal: bool
    mask_caption: str


def architecture_panels() -> list[Panel]:
    """As três faixas da Figura 4.1: Transformer genérico, BERT (codificador) e GPT-2
    (decodificador causal).

    O bloco comum tem as mesmas quatro caixas verdes nos três; mudam a entrada (o BERT soma o
    embedding de segmento), a máscara da atenção (só o GPT-2 é causal), a posição da normalização
    (o GPT-2 normaliza antes de cada subcamada) e a cabeça de saída (MLM no BERT, ``lm_head`` no
    GPT-2).
    Ver Capítulo 4, seção 4.3.
    """
    return [
        Panel(
            title="1. Transformer (base comum)",
            boxes=(
                ("entrada", "tokens\nde entrada"),
                ("embedding", "embedding\ntoken + posição"),
                ("computacao", "self-attention\nmulti-cabeça"),
                ("computacao", "Add & Norm"),
                ("computacao", "MLP / FFN"),
                ("computacao", "Add & Norm"),
                ("saida", "hidden states\n(um por token)"),
            ),
            repeat_label="N× blocos iguais",
            causal=False,
            mask_caption="sem máscara",
        ),
        Panel(
            title="2. BERT (codificador bidirecional)",
            boxes=(
                ("entrada", "[CLS] … [SEP]\ninput_ids"),
                ("embedding", "token + posição\n+ segmento"),
                ("computacao", "atenção\nbidirecional"),
                ("computacao", "Add & Norm"),
                ("computacao", "FFN (GELU)"),
                ("computacao", "Add & Norm"),
                ("saida", "vetor por token\n→ cabeça MLM"),
            ),
            repeat_label="Codificador ×12",
            causal=False,
            mask_caption="todos veem todos",
        ),
        Panel(
            title="3. GPT-2 (decodificador causal)",
            boxes=(
                ("entrada", "input_ids"),
                ("embedding", "wte + wpe\ntoken + posição"),
                ("computacao", "ln_1 →\natenção causal"),
                ("computacao", "soma residual"),
                ("computacao", "ln_2 → MLP\n768→3072→768"),
                ("computacao", "soma residual"),
                ("saida", "ln_f → lm_head\nlogits (50257)"),
            ),
            repeat_label="Decodificador ×12",
            causal=True,
            mask_caption="só o passado (j ≤ i)",
        ),
    ]


def _draw_panel(ax, panel: Panel, mask_size: int) -> None:
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
    from matplotlib.path import Path

    width, height, gap, y = 1.8, 0.95, 0.4, 0.0
    kinds = [kind for kind, _ in panel.boxes]
    unknown = sorted(set(kinds) - set(PALETTE))
    if unknown:
        raise ValueError(f"Tipo de caixa desconhecido {unknown}; use um de {sorted(PALETTE)}.")
    block = [i for i, kind in enumerate(kinds) if kind == "computacao"]
    if not block:
        raise ValueError(f"A faixa {panel.title!r} não tem caixas de computação "
                         "(o bloco repetido).")

    lefts = [i * (width + gap) for i in range(len(panel.boxes))]
    for left, (kind, label) in zip(lefts, panel.boxes):
        box = FancyBboxPatch((left, y - height / 2), width, height,
                             boxstyle="round,pad=0.02,rounding_size=0.12",
                             facecolor=PALETTE[kind], edgecolor="0.25", linewidth=1.0, zorder=2)
        box.set_gid("caixa")
        box.set_label(kind)
        ax.add_patch(box)
        text = ax.text(left + width / 2, y, label, ha="center", va="center", fontsize=8.6, zorder=3)
        text.set_gid("rotulo")

    # fluxo do forward pass, da esquerda para a direita
    for left, right in zip(lefts[:-1], lefts[1:]):
        arrow = FancyArrowPatch((left + width, y), (right, y), arrowstyle="-|>", mutation_scale=11,
                                color="0.2", linewidth=1.1, zorder=1)
        arrow.set_gid("fluxo")
        ax.add_patch(arrow)

    # atalhos (conexões residuais): saem da seta que entra em cada subcamada, passam por cima dela
    # e descem na soma que a fecha
    rise = y + height / 2 + 0.32
    for start in (block[0], block[0] + 2):
        if start + 1 > block[-1]:
            continue
        x_tail, x_head = lefts[start] - gap / 2, lefts[start + 1] + width / 2
        route = Path([(x_tail, y), (x_tail, rise), (x_head, rise), (x_head, y + height / 2)])
        arrow = FancyArrowPatch(path=route, arrowstyle="-|>", mutation_scale=9, color="0.45",
                                linewidth=0.9, linestyle="--", zorder=1)
        arrow.set_gid("residual")
        ax.add_patch(arrow)

    # moldura do bloco repetido
    pad = 0.16
    x0, x1 = lefts[block[0]] - gap / 2 - 0.05, lefts[block[-1]] + width + pad
    frame = FancyBboxPatch((x0, y - height / 2 - 1.05), x1 - x0, height + 1.05 + 0.85,
                           boxstyle="round,pad=0.0,rounding_size=0.15", facecolor="none",
                           edgecolor="0.35", linewidth=1.0, linestyle=(0, (4, 3)), zorder=0)
    frame.set_gid("repeticao")
    ax.add_patch(frame)
    label = ax.text(x1 - 0.08, y + height / 2 + 0.6, panel.repeat_label, ha="right", va="center",
                    fontsize=8.8, fontweight="bold", color="0.25")
    label.set_gid("repeticao")

    # grade da máscara sob a atenção: célula (i, j) cheia = a posição i pode olhar para a j
    cell = 0.15
    attention_center = lefts[block[0]] + width / 2
    gx0 = attention_center - mask_size * cell / 2
    gy_top = y - height / 2 - 0.12
    for i in range(mask_size):
        for j in range(mask_size):
            allowed = (j <= i) or not panel.causal
            square = Rectangle((gx0 + j * cell, gy_top - (i + 1) * cell), cell, cell,
                               facecolor="#31a354" if allowed else "white", edgecolor="0.55",
                               linewidth=0.5, zorder=2)
            square.set_gid("mascara-aberta" if allowed else "mascara-bloqueada")
            ax.add_patch(square)
    caption = ax.text(gx0 + mask_size * cell + 0.08, gy_top - mask_size * cell / 2,
                      panel.mask_caption, ha="left", va="center", fontsize=7.8, style="italic",
                      color="0.2")
    caption.set_gid("mascara")

    ax.set_title(panel.title, loc="left", fontsize=10.5, fontweight="bold")
    ax.set_xlim(-0.25, lefts[-1] + width + 0.25)
    ax.set_ylim(y - height / 2 - 1.15, y + height / 2 + 1.0)
    ax.set_aspect("equal")
    ax.axis("off")


def draw_architecture_comparison(panels: list[Panel] | None = None, mask_size: int = 4,
                                 figsize=(11.5, 8.0)):
    """Desenha a Figura 4.1: uma faixa por modelo, alinhadas para que as peças iguais fiquem uma
    sobre a outra.

    ``panels`` (padrão: ``architecture_panels()``) define as faixas; ``mask_size`` é o lado da grade
    que ilustra a máscara de atenção. Cada caixa leva ``gid="caixa"`` e o tipo como ``label``, e as
    células da grade levam ``gid="mascara-aberta"`` ou ``"mascara-bloqueada"``, o que permite
    conferir o desenho em testes. Devolve a ``Figure`` do matplotlib.
    Ver Capítulo 4, seção 4.3.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    panels = architecture_panels() if panels is None else list(panels)
    if not panels:
        raise ValueError("Nenhuma faixa para desenhar: passe ao menos um Panel.")
    if not (isinstance(mask_size, int) and 2 <= mask_size <= 8):
        raise ValueError(f"mask_size deve ser um inteiro entre 2 e 8; recebi {mask_size!r}.")
    fig, axes = plt.subplots(len(panels), 1, figsize=figsize, squeeze=False)
    for ax, panel in zip(axes[:, 0], panels):
        _draw_panel(ax, panel, mask_size)
    handles = [Patch(facecolor=PALETTE[k], edgecolor="0.25", label=_LEGEND[k]) for k in PALETTE]
    fig.legend(handles=handles, loc="lower center", ncol=4, frameon=False, fontsize=9)
    fig.suptitle("Transformer genérico, BERT e GPT-2: o mesmo núcleo, máscaras e saídas diferentes",
                 fontsize=12)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    return fig


# --------------------------------------------------------------- Capítulo 7: onde o gradiente passa

UPDATE_COLORS = {
    "treinavel": "#e6550d",    # laranja: recebe gradiente
    "congelado": "#d4d4d4",    # cinza: fp32 congelado
    "quantizado": "#969696",   # cinza escuro: 4 bits congelado
}


def _matrix(ax, x0, y0, rows, cols, kind, label, cell=0.32, hatch=None):
    """Desenha uma matriz ``rows × cols`` de células do tipo ``kind`` com o rótulo embaixo."""
    from matplotlib.patches import Rectangle

    for i in range(rows):
        for j in range(cols):
            ax.add_patch(Rectangle((x0 + j * cell, y0 + (rows - 1 - i) * cell), cell, cell,
                                   facecolor=UPDATE_COLORS[kind], edgecolor="white", lw=0.8,
                                   hatch=hatch, gid=kind))
    ax.text(x0 + cols * cell / 2, y0 - 0.25, label, ha="center", va="top", fontsize=9, gid="rotulo")
    return x0 + cols * cell


def update_space_counts(d: int, k: int, r: int) -> dict[str, int]:
    """Quantos números cada método deixa treinar numa matriz ``d × k``: ``d·k`` no SFT, ``r(d + k)``
    no LoRA/QLoRA.

    Ver Capítulo 7, seção 7.3.
    """
    for name, value in (("d", d), ("k", k), ("r", r)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} deve ser um inteiro ≥ 1; recebi {value!r}.")
    if r > min(d, k):
        raise ValueError(f"O posto r = {r} não pode passar de min(d, k) = {min(d, k)}.")
    return {"sft": d * k, "lora": r * (d + k), "qlora": r * (d + k)}


def draw_update_spaces(d: int = 8, k: int = 6, r: int = 1, figsize=(11.5, 3.4)):
    """Figura dos três espaços de atualização: ΔW inteira (SFT), W + BA (LoRA) e Q(W) + BA (QLoRA).

    Células laranja recebem gradiente; cinza-claro é peso fp32 congelado; cinza-escuro hachurado é
    peso de 4 bits congelado. Cada painel diz quantos números são treinados.
    Ver Capítulo 7, seção 7.3.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    counts = update_space_counts(d, k, r)
    fig, axes = plt.subplots(1, 3, figsize=figsize)
    cell = 0.32
    titles = {
        "sft": f"SFT: ΔW inteira\n{counts['sft']} números treinados",
        "lora": f"LoRA (r = {r}): W congelada + BA\n{counts['lora']} números treinados",
        "qlora": f"QLoRA (r = {r}): Q(W) em 4 bits + BA\n{counts['qlora']} números treinados",
    }
    for ax, method in zip(axes, ("sft", "lora", "qlora")):
        ax.set_title(titles[method], fontsize=10)
        if method == "sft":
            _matrix(ax, 0, 0, d, k, "treinavel", "W  (d × k)", cell)
        else:
            base_kind, hatch = ("congelado", None) if method == "lora" else ("quantizado", "////")
            x = _matrix(ax, 0, 0, d, k, base_kind, "W" if method == "lora" else "Q(W)", cell, hatch)
            ax.text(x + 0.22, d * cell / 2, "+", fontsize=14, ha="center", va="center")
            x = _matrix(ax, x + 0.45, 0, d, r, "treinavel", "B", cell)
            _matrix(ax, x + 0.2, (d - r) * cell, r, k, "treinavel", "A", cell)
        ax.set_xlim(-0.2, k * cell + 0.45 + r * cell + 0.2 + k * cell + 0.2)
        ax.set_ylim(-0.7, d * cell + 0.1)
        ax.set_aspect("equal")
        ax.axis("off")
    handles = [Patch(facecolor=UPDATE_COLORS["treinavel"], label="recebe gradiente (fp32)"),
               Patch(facecolor=UPDATE_COLORS["congelado"], label="congelado (fp32)"),
               Patch(facecolor=UPDATE_COLORS["quantizado"], hatch="////",
                     label="congelado (4 bits)")]
    fig.legend(handles=handles, loc="lower center", ncol=3, frameon=False, fontsize=9)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


# ------------------------------------------- Capítulo 2 e Apêndice B: uma camada de baixo para cima

STACK_COLORS = dict(PALETTE, norma="#fdd0a2", atalho="#ffffff")


def draw_layer_stack(boxes, title: str, repeat: tuple[int, int, str] | None = None,
                     figsize=(8.5, 6.0)):
    """Uma pilha de caixas lida de baixo para cima (o sentido do *forward pass*).

    ``boxes`` é uma sequência de ``(tipo, rótulo, nota)``, da entrada para a saída; o tipo escolhe a
    cor (as de ``PALETTE``, mais ``"norma"`` e ``"atalho"``) e a nota, se houver, vai à direita
    (por exemplo, a seção que escreve a peça). ``repeat = (primeira, última, rótulo)`` cerca as
    caixas que se repetem em cada camada. Cada caixa leva ``gid="caixa"`` e o tipo como ``label``.
    Ver Capítulo 2, seção 2.7, e Apêndice B, seção B.1.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    boxes = list(boxes)
    if not boxes:
        raise ValueError("Nenhuma caixa para desenhar: passe ao menos uma (tipo, rótulo, nota).")
    for kind, *_ in boxes:
        if kind not in STACK_COLORS:
            raise ValueError(f"Tipo de caixa desconhecido: {kind!r}; use um de "
                             f"{sorted(STACK_COLORS)}.")
    if repeat is not None and not 0 <= repeat[0] <= repeat[1] < len(boxes):
        raise ValueError(f"repeat = {repeat!r} não cabe nas {len(boxes)} caixas.")
    step, height, width = 0.62, 0.44, 6.2
    fig, ax = plt.subplots(figsize=figsize)
    for i, (kind, label, note) in enumerate(boxes):
        y = i * step
        ax.add_patch(FancyBboxPatch((0, y), width, height, boxstyle="round,pad=0.03",
                                    fc=STACK_COLORS[kind], ec="0.3", gid="caixa", label=kind))
        ax.text(width / 2, y + height / 2, label, ha="center", va="center", fontsize=10)
        if note:
            ax.text(width + 0.45, y + height / 2, note, va="center", fontsize=9, color="0.35",
                    gid="nota")
        if i:
            ax.annotate("", (width / 2, y), (width / 2, y - (step - height)),
                        arrowprops=dict(arrowstyle="->", color="0.3"))
    if repeat is not None:
        first, last, label = repeat
        y0, y1 = first * step - 0.1, last * step + height + 0.1
        ax.add_patch(FancyBboxPatch((-0.25, y0), width + 0.5, y1 - y0, boxstyle="round,pad=0.02",
                                    fc="none", ec="#c0392b", ls="--", gid="repeticao"))
        ax.text(-0.4, (y0 + y1) / 2, label, rotation=90, va="center", ha="right", color="#c0392b",
                fontsize=10)
    ax.set_xlim(-0.9, width + 2.4)
    ax.set_ylim(-0.2, len(boxes) * step)
    ax.axis("off")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def encoder_layer_boxes(d: int = 384, heads: int = 12,
                        d_ff: int = 1536) -> list[tuple[str, str, str]]:
    """As caixas de uma camada do codificador do Capítulo 2 (o BERT, pós-norm), de baixo para cima.

    Ver Capítulo 2, seção 2.7.
    """
    from .formatting import fmt_int

    return [
        ("entrada", "ids dos tokens (n)", "§2.2"),
        ("embedding", f"embedding: token + posição + segmento → (n, {d})", "§2.3–2.4"),
        ("computacao", f"autoatenção: Q, K, V em {heads} cabeças de {d // heads}, softmax, W_O",
         "§2.5–2.7"),
        ("atalho", "+ atalho (x + atenção(x))", "§2.7"),
        ("norma", "LayerNorm", "§2.10"),
        ("computacao", f"FFN por token: {fmt_int(d)} → {fmt_int(d_ff)} → {fmt_int(d)}, GELU",
         "§2.9"),
        ("atalho", "+ atalho", "§2.7"),
        ("norma", "LayerNorm", "§2.10"),
        ("saida", f"vetores contextuais (n, {d}) → próxima camada", ""),
    ]


# ----------------------------------------------------------------- Capítulo 3: a RoPE e o roteador

def draw_rope_rotation(frequencies=(1.0, 0.25), positions=(0, 1, 2, 3, 4), figsize=(10, 4.2)):
    """Um vetor 2-D (um par de coordenadas de q ou k) girado pela RoPE em várias posições.

    Um painel por frequência ``ω``: na posição ``p`` o par gira ``p·ω`` radianos. Pares de
    frequência alta dão voltas rápidas (distinguem posições vizinhas); os de frequência baixa quase
    não giram (distinguem posições distantes). As setas levam ``gid="posicao"``.
    Ver Capítulo 3, seção 3.4.4.
    """
    import math

    import matplotlib.pyplot as plt

    frequencies, positions = list(frequencies), list(positions)
    if not frequencies or not positions:
        raise ValueError("Passe ao menos uma frequência e uma posição.")
    cmap = plt.get_cmap("viridis")
    fig, axes = plt.subplots(1, len(frequencies), figsize=figsize, squeeze=False)
    base = (1.0, 0.35)
    for ax, omega in zip(axes[0], frequencies):
        for i, p in enumerate(positions):
            angle = p * omega
            c, s = math.cos(angle), math.sin(angle)
            x, y = base[0] * c - base[1] * s, base[0] * s + base[1] * c
            color = cmap(i / max(len(positions) - 1, 1))
            ax.annotate("", (x, y), (0, 0), arrowprops=dict(arrowstyle="-|>", color=color, lw=2),
                        gid="posicao")
            ax.text(1.15 * x, 1.15 * y, f"p = {p}", color=color, ha="center", va="center",
                    fontsize=9)
        circle = plt.Circle((0, 0), math.hypot(*base), fill=False, ls=":", color="0.6")
        ax.add_patch(circle)
        ax.set_xlim(-1.45, 1.45)
        ax.set_ylim(-1.45, 1.45)
        ax.set_aspect("equal")
        ax.axhline(0, color="0.85", lw=0.8)
        ax.axvline(0, color="0.85", lw=0.8)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"par com ω = {omega:g} rad por posição".replace(".", ","), fontsize=10)
    fig.suptitle("RoPE: o mesmo par (x₂ⱼ, x₂ⱼ₊₁) girado por p·ω; o comprimento não muda",
                 fontsize=11)
    fig.tight_layout()
    return fig


def draw_moe_routing(tokens, probs, chosen, gates=None, figsize=(10, 4.2)):
    """O roteamento top-1 de um MoE: cada token, as probabilidades do roteador e o escolhido.

    ``probs`` é ``(T, E)`` (o softmax do roteador) e ``chosen`` a lista do especialista de cada
    token; ``gates`` (opcional), a porta de cada token, escrita na seta. As setas levam
    ``gid="rota"`` e os especialistas ``gid="especialista"`` com a carga no rótulo.
    Ver Capítulo 3, seção 3.8.2.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch, Rectangle

    probs = [[float(p) for p in row] for row in probs]
    tokens, chosen = list(tokens), [int(e) for e in chosen]
    if not (len(tokens) == len(probs) == len(chosen)) or not tokens:
        raise ValueError("tokens, probs e chosen devem ter o mesmo número de linhas "
                         "(uma por token).")
    n_experts = len(probs[0])
    top = max(max(row) for row in probs)                 # a mesma escala para todas as barras
    fig, ax = plt.subplots(figsize=figsize)
    T = len(tokens)
    load = [chosen.count(e) for e in range(n_experts)]
    y_tok = [T - 1 - t for t in range(T)]
    y_exp = [(n_experts - 1 - e) * (T - 1) / max(n_experts - 1, 1) for e in range(n_experts)]
    for t, (token, row) in enumerate(zip(tokens, probs)):
        y = y_tok[t]
        ax.add_patch(FancyBboxPatch((0, y - 0.2), 1.2, 0.4, boxstyle="round,pad=0.02",
                                    fc=PALETTE["embedding"], ec="0.3"))
        ax.text(0.6, y, token, ha="center", va="center", fontsize=10)
        for e, p in enumerate(row):                       # o softmax do roteador, numa escala comum
            ax.add_patch(Rectangle((1.6 + 0.28 * e, y - 0.2), 0.22, 0.45 * p / top, gid="prob",
                                   fc="#e6550d" if e == chosen[t] else "0.75"))
            ax.text(1.6 + 0.28 * e + 0.11, y - 0.24, str(e), ha="center", va="top", fontsize=7,
                    color="0.4")
        ax.text(1.6 + 0.28 * n_experts / 2, y - 0.4, "p(especialista)", ha="center", va="top",
                fontsize=7, color="0.4")
        ax.annotate("", (5.0, y_exp[chosen[t]]), (1.6 + 0.28 * n_experts + 0.1, y),
                    arrowprops=dict(arrowstyle="->", color="#e6550d", lw=1.5), gid="rota")
        if gates is not None:
            mid_x, mid_y = 3.6, (y + y_exp[chosen[t]]) / 2
            ax.text(mid_x, mid_y + 0.08, f"porta {float(gates[t]):.2f}".replace(".", ","),
                    fontsize=8, color="#e6550d", ha="center")
    for e in range(n_experts):
        ax.add_patch(FancyBboxPatch((5.0, y_exp[e] - 0.2), 1.7, 0.4, boxstyle="round,pad=0.02",
                                    fc=PALETTE["computacao"] if load[e] else "#f0f0f0", ec="0.3",
                                    gid="especialista", label=f"carga {load[e]}"))
        ax.text(5.85, y_exp[e], f"especialista {e}: {load[e]} token(s)", ha="center", va="center",
                fontsize=9)
    ax.set_xlim(-0.2, 7.0)
    ax.set_ylim(-0.7, T - 0.4)
    ax.axis("off")
    ax.set_title("Roteamento top-1: o roteador escolhe um especialista por token; os outros não "
                 "calculam nada", fontsize=10)
    fig.tight_layout()
    return fig


def draw_kv_cache_growth(n_layers: int, n_kv_heads: int, head_dim: int, n_prompt: int,
                         n_new: int, bytes_per_value: int = 4, measured: dict | None = None,
                         figsize=(11.5, 3.8)):
    """O que o *KV cache* guarda numa camada e como ele cresce a cada token gerado.

    À esquerda, a camada ℓ: um bloco de K e um de V, uma linha por cabeça de K/V e uma coluna por
    posição (cada célula são ``head_dim`` números); as colunas do prompt entram todas no *prefill*,
    e cada passo de *decode* acrescenta uma (retângulos ``gid="prefill"`` e ``gid="decode"``). À
    direita, os bytes de todas as camadas contra o número de posições guardadas: a reta
    ``2 · camadas · cabeças_KV · d · n · bytes`` (``gid="formula"``) e, se ``measured``
    (``{n: bytes}``) vier, os pontos medidos no cache real (``gid="medido"``).
    Ver Capítulo 4, seção 4.14.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    for name, value in (("n_layers", n_layers), ("n_kv_heads", n_kv_heads), ("head_dim", head_dim),
                        ("n_prompt", n_prompt), ("bytes_per_value", bytes_per_value)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} deve ser um inteiro ≥ 1; recebi {value!r}.")
    if isinstance(n_new, bool) or not isinstance(n_new, int) or n_new < 0:
        raise ValueError(f"n_new deve ser um inteiro ≥ 0; recebi {n_new!r}.")
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=figsize, gridspec_kw={"width_ratios": [1.35, 1]})
    n = n_prompt + n_new
    for block, (label, y0) in enumerate((("K", n_kv_heads + 1.2), ("V", 0.0))):
        ax.text(-0.6, y0 + n_kv_heads / 2, label, ha="right", va="center", fontsize=12,
                weight="bold")
        for h in range(n_kv_heads):
            for p in range(n):
                kind = "prefill" if p < n_prompt else "decode"
                color = PALETTE["embedding"] if kind == "prefill" else "#fdae6b"
                ax.add_patch(Rectangle((p, y0 + n_kv_heads - 1 - h), 0.92, 0.85, gid=kind, fc=color,
                                       ec="0.4"))
            if block == 0:
                ax.text(n + 0.2, y0 + n_kv_heads - 1 - h + 0.42, f"cabeça {h}", va="center",
                        fontsize=8, color="0.35")
    for p in range(n_prompt, n):
        ax.text(p + 0.46, -0.35, f"+{p - n_prompt + 1}", ha="center", va="top", fontsize=8,
                color="#e6550d")
    ax.text(n_prompt / 2, 2 * n_kv_heads + 1.55, f"prefill: {n_prompt} posições do prompt",
            ha="center", fontsize=9, color="#3182bd")
    if n_new:
        ax.text(n_prompt + n_new / 2, 2 * n_kv_heads + 1.55, "decode: +1 coluna\npor token",
                ha="center", fontsize=9, color="#e6550d")
    ax.set_xlim(-1.6, n + 2.4)
    ax.set_ylim(-1.1, 2 * n_kv_heads + 2.4)
    ax.axis("off")
    ax.set_title(f"Uma camada (de {n_layers}): cada célula são {head_dim} números",
                 fontsize=10)

    positions = list(range(0, max([n, *(measured or {})]) + 1))
    per_position = 2 * n_layers * n_kv_heads * head_dim * bytes_per_value
    ax2.plot(positions, [per_position * p / 2**10 for p in positions], color="0.4",
             gid="formula",
             label=f"2 · {n_layers} · {n_kv_heads} · {head_dim} · n · {bytes_per_value} bytes")
    if measured:
        xs = sorted(measured)
        ax2.scatter(xs, [measured[x] / 2**10 for x in xs], color="#e6550d", zorder=3,
                    gid="medido", label="cache real, medido")
    ax2.axvspan(0, n_prompt, color=PALETTE["embedding"], alpha=0.3, lw=0)
    ax2.set_xlabel("posições guardadas (prompt + tokens gerados)")
    ax2.set_ylabel("bytes do cache, todas as camadas (KiB)")
    ax2.set_title("O cache cresce em linha reta com o comprimento", fontsize=10)
    ax2.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def draw_beam_tree(tree, prompt: str, figsize=(11.5, 4.2)):
    """A árvore de ``beam_search.beam_tree``: um nó por candidato, com o token e a soma dos log p.

    A raiz é o prompt; cada coluna é um passo. Os candidatos mantidos (entre os ``num_beams``
    melhores do passo) ficam em azul, ligados por linha cheia ao feixe de onde saíram
    (``gid="mantido"``); os podados, em cinza, com linha tracejada (``gid="podado"``). O melhor do
    último passo fica em negrito.
    Ver Capítulo 4, seção 4.12.
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    kept_y = {0: 0.0}                     # posição y de cada feixe mantido, pela ordem
    ax.text(0, 0, prompt, ha="right", va="center", fontsize=9,
            bbox=dict(boxstyle="round", fc=PALETTE["entrada"], ec="0.4"))
    for step, nodes in enumerate(tree, start=1):
        ys = [(len(nodes) - 1) / 2 - i for i in range(len(nodes))]
        new_kept = {}
        for node, y in zip(nodes, ys):
            kept = node.rank is not None
            line = ax.plot([step - 1 + 0.08, step - 0.08], [kept_y[node.parent], y],
                           color="tab:blue" if kept else "0.7", ls="-" if kept else "--",
                           lw=1.4 if kept else 1)
            line[0].set_gid("mantido" if kept else "podado")
            best = kept and node.rank == 0 and step == len(tree)
            ax.text(step, y, f"{node.token!r}\n{node.total:.2f}", ha="center", va="center",
                    fontsize=8, fontweight="bold" if best else "normal",
                    bbox=dict(boxstyle="round", fc=PALETTE["embedding"] if kept else "white",
                              ec="tab:blue" if kept else "0.7"))
            if kept:
                new_kept[node.rank] = y
        kept_y = new_kept
    height = max(len(nodes) for nodes in tree)
    ax.set_xlim(-2.2, len(tree) + 0.6)
    ax.set_ylim(-height / 2 - 0.3, height / 2 + 0.3)
    ax.set_xticks(range(1, len(tree) + 1), [f"passo {t}" for t in range(1, len(tree) + 1)])
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig
