"""Busca densa para a geração aumentada por recuperação (RAG): o codificador do curso
(all-MiniLM-L6-v2) transforma textos em vetores, e a busca devolve os trechos mais parecidos com a
pergunta.

* ``embed``: a média dos estados finais dos tokens reais (sem o preenchimento), normalizada, como o
  ``sentence-transformers`` faz com esse modelo;
* ``top_k``: os ``k`` documentos de maior cosseno com cada consulta;
* ``fact_passages``: a base de documentos do curso, um trecho por questão da sonda.
Ver Capítulo 9, seção 9.1.2.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch

PASSAGES_FILE = Path(__file__).with_name("dados") / "fatos_documentos.json"


def fact_passages(path: str | Path | None = None) -> list[str]:
    """Os trechos da base de documentos, na ordem das questões de ``mc_items`` (um por questão).

    O arquivo padrão, ``lncc_llm/dados/fatos_documentos.json``, tem 48 trechos curtos escritos para
    o curso: cada um contém a alternativa certa da sua questão e não cita as erradas.
    Ver Capítulo 9, seção 9.1.2.
    """
    file = Path(path or PASSAGES_FILE)
    if not file.is_file():
        raise FileNotFoundError(f"Base de documentos não encontrada: {str(file)!r}. Passe um "
                                'JSON com {"trechos": [{"item": i, "texto": …}, …]} ou chame '
                                "fact_passages() sem argumentos.")
    data = json.loads(file.read_text(encoding="utf-8"))
    rows = data.get("trechos") if isinstance(data, dict) else None
    if not rows or any(r.get("item") != i or not r.get("texto") for i, r in enumerate(rows)):
        raise ValueError(f"{str(file)!r} deve ter 'trechos': uma lista de "
                         "{'item': i, 'texto': …}, com item = 0, 1, 2, … na ordem.")
    return [r["texto"] for r in rows]


@torch.no_grad()
def embed(texts, model=None, tokenizer=None, batch_size: int = 64) -> torch.Tensor:
    """Um vetor de norma 1 por texto, ``[len(texts), 384]``: a média dos estados finais dos tokens
    reais (a máscara de atenção tira o preenchimento), normalizada.

    É o *pooling* do all-MiniLM-L6-v2 no ``sentence-transformers`` (``mean`` + ``Normalize``); sem
    ``model``, usa o codificador do curso (``load_encoder``). O cosseno entre dois vetores é o
    produto escalar.
    Ver Capítulo 9, seção 9.1.2.
    """
    texts = list(texts)
    if not texts or not all(isinstance(t, str) and t.strip() for t in texts):
        raise ValueError("Passe uma lista de textos não vazios para codificar.")
    if model is None or tokenizer is None:
        from .models import load_encoder

        model, tokenizer = load_encoder()
    device = next(model.parameters()).device
    out = []
    for start in range(0, len(texts), batch_size):
        batch = tokenizer(texts[start:start + batch_size], padding=True, truncation=True,
                          return_tensors="pt").to(device)
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        out.append(torch.nn.functional.normalize(mean, dim=-1).float().cpu())
    return torch.cat(out)


def top_k(queries: torch.Tensor, documents: torch.Tensor, k: int = 3) -> list[list[int]]:
    """Os índices dos ``k`` documentos de maior cosseno com cada consulta, do mais parecido ao
    menos (vetores de norma 1, como os de ``embed``).

    Ver Capítulo 9, seção 9.1.2.
    """
    if queries.ndim != 2 or documents.ndim != 2 or queries.shape[1] != documents.shape[1]:
        raise ValueError("Passe duas matrizes [n, d] com o mesmo d (as saídas de embed); recebi "
                         f"{tuple(queries.shape)} e {tuple(documents.shape)}.")
    if not 1 <= k <= len(documents):
        raise ValueError(f"k deve ficar entre 1 e o número de documentos ({len(documents)}); "
                         f"recebi {k}.")
    return (queries @ documents.T).topk(k, dim=1).indices.tolist()
