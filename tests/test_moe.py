"""Testes de lncc_llm.moe: roteamento top-k, carga, perda de balanceamento e contagem de parâmetros."""
import pytest
import torch

from lncc_llm.moe import (
    FeedForward,
    MoELayer,
    balance_loss,
    count_parameters,
    expert_load,
    load_deviation,
    load_fractions,
    max_load_ratio,
    moe_parameter_counts,
    top_k_route,
)


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_routing_shapes_gates_and_load(k):
    T, E = 50, 6
    logits = torch.randn(T, E, generator=_gen(k))
    r = top_k_route(logits, k, gate="renormalizado")
    assert r.probs.shape == (T, E) and r.indices.shape == (T, k) and r.gates.shape == (T, k)
    assert torch.allclose(r.probs.sum(-1), torch.ones(T))
    assert torch.allclose(r.gates.sum(-1), torch.ones(T))
    assert torch.all(r.gates >= 0)
    # Os escolhidos são os k de maior probabilidade, em ordem, e os gates guardam as proporções.
    assert torch.equal(r.indices, r.probs.argsort(-1, descending=True)[:, :k])
    chosen = r.probs.gather(-1, r.indices)
    assert torch.allclose(r.gates, chosen / chosen.sum(-1, keepdim=True))
    assert r.load.shape == (E,) and r.load.sum().item() == T * k
    for e in range(E):
        assert r.load[e].item() == int((r.indices == e).sum())


def test_top1_argmax_and_switch_gate():
    logits = torch.tensor([[0.1, 2.0, -1.0, 0.0], [3.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]])
    r = top_k_route(logits, 1)
    assert r.indices[:, 0].tolist() == [1, 0, 1]
    # Switch: a porta é a probabilidade do escolhido, sem renormalizar (e < 1 aqui).
    expected = torch.softmax(logits, -1).max(-1).values[:, None]
    assert torch.allclose(r.gates, expected) and torch.all(r.gates < 1)
    assert torch.equal(top_k_route(logits, 1, gate="renormalizado").gates, torch.ones(3, 1))
    assert r.load.tolist() == [1, 2, 0, 0]


def test_auto_gate_is_switch_for_k1_and_renormalized_for_k2():
    logits = torch.randn(9, 5, generator=_gen(20))
    probs = torch.softmax(logits, -1)
    top2 = probs.topk(2, -1).values
    assert torch.allclose(top_k_route(logits, 2).gates, top2 / top2.sum(-1, keepdim=True))
    assert torch.allclose(top_k_route(logits, 2, gate="switch").gates, top2)
    assert torch.allclose(top_k_route(logits, 1).gates, top2[:, :1])


def test_switch_gate_lets_the_task_loss_reach_the_router():
    """Com k = 1, só a porta do Switch passa gradiente da perda da tarefa ao roteador."""
    x = torch.randn(16, 4, generator=_gen(21), dtype=torch.float64)
    target = torch.randn(16, 4, generator=_gen(22), dtype=torch.float64)
    grads = {}
    for gate in ("switch", "renormalizado"):
        layer = MoELayer(4, 8, 4, k=1, generator=_gen(23), gate=gate).double()
        out, _ = layer(x)
        ((out - target) ** 2).mean().backward()
        grads[gate] = layer.router.weight.grad
    assert grads["switch"].abs().max() > 1e-4
    assert grads["renormalizado"].abs().max() < 1e-12 * grads["switch"].abs().max()  # só arredondamento


def test_moe_layer_shapes_and_load():
    layer = MoELayer(d_model=8, d_ff=16, n_experts=4, k=2, generator=_gen(1))
    x = torch.randn(3, 5, 8, generator=_gen(2))
    out, r = layer(x)
    assert out.shape == x.shape
    assert r.probs.shape == (15, 4) and r.load.sum().item() == 15 * 2


def test_moe_output_is_gated_sum_of_chosen_experts():
    layer = MoELayer(d_model=4, d_ff=16, n_experts=4, k=2, generator=_gen(3))
    x = torch.randn(7, 4, generator=_gen(4))
    with torch.no_grad():
        out, r = layer(x)
        for t in range(7):
            expected = sum(r.gates[t, s] * layer.experts[int(r.indices[t, s])](x[t]) for s in range(2))
            assert torch.allclose(out[t], expected, atol=1e-6)


def test_top1_moe_with_identical_experts_equals_dense_ffn():
    dense = FeedForward(6, 24)
    with torch.no_grad():
        for p in dense.parameters():
            p.copy_(torch.randn(p.shape, generator=_gen(5)))
    layer = MoELayer(d_model=6, d_ff=24, n_experts=5, k=1, generator=_gen(6),
                     gate="renormalizado")
    for expert in layer.experts:
        expert.load_state_dict(dense.state_dict())
    x = torch.randn(40, 6, generator=_gen(7))
    with torch.no_grad():
        out, r = layer(x)
        assert torch.allclose(out, dense(x), atol=1e-6)
        # Com a porta do Switch, a saída é a da FFN densa escalada por p_e*.
        layer.gate = "switch"
        out_switch, r_switch = layer(x)
        assert torch.allclose(out_switch, r_switch.gates * dense(x), atol=1e-6)
        assert not torch.allclose(out_switch, dense(x), atol=1e-3)
    assert len(set(r.indices[:, 0].tolist())) > 1  # o roteador de fato espalhou os tokens


def test_balance_loss_uniform_and_imbalanced():
    E, T = 4, 8
    # Uniforme: probabilidades 1/E e cada especialista com T/E tokens.
    probs = torch.full((T, E), 1.0 / E)
    indices = torch.arange(T).remainder(E).unsqueeze(-1)
    assert balance_loss(probs, indices).item() == pytest.approx(1.0)
    assert load_deviation(expert_load(indices, E)).item() == pytest.approx(0.0)
    assert max_load_ratio(expert_load(indices, E)) == pytest.approx(1.0)
    # Tudo no especialista 0, com probabilidade 0,7: E · 1 · 0,7 = 2,8.
    skewed = torch.tensor([[0.7, 0.1, 0.1, 0.1]]).repeat(T, 1)
    collapsed = torch.zeros(T, 1, dtype=torch.long)
    assert balance_loss(skewed, collapsed).item() == pytest.approx(2.8)
    assert load_deviation(expert_load(collapsed, E)).item() == pytest.approx(0.75)  # (1-1/4)² + 3·(1/4)²
    assert max_load_ratio(expert_load(collapsed, E)) == pytest.approx(4.0)
    # Texto (seção 3.8.4): carga [0, 2, 0, 1] com T = 3.
    load = torch.tensor([0, 2, 0, 1])
    assert torch.allclose(load_fractions(load), torch.tensor([0.0, 2 / 3, 0.0, 1 / 3], dtype=torch.float64))
    assert load_deviation(load).item() == pytest.approx((1 / 4) ** 2 * 2 + (2 / 3 - 1 / 4) ** 2 + (1 / 3 - 1 / 4) ** 2)


def test_balance_loss_gradient_flows_only_through_probs():
    logits = torch.randn(20, 4, generator=_gen(8), requires_grad=True)
    r = top_k_route(logits, 1)
    balance_loss(r.probs, r.indices).backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0


def test_parameter_counts_total_vs_active():
    layer = MoELayer(d_model=4, d_ff=16, n_experts=4, k=1)
    P = 4 * 16 + 16 + 16 * 4 + 4  # W_1, b_1, W_2, b_2
    counts = moe_parameter_counts(layer)
    assert counts["por_especialista"] == P == 148
    assert counts["especialistas_total"] == 4 * P and counts["especialistas_ativos"] == P
    assert counts["roteador"] == 16
    assert counts["total"] == count_parameters(layer) == 4 * P + 16
    layer2 = MoELayer(d_model=4, d_ff=16, n_experts=8, k=2, bias=False)
    c2 = moe_parameter_counts(layer2)
    assert c2["por_especialista"] == 128 and c2["especialistas_total"] == 1024 and c2["especialistas_ativos"] == 256


def test_seeded_init_is_reproducible():
    a = MoELayer(4, 16, 4, generator=_gen(11))
    b = MoELayer(4, 16, 4, generator=_gen(11))
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.equal(pa, pb)
    fa, fb = FeedForward(4, 16, generator=_gen(12)), FeedForward(4, 16, generator=_gen(12))
    assert torch.equal(fa.up.weight, fb.up.weight) and torch.all(fa.up.bias == 0)
    assert fa.up.weight.std().item() == pytest.approx(0.5, rel=0.3)  # N(0, 1/fan_in), fan_in = 4


def test_few_steps_on_balance_loss_reduce_imbalance():
    g = _gen(0)
    T, d, E, k = 2048, 16, 8, 2
    layer = MoELayer(d, 32, E, k, generator=g)
    with torch.no_grad():
        layer.router.weight.mul_(2.0)
    tokens = torch.randn(T, d, generator=g) + torch.randn(d, generator=g)  # tokens com um viés comum
    before = layer.route(tokens)
    opt = torch.optim.Adam(layer.router.parameters(), lr=0.05)
    for _ in range(30):
        r = layer.route(tokens)
        loss = balance_loss(r.probs, r.indices)
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = layer.route(tokens)
    assert max_load_ratio(before.load) > 1.5
    assert max_load_ratio(after.load) < max_load_ratio(before.load) - 0.3
    assert load_deviation(after.load) < 0.5 * load_deviation(before.load)
    assert balance_loss(after.probs, after.indices) < balance_loss(before.probs, before.indices)
    assert after.load.sum().item() == T * k


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="k deve"):
        top_k_route(torch.randn(3, 4), 5)
    with pytest.raises(ValueError, match="forma"):
        top_k_route(torch.randn(4), 1)
    with pytest.raises(ValueError, match="k deve"):
        MoELayer(4, 8, 2, k=3)
    with pytest.raises(ValueError, match="gate deve"):
        MoELayer(4, 8, 2, gate="softmax")
    with pytest.raises(ValueError, match="gate deve"):
        top_k_route(torch.randn(3, 4), 1, gate="Switch")
    with pytest.raises(ValueError, match="zero"):
        load_fractions(torch.zeros(4, dtype=torch.long))
