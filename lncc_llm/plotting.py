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

    Ver Capítulo 2, seção 2.4.7.
    """
    from sklearn.decomposition import PCA

    data = _as_numpy(vectors)
    if data.ndim != 2 or data.shape[0] < 2:
        raise ValueError(f"pca_2d espera uma matriz (n ≥ 2, d); recebi forma {data.shape}.")
    return PCA(n_components=2, svd_solver="full").fit_transform(data)


def plot_pca(vectors, labels: Sequence[str], ax=None, title: str | None = None, index_labels: bool = True):
    """Dispersão 2-D (PCA) de vetores de tokens, cada ponto rotulado com ``índice:token``.

    Devolve ``(ax, coordenadas)``, com as coordenadas ``(n, 2)`` usadas no gráfico.
    Ver Capítulo 2, seção 2.4.7.
    """
    import matplotlib.pyplot as plt

    coords = pca_2d(vectors)
    if len(labels) != coords.shape[0]:
        raise ValueError(f"Há {coords.shape[0]} vetores e {len(labels)} rótulos.")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 5.5))
    special = [lab.startswith("[") and lab.endswith("]") for lab in labels]
    colors = ["tab:red" if s else "tab:blue" for s in special]
    ax.scatter(coords[:, 0], coords[:, 1], c=colors, s=60, zorder=3)
    # Rótulos de pontos quase coincidentes descem alguns pontos, para não se sobreporem.
    span = np.ptp(coords, axis=0)
    scaled = coords / np.where(span > 0, span, 1.0)
    for i, (x, y) in enumerate(coords):
        text = f"{i}:{labels[i]}" if index_labels else labels[i]
        crowd = int(np.sum(np.linalg.norm(scaled[:i] - scaled[i], axis=1) < 0.06))
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(7, 4 - 12 * crowd), fontsize=10)
    ax.axhline(0, color="0.85", lw=0.8, zorder=1)
    ax.axvline(0, color="0.85", lw=0.8, zorder=1)
    ax.set_xlabel("PC1")
    ax.set_ylabel("PC2")
    ax.margins(0.15)
    if title:
        ax.set_title(title)
    return ax, coords
