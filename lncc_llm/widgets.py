"""Exploradores interativos (ipywidgets), com uma figura estática de reserva.

* ``attention_view`` / ``attention_explorer``: escolha camada e cabeça e veja o mapa de atenção e as
  5 posições que um token mais olha (Capítulo 2);
* ``next_token_view`` / ``next_token_explorer``: mova τ e top-p sobre a distribuição real do próximo
  token e veja o tamanho do núcleo, a entropia e o gráfico (Capítulo 4).

Cada explorador chama uma função pura (``*_view``) que devolve os números da figura; o *callback*
dos controles usa a mesma função, e os testes conferem isso sem navegador. No JupyterLab e no Colab,
``show()`` mostra os controles; sob o nbval (``LNCC_LLM_QUIET=1``) e no livro em HTML, mostra a
figura estática dos valores iniciais, com uma frase dizendo que ela é interativa no notebook.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .environment import progress_quiet
from .sampling import apply_temperature, entropy, sampling_distribution

STATIC_NOTE = "(No JupyterLab ou no Colab, esta figura é interativa: {controls}.)"


# ----------------------------------------------------------------------------- atenção


@dataclass
class AttentionView:
    """O que ``attention_view`` devolve: a matriz da cabeça e as posições mais olhadas pela *query*.

    Ver Capítulo 2, seção 2.5.
    """

    layer: int
    head: int
    matrix: np.ndarray                 # (n, n): linhas são queries, colunas são keys
    query: int                         # posição da query destacada
    top: list                          # [(posição, token, peso)], do maior peso ao menor


def attention_view(attentions, tokens, layer: int, head: int, query: int = 0,
                   k: int = 5) -> AttentionView:
    """A matriz de atenção de ``(layer, head)`` e as ``k`` posições de maior peso na linha
    ``query``.

    ``attentions`` é a tupla que um modelo devolve com ``output_attentions=True`` (uma entrada
    ``(lote, cabeças, n, n)`` por camada); usa o primeiro exemplo do lote.
    Ver Capítulo 2, seção 2.5.
    """
    if not 0 <= layer < len(attentions):
        raise ValueError(f"Camada {layer} fora do intervalo: o modelo tem {len(attentions)} "
                         f"(0 a {len(attentions) - 1}).")
    heads = attentions[layer].shape[1]
    if not 0 <= head < heads:
        raise ValueError(f"Cabeça {head} fora do intervalo: a camada tem {heads} "
                         f"(0 a {heads - 1}).")
    matrix = attentions[layer][0, head].detach().float().cpu().numpy()
    if not 0 <= query < matrix.shape[0]:
        raise ValueError(f"Posição de query {query} fora da sequência de {matrix.shape[0]} tokens.")
    row = matrix[query]
    order = np.argsort(-row, kind="stable")[:k]
    return AttentionView(layer, head, matrix, query,
                         [(int(j), tokens[j], float(row[j])) for j in order])


def draw_attention_view(view: AttentionView, tokens, fig=None):
    """Desenha o mapa de calor de ``view`` e, ao lado, as barras das posições mais olhadas.

    Ver Capítulo 2, seção 2.5.
    """
    import matplotlib.pyplot as plt

    from .plotting import plot_attention

    if fig is None:
        fig = plt.figure(figsize=(11, 4.6))
    fig.clear()
    ax_map, ax_top = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.6, 1]})
    plot_attention(view.matrix, tokens, ax=ax_map, title=f"camada {view.layer}, cabeça {view.head}")
    labels = [f"{pos:02d} {tok}" for pos, tok, _ in view.top][::-1]
    ax_top.barh(labels, [w for _, _, w in view.top][::-1], color="tab:blue")
    ax_top.set_xlim(0, 1)
    ax_top.set_xlabel("peso de atenção")
    ax_top.set_title(f"top {len(view.top)} de {tokens[view.query]!r}")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- próximo token


@dataclass
class NextTokenView:
    """O que ``next_token_view`` devolve: a distribuição com τ, os candidatos que sobram do top-k
    e do top-p, e a entropia antes e depois dos cortes.

    Ver Capítulo 4, seções 4.9 e 4.10.
    """

    temperature: float
    top_p: float
    tokens: list              # os k tokens mais prováveis (texto)
    probs: list               # p_τ de cada um
    in_nucleus: list          # se cada um sobra depois do top-k e do top-p
    nucleus_size: int         # quantos tokens sobram
    entropy: float            # entropia de p_τ (nats), antes dos cortes
    top_k: int | None = None  # None: sem top-k
    entropy_cut: float | None = None   # entropia da distribuição sorteada (depois dos cortes)


def next_token_view(logits, tokenizer, temperature: float, top_p: float,
                    k: int = 15, top_k: int | None = None) -> NextTokenView:
    """A distribuição do próximo token com temperatura ``temperature`` e os candidatos que sobram
    do ``top_k`` (``None`` ou 0: desligado) e do ``top_p``.

    Usa ``sampling.apply_temperature`` e ``sampling.sampling_distribution`` (com as mesmas
    mensagens de erro para τ ≤ 0, k < 1 e p fora de (0, 1]) sobre um vetor de logits ``(|V|,)``.
    Ver Capítulo 4, seções 4.9 e 4.10.
    """
    logits = torch.as_tensor(logits).detach().double().reshape(-1)
    top_k = top_k or None
    probs = torch.softmax(apply_temperature(logits, temperature), dim=-1)
    sampled = sampling_distribution(logits, temperature, top_k, top_p)
    kept = sampled > 0
    top = torch.topk(probs, k)
    ids = top.indices.tolist()
    return NextTokenView(float(temperature), float(top_p), [tokenizer.decode([i]) for i in ids],
                         [float(p) for p in top.values], [bool(kept[i]) for i in ids],
                         int(kept.sum()), float(entropy(probs)), top_k, float(entropy(sampled)))


def draw_next_token_view(view: NextTokenView, fig=None):
    """Barras das ``k`` maiores probabilidades, coloridas por estarem ou não no núcleo.

    Ver Capítulo 4, seção 4.10.
    """
    import matplotlib.pyplot as plt

    if fig is None:
        fig = plt.figure(figsize=(8, 3.8))
    fig.clear()
    ax = fig.subplots()
    colors = ["tab:blue" if inside else "0.75" for inside in view.in_nucleus]
    ax.bar(range(len(view.tokens)), view.probs, color=colors)
    ax.set_xticks(range(len(view.tokens)), [repr(t) for t in view.tokens], rotation=60, ha="right",
                  fontsize=8)
    ax.set_ylabel("probabilidade")
    k_text = "sem top-k" if view.top_k is None else f"k = {view.top_k}"
    ax.set_title(f"τ = {view.temperature:.2f}, {k_text}, p = {view.top_p:.2f}: "
                 f"{view.nucleus_size} candidatos (em azul); entropia {view.entropy:.2f} nats "
                 f"antes do corte, {view.entropy_cut:.2f} depois",
                 fontsize=10)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- os exploradores


class Explorer:
    """Um explorador: controles do ipywidgets, uma função pura e a figura que ela alimenta.

    ``update(**valores)`` é o *callback*: recalcula a vista e redesenha a figura. ``show()`` mostra
    os controles no JupyterLab/Colab, ou a figura estática (valores iniciais) sob o nbval e no
    livro.
    Ver Capítulo 2, seção 2.5, e Capítulo 4, seção 4.10.
    """

    def __init__(self, compute, draw, controls: dict, describe: str):
        self._compute, self._draw, self.controls, self.describe = compute, draw, controls, describe
        self.figure = None
        self.view = compute(**{name: c.value for name, c in controls.items()})
        self._output = None

    def update(self, **values):
        """Recalcula a vista com os valores dados (os outros ficam como estão) e redesenha."""
        current = {name: c.value for name, c in self.controls.items()}
        current.update(values)
        self.view = self._compute(**current)
        if self.figure is not None:
            self._draw(self.view, fig=self.figure)
            self.figure.canvas.draw_idle()
        return self.view

    def _on_change(self, name, change):
        self.update(**{name: change["new"]})
        if self._output is not None:
            from IPython.display import display

            with self._output:
                self._output.clear_output(wait=True)
                display(self.figure)

    def widget(self):
        """Os controles e a figura num ``ipywidgets.VBox`` (os controles chamam ``update``)."""
        import ipywidgets as widgets
        import matplotlib.pyplot as plt

        for name, control in self.controls.items():
            control.observe(lambda change, name=name: self._on_change(name, change), names="value")
        self._output = widgets.Output()
        self.figure = self._draw(self.view)
        plt.close(self.figure)
        with self._output:
            from IPython.display import display

            display(self.figure)
        return widgets.VBox([widgets.HBox(list(self.controls.values())), self._output])

    def show(self, interactive: bool | None = None):
        """Mostra o explorador: interativo no notebook, estático sob o nbval (``LNCC_LLM_QUIET=1``).
        """
        from IPython.display import display

        if interactive is None:
            interactive = not progress_quiet()
        if interactive:
            display(self.widget())
            return None
        import matplotlib.pyplot as plt

        self.figure = self._draw(self.view)
        plt.show()
        print(STATIC_NOTE.format(controls=self.describe))
        return None


def attention_explorer(attentions, tokens, query: int = 0, layer: int = 0, head: int = 0,
                       k: int = 5) -> Explorer:
    """Explorador de atenção: menus de camada e cabeça; mapa de calor e as ``k`` posições mais
    olhadas.

    Ver Capítulo 2, seção 2.5.
    """
    import ipywidgets as widgets

    heads = attentions[0].shape[1]
    controls = {"layer": widgets.Dropdown(options=list(range(len(attentions))), value=layer,
                                          description="camada"),
                "head": widgets.Dropdown(options=list(range(heads)), value=head,
                                         description="cabeça")}

    def compute(layer, head):
        return attention_view(attentions, tokens, layer, head, query=query, k=k)

    def draw(view, fig=None):
        return draw_attention_view(view, tokens, fig=fig)

    return Explorer(compute, draw, controls, "escolha a camada e a cabeça nos menus")


def next_token_explorer(logits, tokenizer, temperature: float = 1.0, top_p: float = 0.9,
                        k: int = 15, top_k: int | None = None) -> Explorer:
    """Explorador do próximo token: controles de τ, top-k (0 = desligado) e top-p sobre logits
    reais do decodificador.

    Ver Capítulo 4, seção 4.10.
    """
    import ipywidgets as widgets

    controls = {
        "temperature": widgets.FloatLogSlider(value=temperature, base=10, min=-1.3, max=0.6,
                                              step=0.05, description="τ", readout_format=".2f",
                                              continuous_update=False),
        "top_k": widgets.IntSlider(value=top_k or 0, min=0, max=50, step=1,
                                   description="top-k (0: não)", continuous_update=False),
        "top_p": widgets.FloatSlider(value=top_p, min=0.05, max=1.0, step=0.05, description="top-p",
                                     readout_format=".2f", continuous_update=False),
    }

    def compute(temperature, top_k, top_p):
        return next_token_view(logits, tokenizer, temperature, top_p, k=k, top_k=top_k)

    return Explorer(compute, draw_next_token_view, controls,
                    "mova os controles de τ, de top-k e de top-p")
