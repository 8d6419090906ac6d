"""A memória de ativações de um passo de treino: medida e prevista.

Os pesos, os gradientes e o estado do Adam têm tamanho fixo (``quantization.training_memory``). As
**ativações** são os tensores que a passagem para frente guarda para o *backward* (a entrada de cada
camada linear, a saída de cada função não linear, os logits), e crescem com o número de tokens do
lote.

* ``saved_activation_bytes``: mede, com ``torch.autograd.graph.saved_tensors_hooks``, os bytes que
  uma passagem para frente guarda para o *backward* (cada armazenamento contado uma vez);
* ``activation_model``: a conta à mão para um decodificador do tipo Llama (RMSNorm, atenção com
  GQA, MLP SwiGLU), camada a camada, à maneira de Korthikanti et al. (2023): o que cada operação
  guarda, por token.
"""
from __future__ import annotations

import torch


def saved_activation_bytes(model, **batch) -> int:
    """Bytes que ``model(**batch)`` guarda para o *backward*, cada armazenamento contado uma vez.

    Conta os tensores que o autograd guarda durante a passagem para frente (com gradiente ligado),
    exceto os parâmetros do próprio modelo, que já estão na memória de qualquer jeito. A perda
    (``labels=``) entra, se vier no lote. Nada é treinado: o grafo é descartado no fim.
    Ver Capítulo 7, seção 7.11.
    """
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}

    def pack(t):
        if isinstance(t, torch.Tensor) and t.device.type != "meta":
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
            if ptr and ptr not in params:
                seen[ptr] = max(seen.get(ptr, 0), storage.nbytes())
        return t

    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(**batch)
        del out
    return sum(seen.values())


def activation_model(config, tokens: int, bytes_per_value: int = 4, with_loss: bool = True,
                     trainable_norms: bool = True) -> dict[str, float]:
    """Bytes de ativações previstos para ``tokens`` tokens num decodificador do tipo Llama.

    Por camada e por token, em valores: cada uma das duas RMSNorm guarda a entrada e a entrada
    normalizada (2d), e ainda a saída multiplicada pelo peso se o peso treina (mais d; com a
    norma congelada, como no LoRA, não); a atenção guarda q, k e v depois da rotação (d
    + 2·d_kv), a saída da atenção e a entrada de ``o_proj`` (2d); a MLP guarda ``gate``, ``up``, a
    SiLU e o produto que entra em ``down_proj`` (4·d_ffn). Na cabeça, a log-softmax da perda
    (|V| por token). Desprezados: os escalares por token e por cabeça (a raiz da RMSNorm, o
    log-soma-exp da atenção). Uma camada linear congelada não precisa da entrada para o gradiente do
    peso, mas o adaptador ``A`` do LoRA, na mesma entrada, precisa: por isso SFT, LoRA e QLoRA
    guardam quase o mesmo.
    Ver Capítulo 6, seção 6.7, e Capítulo 7, seção 7.11.
    """
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        raise ValueError(f"tokens deve ser um inteiro ≥ 1; recebi {tokens!r}.")
    d = config.hidden_size
    kv = config.num_key_value_heads * (d // config.num_attention_heads)
    norms = 2 * (3 if trainable_norms else 2) * d
    per_layer = norms + (d + 2 * kv) + 2 * d + 4 * config.intermediate_size
    layers = config.num_hidden_layers * per_layer * tokens * bytes_per_value
    head = (config.vocab_size if with_loss else 0) * tokens * bytes_per_value
    return {"camadas": float(layers), "cabeça": float(head), "total": float(layers + head),
            "por_token_por_camada": float(per_layer * bytes_per_value)}


def step_peak(model, optimizer, **batch) -> dict[str, int]:
    """O pico de memória de um passo de treino (passagem para frente, *backward* e
    ``optimizer.step()``), em bytes, acima do que já estava alocado antes do passo (os pesos e
    os *buffers*).

    Acompanha cada tensor que uma operação do PyTorch cria durante o passo (um
    ``TorchDispatchMode``) e o desconta quando a memória dele é liberada (uma referência fraca
    ao armazenamento); o pico é o máximo dessa soma. Devolve ``{"pico", "fim"}``: o pico, e o
    que ainda está alocado no fim do passo (gradientes e estado do otimizador). Os gradientes
    são zerados no fim (``set_to_none``). Para não mudar o modelo, passe um otimizador com taxa
    0. Não conta o que uma biblioteca aloca fora do PyTorch.
    Ver Capítulo 7, seção 7.11.
    """
    from torch.multiprocessing.reductions import StorageWeakRef
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    existing = list(model.parameters()) + list(model.buffers())
    before = {p.untyped_storage().data_ptr() for p in existing}

    class _Live(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.live: dict[int, tuple] = {}
            self.current = self.peak = 0

        def purge(self):
            for key in [k for k, (ref, _) in self.live.items() if ref.expired()]:
                self.current -= self.live.pop(key)[1]

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in tree_leaves(out):
                if isinstance(t, torch.Tensor) and t.device.type != "meta":
                    storage = t.untyped_storage()
                    key = storage.data_ptr()
                    if key and key in self.live and self.live[key][0].expired():
                        self.current -= self.live.pop(key)[1]      # endereço reaproveitado
                    if key and key not in before and key not in self.live:
                        self.live[key] = (StorageWeakRef(storage), storage.nbytes())
                        self.current += storage.nbytes()
            # a soma só superestima (liberações não vistas): basta limpá-la quando ela bate o pico
            if self.current > self.peak:
                self.purge()
                self.peak = max(self.peak, self.current)
            return out

    with torch.enable_grad(), _Live() as live:
        model(**batch).loss.backward()
        optimizer.step()
    live.purge()
    end = live.current
    optimizer.zero_grad(set_to_none=True)
    return {"pico": int(live.peak), "fim": int(end)}
