"""Testes de lncc_llm.plotting: rótulos, anotações e a projeção PCA."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402

from lncc_llm import pca_2d, plot_attention, plot_pca  # noqa: E402

TOKENS = ["[CLS]", "a", "cute", "teddy", "[SEP]"]


def test_plot_attention_labels_axes_and_annotates():
    weights = torch.softmax(torch.randn(5, 5, generator=torch.Generator().manual_seed(0)), dim=-1)
    ax = plot_attention(weights, TOKENS, title="camada 0, cabeça 0")
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS
    cells = [t.get_text() for t in ax.texts]
    assert len(cells) == 25 and cells[0] == f"{weights[0, 0].item():.2f}"
    assert ax.get_title() == "camada 0, cabeça 0" and "query" in ax.get_ylabel()
    plt.close("all")


def test_plot_attention_rejects_wrong_shapes():
    with pytest.raises(ValueError, match="camada e uma cabeça"):
        plot_attention(torch.rand(2, 5, 5), TOKENS)
    with pytest.raises(ValueError, match="rótulos"):
        plot_attention(torch.rand(5, 5), TOKENS[:4])
    plt.close("all")


def test_pca_2d_matches_sklearn_and_is_centered():
    data = np.random.default_rng(0).normal(size=(11, 384))
    coords = pca_2d(data)
    ref = PCA(n_components=2, svd_solver="full").fit_transform(data)
    assert coords.shape == (11, 2) and np.allclose(coords, ref)
    assert np.allclose(coords.mean(axis=0), 0, atol=1e-9)
    assert np.allclose(pca_2d(torch.tensor(data)), coords)  # tensores também servem
    with pytest.raises(ValueError, match="n ≥ 2"):
        pca_2d(np.ones(5))


def test_plot_pca_labels_each_point_with_index():
    data = np.random.default_rng(1).normal(size=(5, 8))
    ax, coords = plot_pca(data, TOKENS)
    assert [t.get_text() for t in ax.texts] == [f"{i}:{tok}" for i, tok in enumerate(TOKENS)]
    assert np.allclose(ax.collections[0].get_offsets(), coords)
    with pytest.raises(ValueError, match="rótulos"):
        plot_pca(data, TOKENS[:3])
    plt.close("all")


def test_plot_pca_separates_labels_of_nearby_points():
    data = np.array([[0.0, 0.0], [0.01, 0.0], [5.0, 5.0], [0.0, 0.01], [5.0, -5.0], [-5.0, 4.0]])
    ax, _ = plot_pca(data, ["x", "y", "z", "w", "u", "v"])
    heights = [t.xyann[1] for t in ax.texts]
    assert len({heights[0], heights[1], heights[3]}) == 3  # três pontos juntos, três alturas
    assert heights[2] == heights[0]  # o ponto isolado fica na altura padrão
    plt.close("all")
