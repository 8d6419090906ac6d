"""Testes de lncc_llm.widgets: as vistas puras e os exploradores, sem navegador."""
import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from lncc_llm import widgets as wd  # noqa: E402
from lncc_llm.sampling import entropy, top_p_filter  # noqa: E402

TOKENS = ["[CLS]", "a", "teddy", "bear", "[SEP]"]


@pytest.fixture()
def attentions():
    gen = torch.Generator().manual_seed(0)
    return tuple(torch.softmax(torch.randn(1, 3, 5, 5, generator=gen), dim=-1) for _ in range(2))


class FakeTokenizer:
    def decode(self, ids):
        return f"t{ids[0]}"


def test_attention_view_reads_the_right_head_and_sorts_the_row(attentions):
    view = wd.attention_view(attentions, TOKENS, layer=1, head=2, query=2, k=3)
    assert np.array_equal(view.matrix, attentions[1][0, 2].numpy())
    row = attentions[1][0, 2, 2]
    assert [pos for pos, _, _ in view.top] == torch.topk(row, 3).indices.tolist()
    assert view.top[0][1] == TOKENS[view.top[0][0]] and view.top[0][2] == pytest.approx(row.max().item())
    with pytest.raises(ValueError, match="Camada 2"):
        wd.attention_view(attentions, TOKENS, layer=2, head=0)
    with pytest.raises(ValueError, match="Cabeça 3"):
        wd.attention_view(attentions, TOKENS, layer=0, head=3)


def test_next_token_view_matches_the_sampling_functions():
    z = torch.tensor([2.0, 1.5, 1.0, 0.0, -1.0, -3.0])
    view = wd.next_token_view(z, FakeTokenizer(), temperature=0.7, top_p=0.8, k=4)
    p = torch.softmax(z.double() / 0.7, dim=-1)
    assert view.probs == pytest.approx(torch.sort(p, descending=True).values[:4].tolist())
    assert view.nucleus_size == len(top_p_filter(z, 0.8, temperature=0.7).indices)
    assert view.entropy == pytest.approx(float(entropy(p)))
    assert view.entropy_cut < view.entropy and view.entropy_cut <= math.log(view.nucleus_size) + 1e-9
    assert view.in_nucleus == [i < view.nucleus_size for i in range(4)]
    assert view.tokens == ["t0", "t1", "t2", "t3"]
    with_k = wd.next_token_view(z, FakeTokenizer(), temperature=0.7, top_p=0.8, k=4, top_k=1)
    assert with_k.nucleus_size == 1 and with_k.in_nucleus == [True, False, False, False]
    assert wd.next_token_view(z, FakeTokenizer(), 0.7, 0.8, k=4, top_k=0).nucleus_size == view.nucleus_size
    with pytest.raises(ValueError):
        wd.next_token_view(z, FakeTokenizer(), temperature=0.0, top_p=0.8)


def test_attention_explorer_callback_gives_the_static_figure_data(attentions):
    explorer = wd.attention_explorer(attentions, TOKENS, query=2)
    box = explorer.widget()                          # monta controles e figura, sem navegador
    assert len(box.children) == 2
    explorer.controls["layer"].value = 1             # o que um clique no menu faz
    explorer.controls["head"].value = 2
    static = wd.attention_view(attentions, TOKENS, 1, 2, query=2)
    assert (explorer.view.layer, explorer.view.head) == (1, 2)
    assert np.array_equal(explorer.view.matrix, static.matrix) and explorer.view.top == static.top
    heatmap = explorer.figure.axes[0].collections[0].get_array()
    assert np.allclose(np.asarray(heatmap).reshape(5, 5), static.matrix)


def test_next_token_explorer_callback_and_static_fallback(capsys):
    z = torch.linspace(3, -3, 40)
    explorer = wd.next_token_explorer(z, FakeTokenizer(), temperature=1.0, top_p=0.9, k=10)
    explorer.widget()
    explorer.controls["top_p"].value = 0.5
    direct = wd.next_token_view(z, FakeTokenizer(), 1.0, 0.5, k=10)
    assert explorer.view.nucleus_size == direct.nucleus_size
    explorer.controls["top_k"].value = 3                        # o top-k corta antes do top-p
    assert explorer.view.nucleus_size == wd.next_token_view(z, FakeTokenizer(), 1.0, 0.5, k=10, top_k=3).nucleus_size
    bars = [patch.get_height() for patch in explorer.figure.axes[0].patches]
    assert bars == pytest.approx(direct.probs)
    static = wd.next_token_explorer(z, FakeTokenizer())
    assert static.show(interactive=False) is None          # nada a mais para o notebook exibir
    assert static.figure is not None and "interativa" in capsys.readouterr().out


def test_interactive_show_displays_a_widget_not_a_static_figure(attentions):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()          # um shell do IPython, como o do kernel, para o display publicar
    with capture_output() as captured:
        assert wd.attention_explorer(attentions, TOKENS).show(interactive=True) is None
    # fora de um kernel, a figura que o widget Output capturaria também aparece aqui: basta haver o widget
    assert any("application/vnd.jupyter.widget-view+json" in out.data for out in captured.outputs)
    assert "interativa" not in captured.stdout


def test_slider_drag_redraws_once_not_at_every_intermediate_value():
    """Issue 34: arrastar o τ no JupyterLab redesenhava a figura a cada valor intermediário (30 s de
    atraso). Os sliders só avisam ao soltar (``continuous_update=False``): um arrasto, um redesenho."""
    z = torch.linspace(3, -3, 40)
    explorer = wd.next_token_explorer(z, FakeTokenizer(), k=10)
    explorer.widget()
    for control in explorer.controls.values():
        if hasattr(control, "continuous_update"):
            assert control.continuous_update is False, control.description
    chamadas = []
    original = explorer._draw
    explorer._draw = lambda view, fig=None: chamadas.append(view) or original(view, fig=fig)
    explorer.controls["temperature"].value = 0.45
    assert len(chamadas) == 1
