"""Configuração comum do pytest: testes de unidade e nbval rodam calados e sem rede.

As variáveis abaixo são herdadas pelos kernels que o nbval inicia, de modo que os
notebooks executam como ao gerar as saídas guardadas (ver README, "Testes").
"""
import os

os.environ["LNCC_LLM_QUIET"] = "1"  # sem barras de progresso nem avisos de conversão
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
