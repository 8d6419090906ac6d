"""Figuras do curso: mapas de atenção com rótulos e projeções PCA de vetores de tokens."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch


def _as_numpy(values) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        return values.detach().to("cpu", torch.float64).numpy()
    return np.asarray(values, dtype=np.float64)


def plot_attention(
    weights,
    tokens: Sequence[str],
    query_tokens: Sequence[str] | None = None,
    ax=None,
    title: str | None = None,
    annotate: bool | None = None,
    cmap: str = "viridis",
    vmin: float | None = 0.0,
    vmax: float | None = None,
    colorbar_label: str = "peso de atenção",
):
    """Desenha um mapa de calor de atenção ``(n_query, n_key)`` com os tokens nos eixos.

    Linhas são *queries* (quem olha) e colunas são *keys* (para quem se olha). Com
    até 12 tokens os valores são escritos nas células. Devolve o ``Axes``.
    Ver Capítulo 2, seção 2.5.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    matrix = _as_numpy(weights)
    if matrix.ndim != 2:
        raise ValueError(
            f"plot_attention espera uma matriz (n_query, n_key); recebi forma {matrix.shape}. "
            "Escolha uma camada e uma cabeça, por exemplo attentions[0][0, 3]."
        )
    rows = list(query_tokens) if query_tokens is not None else list(tokens)
    if matrix.shape != (len(rows), len(tokens)):
        raise ValueError(
            f"A matriz tem forma {matrix.shape}, mas há {len(rows)} rótulos de query e "
            f"{len(tokens)} rótulos de key."
        )
    if annotate is None:
        annotate = max(matrix.shape) <= 12
    if ax is None:
        side = 0.55 * max(matrix.shape) + 2.5
        _, ax = plt.subplots(figsize=(side + 1.2, side))
    sns.heatmap(
        matrix,
        ax=ax,
        cmap=cmap,
        vmin=vmin,
        vmax=vmax,
        square=True,
        annot=annotate,
        fmt=".2f",
        annot_kws={"fontsize": 8},
        xticklabels=list(tokens),
        yticklabels=rows,
        linewidths=0.3,
        linecolor="white",
        cbar_kws={"label": colorbar_label, "shrink": 0.8},
    )
    ax.set_xlabel("key (token observado)")
    ax.set_ylabel("query (token que olha)")
    ax.tick_params(axis="x", rotation=45)
    ax.tick_params(axis="y", rotation=0)
    if title:
        ax.set_title(title)
    return ax


def pca_2d(vectors) -> np.ndarray:
    """Projeta vetores ``(n, d)`` nas duas primeiras componentes principais (sinal determinístico).

    Ver Capítulo 2, seção 2.4.
    """
    from sklearn.decomposition import PCA

    data = _as_numpy(vectors)
    if data.ndim != 2 or data.shape[0] < 2:
        raise ValueError(f"pca_2d espera uma matriz (n ≥ 2, d); recebi forma {data.shape}.")
    return PCA(n_components=2, svd_solver="full").fit_transform(data)


# Lugares tentados para o rótulo de cada ponto, em ordem de preferência: deslocamento (pontos
# tipográficos) a partir do ponto e alinhamento horizontal do texto.
_LABEL_SPOTS = [
    (7, 4, "left"), (7, -13, "left"), (-7, 4, "right"), (-7, -13, "right"),
    (7, 17, "left"), (-7, 17, "right"), (7, -26, "left"), (-7, -26, "right"),
    (7, 30, "left"), (-7, 30, "right"), (7, -39, "left"), (-7, -39, "right"),
]


def _overlap_area(a, b) -> float:
    """Área da interseção de duas caixas (``Bbox``) em pixels; 0 quando não se tocam."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(width, 0.0) * max(height, 0.0)


def label_boxes_overlap(ax) -> list[tuple[int, int]]:
    """Pares ``(i, j)`` de textos de ``ax`` cujas caixas na figura se sobrepõem (lista vazia:
    nenhum).

    Serve para conferir que rótulos de um gráfico não ficaram uns sobre os outros.
    Ver Capítulo 2, seção 2.4.
    """
    renderer = ax.figure.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    return [
        (i, j)
        for i in range(len(boxes))
        for j in range(i + 1, len(boxes))
        if _overlap_area(boxes[i], boxes[j]) > 0
    ]


def _place_labels(ax, coords: np.ndarray, texts: Sequence[str], marker_size: float,
                  fontsize: float):
    """Rotula cada ponto no primeiro lugar livre de ``_LABEL_SPOTS``.

    Um lugar é livre quando a caixa do rótulo não encosta em rótulo já posto nem no marcador de
    outro ponto. Se nenhum estiver livre, fica o de menor sobreposição (rótulos pesam mais que
    marcadores).
    """
    from matplotlib.transforms import Bbox

    ax.figure.canvas.draw()  # fixa limites e tamanho dos eixos: as caixas saem em pixels finais
    renderer = ax.figure.canvas.get_renderer()
    centers = ax.transData.transform(coords)
    radius = 0.5 * np.sqrt(marker_size) * ax.figure.dpi / 72 + 1.0
    markers = [Bbox.from_extents(x - radius, y - radius, x + radius, y + radius)
               for x, y in centers]
    placed = []
    for i, ((x, y), text) in enumerate(zip(coords, texts)):
        note = ax.annotate(text, (x, y), textcoords="offset points", xytext=_LABEL_SPOTS[0][:2],
                           fontsize=fontsize)
        best = None
        for dx, dy, align in _LABEL_SPOTS:
            note.xyann = (dx, dy)
            note.set_horizontalalignment(align)
            box = note.get_window_extent(renderer)
            cost = 100.0 * sum(_overlap_area(box, other) for other in placed)
            cost += sum(_overlap_area(box, m) for j, m in enumerate(markers) if j != i)
            if best is None or cost < best[0]:
                best = (cost, dx, dy, align, box)
            if cost == 0:
                break
        _, dx, dy, align, box = best
        note.xyann = (dx, dy)
        note.set_horizontalalignment(align)
        placed.append(box)


def plot_pca(vectors, labels: Sequence[str], ax=None, title: str | None = None,
             index_labels: bool = True):
    """Dispersão 2-D (PCA) de vetores de tokens, cada ponto rotulado com ``índice:token``.

    Rótulos que cairiam uns sobre os outros (pontos próximos na projeção) são levados para outro
    lado do ponto. Devolve ``(ax, coordenadas)``, com as coordenadas ``(n, 2)`` usadas no gráfico.
    Ver Capítulo 2, seção 2.4.
    """
    import matplotlib.pyplot as plt

    coords = pca_2d(vectors)
    if len(labels) != coords.shape[0]:
        raise ValueError(f"Há {coords.shape[0]} vetores e {len(labels)} rótulos.")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5.5))
    special = [lab.startswith("[") and lab.endswith("]") for lab in labels]
    colors = ["tab:red" if s else "tab:blue" for s in special]
    marker_size = 60
    ax.scatter(coords[:, 0], coords[:, 1], c=colors, s=marker_size, zorder=3)
    ax.axhline(0, color="0.85", lw=0.8, zorder=1)
    ax.axvline(0, color="0.85", lw=0.8, zorder=1)
    ax.set_xlabel("PC1")
    ax.set_ylabel("PC2")
    ax.margins(0.15)
    if title:
        ax.set_title(title)
    texts = [f"{i}:{lab}" if index_labels else lab for i, lab in enumerate(labels)]
    _place_labels(ax, coords, texts, marker_size=marker_size, fontsize=10)
    return ax, coords
