"""Testes de lncc_llm.retrieval: a base de documentos, os vetores do codificador e a busca."""
import re

import pytest
import torch

from lncc_llm import retrieval as rt
from lncc_llm.benchmarks import mc_items


def test_each_passage_has_its_right_choice_and_none_of_the_wrong_ones():
    passages, items = rt.fact_passages(), mc_items()
    assert len(passages) == len(items) == 48
    for text, item in zip(passages, items):
        assert item["choices"][item["answer"]] in text
        for k, choice in enumerate(item["choices"]):
            if k != item["answer"]:
                assert not re.search(rf"\b{re.escape(choice)}\b", text, re.I), (text, choice)


def test_fact_passages_bad_file_gets_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="não encontrada"):
        rt.fact_passages(tmp_path / "nada.json")
    bad = tmp_path / "ruim.json"
    bad.write_text('{"trechos": [{"item": 1, "texto": "x"}]}', encoding="utf-8")
    with pytest.raises(ValueError, match="na ordem"):
        rt.fact_passages(bad)


def test_embed_matches_sentence_transformers(encoder):
    from sentence_transformers import SentenceTransformer

    from lncc_llm.models import encoder_dir

    model, tok = encoder
    texts = ["Mercury is the planet nearest the Sun.", "Bees make honey.", "A short one."]
    ours = rt.embed(texts, model, tok)
    ref = SentenceTransformer(str(encoder_dir()), device="cpu").encode(texts, normalize_embeddings=True)
    assert ours.shape == (3, 384)
    assert torch.allclose(ours, torch.tensor(ref), atol=1e-5)
    # o preenchimento não entra na média: o mesmo texto, sozinho ou num lote com um mais longo
    alone = rt.embed(texts[2:], model, tok)
    assert torch.allclose(alone[0], ours[2], atol=1e-5)
    with pytest.raises(ValueError, match="não vazios"):
        rt.embed([""], model, tok)


def test_top_k_orders_by_cosine():
    docs = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]), dim=1)
    query = torch.nn.functional.normalize(torch.tensor([[1.0, 0.2], [0.0, 1.0]]), dim=1)
    assert rt.top_k(query, docs, 2) == [[0, 2], [1, 2]]
    with pytest.raises(ValueError, match="entre 1"):
        rt.top_k(query, docs, 4)
    with pytest.raises(ValueError, match="mesmo d"):
        rt.top_k(query, docs[:, :1], 1)


def test_retrieval_finds_most_passages_for_their_own_questions(encoder):
    model, tok = encoder
    passages = rt.fact_passages()
    hits = rt.top_k(rt.embed([i["question"] for i in mc_items()], model, tok),
                    rt.embed(passages, model, tok), 2)
    assert sum(i in h for i, h in enumerate(hits)) >= 44      # o livro mostra 47 de 48
