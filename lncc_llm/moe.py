"""*Mixture of Experts* (MoE) em miniatura: roteador top-k, especialistas, carga e balanceamento.

Cada especialista é uma FFN pequena; o roteador escolhe, para cada token, os
``k`` especialistas de maior probabilidade e combina as saídas deles com pesos
(*gates*): com ``k = 1``, a própria probabilidade do escolhido (a porta do Switch,
que não soma 1); com ``k ≥ 2``, as probabilidades escolhidas renormalizadas para
somar 1 (Mixtral). Tudo aqui é do tamanho de um exemplo de aula, mas as
contas (carga, perda de balanceamento, parâmetros totais e ativos) são as dos
modelos reais.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .gpt import count_parameters  # uma só definição, reexportada para o Capítulo 3


@dataclass
class Routing:
    """O que o roteador decidiu para ``T`` tokens e ``E`` especialistas.

    ``probs`` ``(T, E)``: softmax sobre os especialistas; ``indices`` ``(T, k)``: os
    escolhidos, do mais provável ao menos; ``gates`` ``(T, k)``: os pesos das saídas dos
    escolhidos (ver :func:`top_k_route`); ``load`` ``(E,)``: tokens por especialista.
    Ver Capítulo 3, seção 3.8.3.
    """

    probs: torch.Tensor
    indices: torch.Tensor
    gates: torch.Tensor
    load: torch.Tensor


GATES = ("auto", "switch", "renormalizado")


def top_k_route(router_logits: torch.Tensor, k: int = 1, gate: str = "auto") -> Routing:
    """Softmax sobre os logits do roteador ``(T, E)``, seleção top-k e as portas (*gates*).

    ``gate="switch"``: a porta é a própria probabilidade ``p_e`` de cada escolhido, sem
    renormalizar (Switch Transformer). ``gate="renormalizado"``: as ``k`` probabilidades escolhidas
    divididas pela soma delas (Mixtral, ``k = 2``). ``gate="auto"`` (o padrão) usa a do Switch
    com ``k = 1`` e a renormalizada com ``k ≥ 2``: com ``k = 1``, renormalizar faz a porta valer
    sempre 1, e a perda da tarefa deixa de chegar ao roteador pelo gradiente.
    Ver Capítulo 3, seção 3.8.3.
    """
    if router_logits.dim() != 2:
        raise ValueError(
            f"Os logits do roteador devem ter forma (T, E); recebi {tuple(router_logits.shape)}."
        )
    n_experts = router_logits.shape[-1]
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n_experts:
        raise ValueError("k deve ser um inteiro entre 1 e o número de especialistas "
                         f"({n_experts}); recebi {k!r}.")
    if gate not in GATES:
        raise ValueError(f"gate deve ser um de {GATES}; recebi {gate!r}.")
    probs = torch.softmax(router_logits, dim=-1)
    top_probs, indices = probs.topk(k, dim=-1)
    if gate == "renormalizado" or (gate == "auto" and k > 1):
        gates = top_probs / top_probs.sum(dim=-1, keepdim=True)
    else:
        gates = top_probs
    return Routing(probs=probs, indices=indices, gates=gates, load=expert_load(indices, n_experts))


def expert_load(indices: torch.Tensor, n_experts: int) -> torch.Tensor:
    """Quantos tokens cada especialista recebeu: ``load(e) = Σ_t 𝟙[e ∈ escolhidos(t)]``; soma
    ``T·k``.

    Ver Capítulo 3, seção 3.8.4.
    """
    return torch.bincount(indices.reshape(-1).to(torch.long), minlength=n_experts)


def load_fractions(load: torch.Tensor) -> torch.Tensor:
    """A fração ``f_e`` das escolhas que foi para cada especialista (soma 1).

    Ver Capítulo 3, seção 3.8.4.
    """
    load = load.to(torch.float64) if not load.is_floating_point() else load
    total = load.sum()
    if total <= 0:
        raise ValueError("Nenhum token foi roteado: a carga total é zero.")
    return load / total


def load_deviation(load: torch.Tensor) -> torch.Tensor:
    """A medida de desbalanceamento do texto, ``Σ_e (f_e − 1/E)²`` (zero quando a carga é uniforme).

    Com ``k = 1``, ``f_e = load(e)/T``.
    Ver Capítulo 3, seção 3.8.6.
    """
    f = load_fractions(load)
    return ((f - 1.0 / f.numel()) ** 2).sum()


def max_load_ratio(load: torch.Tensor) -> float:
    """Carga do especialista mais ocupado dividida pela carga média (1.0 = perfeitamente
    equilibrado).

    Ver Capítulo 3, seção 3.8.6.
    """
    f = load_fractions(load)
    return float(f.max() * f.numel())


def balance_loss(probs: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """A perda auxiliar do Switch Transformer, ``E · Σ_e f_e · P_e``.

    ``f_e`` é a fração das escolhas top-k feitas para ``e`` (não derivável) e ``P_e``
    a probabilidade média que o roteador deu a ``e`` (derivável). Vale 1 com
    roteamento uniforme e cresce quando poucos especialistas concentram tokens.
    Ver Capítulo 3, seção 3.8.6.
    """
    n_experts = probs.shape[-1]
    f = load_fractions(expert_load(indices, n_experts)).to(probs.dtype)
    mean_probs = probs.reshape(-1, n_experts).mean(dim=0)
    return n_experts * (f * mean_probs).sum()


@torch.no_grad()
def init_from_generator_(module: nn.Module, generator: torch.Generator) -> nn.Module:
    """Reinicializa toda ``nn.Linear`` do módulo: pesos ``N(0, 1/fan_in)`` e vieses zero.

    Com um ``torch.Generator`` da CPU semeado, os pesos são os mesmos em qualquer
    máquina (o sorteio é feito na CPU e copiado para o dispositivo do módulo).
    Ver Capítulo 3, seção 3.8.2.
    """
    for sub in module.modules():
        if isinstance(sub, nn.Linear):
            std = sub.in_features ** -0.5
            weight = torch.randn(sub.weight.shape, generator=generator, dtype=torch.float64) * std
            sub.weight.copy_(weight)
            if sub.bias is not None:
                sub.bias.zero_()
    return module


class FeedForward(nn.Module):
    """FFN de duas camadas, ``W_2 σ(W_1 x + b_1) + b_2``, com GELU: o especialista do MoE.

    Com ``generator``, os pesos são sorteados dele (ver :func:`init_from_generator_`).
    Ver Capítulo 3, seção 3.8.1.
    """

    def __init__(self, d_model: int, d_ff: int, bias: bool = True,
                 generator: torch.Generator | None = None):
        super().__init__()
        self.up = nn.Linear(d_model, d_ff, bias=bias)
        self.act = nn.GELU()
        self.down = nn.Linear(d_ff, d_model, bias=bias)
        if generator is not None:
            init_from_generator_(self, generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.act(self.up(x)))


class MoELayer(nn.Module):
    """Camada MoE: roteador linear ``W_g`` (sem viés), ``E`` FFNs e combinação top-k.

    ``forward(x)`` recebe ``(..., d_model)`` e devolve ``(saída, Routing)``; a saída
    de cada token é ``Σ_{e escolhido} g_e(x) · Expert_e(x)``. Só os especialistas
    escolhidos são calculados para cada token. As portas ``g_e`` seguem ``gate`` (ver
    :func:`top_k_route`): com ``k = 1``, a do Switch, ``g = p_{e*}``. Com ``generator``, os
    pesos são sorteados dele (ver :func:`init_from_generator_`).
    Ver Capítulo 3, seção 3.8.2.
    """

    def __init__(
        self,
        d_model: int,
        d_ff: int,
        n_experts: int,
        k: int = 1,
        bias: bool = True,
        generator: torch.Generator | None = None,
        gate: str = "auto",
    ):
        super().__init__()
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n_experts:
            raise ValueError(f"k deve ser um inteiro entre 1 e o número de especialistas "
                             f"({n_experts}); recebi {k!r}.")
        if gate not in GATES:
            raise ValueError(f"gate deve ser um de {GATES}; recebi {gate!r}.")
        self.k = k
        self.gate = gate
        self.router = nn.Linear(d_model, n_experts, bias=False)
        self.experts = nn.ModuleList(FeedForward(d_model, d_ff, bias=bias)
                                     for _ in range(n_experts))
        if generator is not None:
            init_from_generator_(self, generator)

    @property
    def n_experts(self) -> int:
        return len(self.experts)

    def route(self, x: torch.Tensor) -> Routing:
        """Só o roteamento dos tokens ``(..., d_model)``, achatados em ``(T, d_model)``.

        Ver Capítulo 3, seção 3.8.3.
        """
        return top_k_route(self.router(x.reshape(-1, x.shape[-1])), self.k, self.gate)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, Routing]:
        flat = x.reshape(-1, x.shape[-1])
        routing = top_k_route(self.router(flat), self.k, self.gate)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            token_idx, slot = torch.nonzero(routing.indices == e, as_tuple=True)
            if token_idx.numel() == 0:
                continue
            gate = routing.gates[token_idx, slot].unsqueeze(-1)
            out.index_add_(0, token_idx, gate * expert(flat[token_idx]))
        return out.reshape(x.shape), routing


def moe_parameter_counts(layer: MoELayer) -> dict[str, int]:
    """Parâmetros de uma ``MoELayer``: por especialista (P), totais (E·P) e ativos por token (k·P),
    e o roteador.

    Ver Capítulo 3, seção 3.8.5.
    """
    per_expert = count_parameters(layer.experts[0])
    router = count_parameters(layer.router)
    return {
        "por_especialista": per_expert,
        "especialistas_total": layer.n_experts * per_expert,
        "especialistas_ativos": layer.k * per_expert,
        "roteador": router,
        "total": layer.n_experts * per_expert + router,
        "ativos": layer.k * per_expert + router,
    }
