"""Reescreve nos notebooks as células dos exercícios conferíveis (dicas, inicial, solução).

    python scripts/exercicios_nos_notebooks.py            # todos os capítulos
    python scripts/exercicios_nos_notebooks.py cap03 apA  # só estes

As células saem das definições em ``lncc_llm/exercicios/capNN.py`` e das soluções de referência
em ``lncc_llm/dados/exercicios/``; as saídas das células novas ficam vazias até o notebook ser
reexecutado (``python scripts/executar_notebooks.py capNN``). ``tests/test_exercicios.py`` confere
que as células dos notebooks são exatamente as geradas.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from lncc_llm.exercicios import CAPITULOS, do_capitulo
from lncc_llm.exercicios.celulas import sincronizar

LIVRO = Path(__file__).resolve().parents[1] / "book"
NOTEBOOKS = {"cap01": "cap01_introducao", "cap02": "cap02_nucleo_transformer",
             "cap02_atencao_camada": "cap02_atencao_camada",
             "cap03": "cap03_variacoes_modernas", "cap03_moe_bloco": "cap03_moe_bloco",
             "cap04": "cap04_inferencia_causal", "cap04_feixe_cache": "cap04_feixe_cache",
             "cap05": "cap05_prompting_icl",
             "cap05_instrucoes_raciocinio": "cap05_instrucoes_raciocinio",
             "cap06": "cap06_pretreinamento_otimizacao",
             "cap06_velocidade_memoria": "cap06_velocidade_memoria",
             "cap07": "cap07_treinamento_otimizacao",
             "cap07_sft_lora_qlora": "cap07_sft_lora_qlora",
             "cap07_sft_na_pratica": "cap07_sft_na_pratica",
             "cap08_alinhamento": "cap08_alinhamento",
             "cap08_rl_grpo": "cap08_rl_grpo",
             "cap08_avaliacao": "cap08_avaliacao",
             "cap08_vieses_harness": "cap08_vieses_harness", "cap09": "cap09_tendencias",
             "apA": "apendice_a_gpt_do_zero",
             "apA_treino": "apendice_a_treino", "apB": "apendice_b_llama_do_zero"}


def main(capitulos: list[str]) -> None:
    for capitulo in capitulos or CAPITULOS:
        exercicios = do_capitulo(capitulo)
        notebook = NOTEBOOKS[capitulo]
        caminho = LIVRO / f"{notebook}.ipynb"
        caderno = json.loads(caminho.read_text(encoding="utf-8"))
        antes = json.dumps(caderno, indent=1, ensure_ascii=False) + "\n"
        novo = sincronizar(caderno, exercicios, notebook)
        depois = json.dumps(novo, indent=1, ensure_ascii=False) + "\n"
        if depois != antes:
            caminho.write_text(depois, encoding="utf-8")
            print(f"{caminho.name}: {len(exercicios)} exercícios reescritos")
        else:
            print(f"{caminho.name}: já em dia")


if __name__ == "__main__":
    main(sys.argv[1:])
