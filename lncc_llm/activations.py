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


def activation_model(config, tokens: int, bytes_per_value: int = 4, with_loss: bool = True
                     ) -> dict[str, float]:
    """Bytes de ativações previstos para ``tokens`` tokens num decodificador do tipo Llama.

    Por camada e por token, em valores: as duas RMSNorm guardam a entrada, a entrada normalizada e a
    saída (3d cada, 6d); a atenção guarda q, k e v depois da rotação (d + 2·d_kv), a saída da atenção
    e a entrada de ``o_proj`` (2d); a MLP guarda ``gate``, ``up``, a SiLU e o produto que entra em
    ``down_proj`` (4·d_ffn). Na cabeça, os logits e a log-softmax da perda (2·|V|). Desprezados: os
    escalares por token e por cabeça (a raiz da RMSNorm, o log-soma-exp da atenção). Com o mesmo
    lote, SFT, LoRA e QLoRA guardam praticamente as mesmas ativações: uma camada congelada não
    precisa da entrada para o gradiente do peso, mas o adaptador ``A`` do LoRA, sim.
    Ver Capítulo 6, seção 6.7, e Capítulo 7, seção 7.11.
    """
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        raise ValueError(f"tokens deve ser um inteiro ≥ 1; recebi {tokens!r}.")
    d = config.hidden_size
    kv = config.num_key_value_heads * (d // config.num_attention_heads)
    per_layer = 6 * d + (d + 2 * kv) + 2 * d + 4 * config.intermediate_size
    layers = config.num_hidden_layers * per_layer * tokens * bytes_per_value
    head = (2 if with_loss else 1) * config.vocab_size * tokens * bytes_per_value
    return {"camadas": float(layers), "cabeça": float(head), "total": float(layers + head),
            "por_token_por_camada": float(per_layer * bytes_per_value)}
