#!/usr/bin/env python3
"""Prepara, uma vez, o que os capítulos leem do cache do curso: o SmolLM2 convertido de GGUF para
``safetensors`` (cerca de 20 a 40 s na primeira vez) e o corpus de Shakespeare do Apêndice A.

Uso, da raiz do repositório (o primeiro comando do início rápido do README já o chama):

    python scripts/preparar_modelos.py

Rodar de novo não refaz nada: com o cache completo, só confere e imprime onde ele está. Sem este
passo, o primeiro capítulo que carrega o decodificador faz a mesma conversão (e mostra o progresso).
Ver Capítulo 4, seção 4.5.
"""
import sys
import time


def main() -> int:
    from lncc_llm.corpus import shakespeare_text
    from lncc_llm.models import ensure_decoder_cache

    inicio = time.perf_counter()
    pasta = ensure_decoder_cache()
    texto = shakespeare_text()
    print(f"decodificador pronto em {pasta}; corpus do Apêndice A com {len(texto):,} caracteres "
          f"({time.perf_counter() - inicio:.0f} s)".replace(",", "."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
