"""Testes de lncc_llm.diagrams: a Figura 4.1 tem as três faixas, as caixas certas e a máscara certa."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from lncc_llm import architecture_panels, draw_architecture_comparison  # noqa: E402
from lncc_llm.diagrams import PALETTE, Panel  # noqa: E402


def _boxes(ax):
    """(tipo, cor, x à esquerda) de cada caixa, da esquerda para a direita."""
    boxes = [p for p in ax.patches if p.get_gid() == "caixa"]
    return sorted(((b.get_label(), to_hex(b.get_facecolor()), b.get_x()) for b in boxes), key=lambda t: t[2])


def _labels(ax):
    texts = [t for t in ax.texts if t.get_gid() == "rotulo"]
    return [t.get_text() for t in sorted(texts, key=lambda t: t.get_position()[0])]


def _mask(ax):
    cells = [p for p in ax.patches if p.get_gid() in ("mascara-aberta", "mascara-bloqueada")]
    return cells, [p for p in cells if p.get_gid() == "mascara-bloqueada"]


@pytest.fixture(scope="module")
def figure():
    fig = draw_architecture_comparison()
    yield fig
    plt.close(fig)


def test_three_panels_in_the_text_order(figure):
    assert isinstance(figure, Figure)
    titles = [ax.get_title(loc="left") for ax in figure.axes]
    assert len(titles) == 3
    assert "Transformer" in titles[0] and "BERT" in titles[1] and "GPT-2" in titles[2]
    assert "bidirecional" in titles[1] and "causal" in titles[2]


def test_boxes_follow_the_forward_pass_with_the_text_colours(figure):
    expected_kinds = ["entrada", "embedding"] + ["computacao"] * 4 + ["saida"]
    for ax in figure.axes:
        boxes = _boxes(ax)
        assert [kind for kind, _, _ in boxes] == expected_kinds
        assert all(colour == PALETTE[kind] for kind, colour, _ in boxes)
        # cinza, azul, verde, amarelo: as cores da leitura dos diagramas (seção 4.3.1)
        assert len(set(PALETTE.values())) == 4
        flows = [p for p in ax.patches if p.get_gid() == "fluxo"]
        assert len(flows) == len(boxes) - 1
        assert len([p for p in ax.patches if p.get_gid() == "residual"]) == 2


def test_each_model_has_its_own_input_attention_and_head(figure):
    generic, bert, gpt2 = (_labels(ax) for ax in figure.axes)
    assert "segmento" in bert[1] and "segmento" not in gpt2[1]        # só o BERT soma o segmento
    assert "wte + wpe" in gpt2[1]
    assert "bidirecional" in bert[2] and "causal" in gpt2[2]
    assert "MLM" in bert[-1] and "lm_head" in gpt2[-1] and "hidden states" in generic[-1]
    assert "Add & Norm" in bert and "Add & Norm" not in gpt2           # GPT-2 é pré-norm
    repeats = [[t.get_text() for t in ax.texts if t.get_gid() == "repeticao"] for ax in figure.axes]
    assert repeats == [["N× blocos iguais"], ["Codificador ×12"], ["Decodificador ×12"]]


def test_causal_mask_only_in_gpt2_and_lower_triangular(figure):
    size = 4
    for ax, causal in zip(figure.axes, (False, False, True)):
        cells, blocked = _mask(ax)
        assert len(cells) == size * size
        if not causal:
            assert blocked == []
            continue
        assert len(blocked) == size * (size - 1) // 2
        # linha i de cima para baixo, coluna j da esquerda para a direita: bloqueada exatamente quando j > i
        xs = sorted({round(c.get_x(), 6) for c in cells})
        ys = sorted({round(c.get_y(), 6) for c in cells}, reverse=True)
        for cell in cells:
            i, j = ys.index(round(cell.get_y(), 6)), xs.index(round(cell.get_x(), 6))
            assert (cell.get_gid() == "mascara-bloqueada") == (j > i)


def test_panels_spec_and_validation():
    panels = architecture_panels()
    assert [p.causal for p in panels] == [False, False, True]
    fig = draw_architecture_comparison(panels[2:], mask_size=3)
    assert len(fig.axes) == 1 and len(_mask(fig.axes[0])[1]) == 3
    plt.close(fig)
    bad = Panel("x", (("entrada", "a"), ("cor-errada", "b")), "×1", False, "")
    with pytest.raises(ValueError, match="desconhecido"):
        draw_architecture_comparison([bad])
    with pytest.raises(ValueError, match="mask_size"):
        draw_architecture_comparison(mask_size=1)
    with pytest.raises(ValueError, match="Nenhuma faixa"):
        draw_architecture_comparison([])
    plt.close("all")


def test_update_spaces_colour_exactly_the_trainable_numbers():
    from lncc_llm.diagrams import draw_update_spaces, update_space_counts

    assert update_space_counts(576, 576, 8) == {"sft": 331_776, "lora": 9_216, "qlora": 9_216}
    with pytest.raises(ValueError, match="posto"):
        update_space_counts(3, 2, 3)
    fig = draw_update_spaces(d=8, k=6, r=2)
    try:
        kinds = [[p.get_gid() for p in ax.patches] for ax in fig.axes]
        assert [k.count("treinavel") for k in kinds] == [48, 2 * (8 + 6), 2 * (8 + 6)]
        assert [k.count("congelado") for k in kinds] == [0, 48, 0]
        assert [k.count("quantizado") for k in kinds] == [0, 0, 48]
    finally:
        plt.close(fig)


# ------------------------------------------------ as figuras conceituais dos Capítulos 2 e 3 e do Apêndice B
def test_layer_stack_draws_every_box_bottom_up_and_the_repeat():
    from lncc_llm.diagrams import STACK_COLORS, draw_layer_stack, encoder_layer_boxes

    boxes = encoder_layer_boxes()
    fig = draw_layer_stack(boxes, "camada", repeat=(2, 7, "× 6 camadas"))
    ax = fig.axes[0]
    drawn = sorted((p for p in ax.patches if p.get_gid() == "caixa"), key=lambda p: p.get_y())
    assert [p.get_label() for p in drawn] == [kind for kind, _, _ in boxes]
    assert all(to_hex(p.get_facecolor()) == STACK_COLORS[p.get_label()] for p in drawn)
    frames = [p for p in ax.patches if p.get_gid() == "repeticao"]
    assert len(frames) == 1
    right_edge = frames[0].get_x() + frames[0].get_width() + 0.05      # mais o arredondamento do canto
    assert all(t.get_position()[0] > right_edge for t in ax.texts if t.get_gid() == "nota")
    texts = [t.get_text() for t in ax.texts]
    assert "× 6 camadas" in texts and any("12 cabeças de 32" in t for t in texts)
    plt.close(fig)
    with pytest.raises(ValueError, match="desconhecido"):
        draw_layer_stack([("cubo", "x", "")], "t")
    with pytest.raises(ValueError, match="não cabe"):
        draw_layer_stack(boxes, "t", repeat=(2, 40, "x"))


def test_rope_rotation_keeps_the_length_and_turns_by_p_omega():
    import math

    from lncc_llm.diagrams import draw_rope_rotation

    fig = draw_rope_rotation(frequencies=(1.0, 0.25), positions=(0, 1, 3))
    for ax, omega in zip(fig.axes, (1.0, 0.25)):
        arrows = [a for a in ax.texts if a.get_gid() == "posicao"]
        assert len(arrows) == 3
        ends = [a.xy for a in arrows]
        lengths = [math.hypot(*e) for e in ends]
        assert max(lengths) - min(lengths) < 1e-12                  # girar não muda o comprimento
        angles = [math.atan2(e[1], e[0]) for e in ends]
        turn = (angles[2] - angles[0]) % (2 * math.pi)
        assert math.isclose(turn, (3 * omega) % (2 * math.pi), abs_tol=1e-9)
    plt.close(fig)


def test_moe_routing_draws_one_route_per_token_and_the_load():
    from lncc_llm.diagrams import draw_moe_routing

    probs = [[0.1, 0.6, 0.2, 0.1], [0.5, 0.2, 0.2, 0.1], [0.1, 0.7, 0.1, 0.1]]
    fig = draw_moe_routing(["a", "b", "c"], probs, [1, 0, 1], gates=[0.6, 0.5, 0.7])
    ax = fig.axes[0]
    assert len([a for a in ax.texts if a.get_gid() == "rota"]) == 3
    experts = sorted((p for p in ax.patches if p.get_gid() == "especialista"), key=lambda p: -p.get_y())
    assert [p.get_label() for p in experts] == ["carga 1", "carga 2", "carga 0", "carga 0"]
    assert len([p for p in ax.patches if p.get_gid() == "prob"]) == 12
    plt.close(fig)
    with pytest.raises(ValueError, match="mesmo número"):
        draw_moe_routing(["a"], probs, [1, 0, 1])


def test_kv_cache_growth_draws_one_cell_per_head_and_position_and_the_formula():
    from lncc_llm.diagrams import draw_kv_cache_growth

    fig = draw_kv_cache_growth(n_layers=30, n_kv_heads=3, head_dim=64, n_prompt=5, n_new=3,
                               bytes_per_value=4, measured={5: 5 * 46080, 8: 8 * 46080})
    ax, ax2 = fig.axes
    prefill = [p for p in ax.patches if p.get_gid() == "prefill"]
    decode = [p for p in ax.patches if p.get_gid() == "decode"]
    assert len(prefill) == 2 * 3 * 5 and len(decode) == 2 * 3 * 3      # K e V, 3 cabeças, 5 + 3 posições
    assert min(p.get_x() for p in decode) == 5                            # o decode começa depois do prompt
    (line,) = [ln for ln in ax2.lines if ln.get_gid() == "formula"]
    xs, ys = line.get_data()
    assert ys[1] * 2**10 == 2 * 30 * 3 * 64 * 4                          # 46 080 bytes por posição
    assert list(xs) == list(range(9))
    (points,) = [c for c in ax2.collections if c.get_gid() == "medido"]
    assert points.get_offsets().tolist() == [[5, 5 * 45], [8, 8 * 45]]    # KiB
    plt.close(fig)
    with pytest.raises(ValueError, match="n_new"):
        draw_kv_cache_growth(30, 3, 64, 5, -1)
    with pytest.raises(ValueError, match="n_prompt"):
        draw_kv_cache_growth(30, 3, 64, 0, 2)
