"""Índice da avaliação: os nomes públicos dos quatro módulos em que ela se divide, para quem os
importa de ``lncc_llm.evaluation``.

* ``lncc_llm.judge``: o modelo como juiz, lido por logits, nas duas ordens (Cap. 8, 8.4.2 e 8.4.4);
* ``lncc_llm.contamination``: quase-duplicatas e Min-K % prob (Capítulo 8, 8.4.3);
* ``lncc_llm.benchmarks``: múltipla escolha por log-verossimilhança, tarefa gerativa com acerto
  exato e o lm-evaluation-harness offline (Capítulo 8, 8.4.5);
* ``lncc_llm.stats``: Wilson, AUROC com intervalo, valor-p de permutação e a curva de abstenção
  (Capítulos 8 e 9).
"""
from __future__ import annotations

from .benchmarks import (  # noqa: F401
    MC_PROMPT,
    MC_TASK_FILE,
    MC_TASK_NAME,
    MCResult,
    lm_eval_task,
    mc_items,
    multiple_choice_accuracy,
    run_lm_eval,
)
from .contamination import cross_similarities, near_duplicates  # noqa: F401
from .judge import (  # noqa: F401
    JUDGE_PAIRS,
    JUDGE_TEMPLATES,
    PositionReport,
    Verdict,
    judge_batch,
    judge_pair,
    judge_pairs,
    label_token_ids,
    position_consistency,
)
from .stats import (  # noqa: F401
    abstention_curve,
    auroc,
    auroc_interval,
    auroc_permutation_p,
    wilson_interval,
)
