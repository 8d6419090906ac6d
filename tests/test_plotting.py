"""Testes de lncc_llm.plotting: rótulos, anotações e a projeção PCA."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402

from lncc_llm import pca_2d, plot_attention, plot_pca  # noqa: E402
from lncc_llm.plotting import label_boxes_overlap  # noqa: E402

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


# Um aglomerado de pontos quase coincidentes (como os dois "a" e o [SEP] do Capítulo 2), mais
# pontos isolados: com um deslocamento fixo, os rótulos do aglomerado cairiam uns sobre os outros.
CLUSTER = np.array([
    [0.0, 0.0], [0.01, 0.0], [5.0, 5.0], [0.0, 0.01], [5.0, -5.0], [-5.0, 4.0],
    [0.02, 0.02], [-0.01, 0.01], [0.3, -0.1],
])


def test_plot_pca_labels_never_overlap():
    labels = ["a", "[SEP]", "cute", "a", "book", "teddy", ".", "reading", "is"]
    ax, _ = plot_pca(CLUSTER, labels)
    assert label_boxes_overlap(ax) == []
    # cada rótulo continua perto do seu ponto (no máximo ~3 linhas de texto de distância)
    assert all(abs(t.xyann[0]) <= 7 and abs(t.xyann[1]) <= 40 for t in ax.texts)
    plt.close("all")


def test_plot_pca_keeps_isolated_labels_at_the_default_spot():
    ax, _ = plot_pca(CLUSTER, [str(i) for i in range(len(CLUSTER))])
    for i in (2, 4, 5):  # pontos isolados: rótulo à direita e acima, como sempre
        assert ax.texts[i].xyann == (7, 4) and ax.texts[i].get_horizontalalignment() == "left"
    moved = [t.xyann for t in ax.texts[:2]]
    assert moved[0] != moved[1]  # dois pontos quase iguais: rótulos em lugares diferentes
    plt.close("all")


def test_label_boxes_overlap_finds_colliding_texts():
    _, ax = plt.subplots()
    ax.text(0.5, 0.5, "10:[SEP]")
    ax.text(0.5, 0.5, "7:a")
    ax.text(0.1, 0.1, "longe")
    assert label_boxes_overlap(ax) == [(0, 1)]
    plt.close("all")
