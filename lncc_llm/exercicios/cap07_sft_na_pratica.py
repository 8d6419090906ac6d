"""Exercícios conferíveis do Capítulo 7, terceira parte: o template de chat de treino (núcleo) e a agenda da
taxa de aprendizado."""
from __future__ import annotations

import math
import re

from .comparar import Incorreto
from .contexto import celula_da_resposta, celulas_do_notebook, sem_comentarios
from .nucleo import ErroComum, Exercicio, ____  # noqa: F401  (____: a lacuna da célula inicial)

NOTEBOOK = "cap07_sft_na_pratica"

TAXA, AQUECIMENTO, PASSOS = 2e-3, 3, 12


# ---------------------------------------------------------------- exercício 1 (núcleo): o template de treino
def _conversas():
    """Conversas de formatos que a lição não usa: três turnos sem mensagem de sistema, um turno só sem
    sistema, e um turno com sistema próprio e uma resposta de duas linhas."""
    from ..style import HELDOUT_QUESTIONS

    q = list(HELDOUT_QUESTIONS)
    return [
        [{"role": "user", "content": q[0]}, {"role": "assistant", "content": "It depends on the season."},
         {"role": "user", "content": q[1]}, {"role": "assistant", "content": "Mostly water vapour."},
         {"role": "user", "content": "And at night?"}, {"role": "assistant", "content": "It cools down."}],
        [{"role": "user", "content": q[2]}, {"role": "assistant", "content": "Yes."}],
        [{"role": "system", "content": "Answer in two lines."}, {"role": "user", "content": q[3]},
         {"role": "assistant", "content": "First line.\nSecond line."}],
    ]


def _linha_seguir(linha: str) -> bool:
    """A linha `seguir` do exercício 1, descomentada (com espaços ou um comentário): ela não é cópia."""
    return re.fullmatch(r"\s*training_template\s*=\s*my_training_template\s*(#.*)?", linha) is not None


def _conferir_ex1(valores, ns):
    from ..chat_template import assistant_mask_by_hand

    template, tokenizer = valores["my_training_template"], ns["tokenizer"]
    # o template do curso já pronto (depois de um "Run All", a lição o deixa em `training_template`) não vale:
    # a célula que definiu a resposta, no histórico do IPython, não pode só copiá-lo
    from ..chat_template import training_chat_template

    celula = celula_da_resposta(ns, "my_training_template")
    codigo = "\n".join(linha for linha in sem_comentarios(celula).splitlines()   # sem a linha `seguir`
                        if not _linha_seguir(linha))
    copiado_antes = celula and template == training_chat_template() and "generation" not in codigo
    if copiado_antes or re.search(
            r"\b(training_chat_template|training_template|get_training_chat_template)\b|template_chat_treino", codigo):
        raise Incorreto("a resposta copia o template do curso (`training_chat_template`, `training_template` ou o "
                        "arquivo .jinja, também por uma variável de outra célula): escreva o texto do template na "
                        "célula do exercício, partindo do original impresso acima.")
    if not isinstance(template, str) or "{% generation %}" not in template.replace("{%-", "{%").replace("-%}", "%}"):
        raise Incorreto("`my_training_template` deveria ser o texto do template (uma string) com um bloco "
                        "`{% generation %} … {% endgeneration %}` em volta da fala do assistente.")
    fim = tokenizer.convert_tokens_to_ids("<|im_end|>")
    for n, conversa in enumerate(_conversas(), start=1):
        sistema = "sem mensagem de sistema" if conversa[0]["role"] != "system" else "com mensagem de sistema"
        for prompt in (False, True):
            try:
                texto = tokenizer.apply_chat_template(conversa, tokenize=False, add_generation_prompt=prompt,
                                                      chat_template=template)
            except Exception as erro:                 # um template com erro de sintaxe do Jinja
                raise Incorreto(f"o tokenizador não conseguiu usar o template: {type(erro).__name__}: {erro}. "
                                "Confira as aspas e os blocos `{% … %}` e `{{ … }}`.") from None
            original = tokenizer.apply_chat_template(conversa, tokenize=False, add_generation_prompt=prompt)
            if texto != original:
                if conversa[0]["role"] != "system" and "You are a helpful AI assistant" not in texto:
                    raise Incorreto(f"na conversa de teste {n} ({sistema}), faltou a mensagem de sistema padrão "
                                    "que o template do SmolLM2 põe quando a conversa não traz uma (o bloco "
                                    "`{% if loop.first and messages[0]['role'] != 'system' %}`).")
                if prompt:
                    raise Incorreto("com `add_generation_prompt=True`, o texto deveria terminar com "
                                    "`<|im_start|>assistant\\n`, como no template original (a geração usa).")
                raise Incorreto(f"na conversa de teste {n} ({sistema}), o texto do seu template difere do "
                                "original. O template de treino só pode acrescentar as marcas `{% generation %}`, "
                                "sem mudar nenhum caractere do que é escrito.")
        marcado = tokenizer.apply_chat_template(conversa, tokenize=True, return_dict=True, chat_template=template,
                                                return_assistant_tokens_mask=True)
        ids, certa = assistant_mask_by_hand(tokenizer, conversa)
        obtida = list(marcado["assistant_masks"])
        if obtida == certa:
            continue
        fins_certos = sum(1 for t, m in zip(ids, certa) if t == fim and m)
        fins_seus = sum(1 for t, m in zip(ids, obtida) if t == fim and m)
        if fins_seus < fins_certos:
            raise Incorreto(f"na conversa de teste {n}, o `<|im_end|>` que fecha cada fala do assistente ficou fora "
                            "da máscara: ponha-o dentro do `{% generation %}`; é ele que ensina o modelo a parar "
                            "(seção 7.12.2).")
        if sum(obtida) > sum(certa):
            raise Incorreto(f"na conversa de teste {n}, a máscara marcou tokens demais: o cabeçalho "
                            "`<|im_start|>assistant\\n` e o `\\n` depois do `<|im_end|>` ficam **fora** do "
                            "`{% generation %}`; dentro, só o conteúdo e o `<|im_end|>`.")
        raise Incorreto(f"na conversa de teste {n}, a máscara do seu template não é a esperada: 1 no conteúdo de "
                        "cada fala do assistente e no seu `<|im_end|>`, 0 no resto.")


ex1 = Exercicio(
    "cap07_sft_na_pratica.ex1", "o template de chat de treino, com {% generation %}", ("my_training_template",),
    dicas=(
        "Parta do template original, impresso acima (`tokenizer.chat_template`). Ele escreve todas as mensagens "
        "com a mesma expressão `{{'<|im_start|>' + message['role'] + …}}`; separe a do assistente com "
        "`{% if message['role'] == 'assistant' %} … {% else %} … {% endif %}`.",
        "Na fala do assistente, escreva o cabeçalho `'<|im_start|>assistant\\n'` fora do bloco, depois "
        "`{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}` e, fora de novo, o "
        "`'\\n'` final. Guarde o bloco da mensagem de sistema padrão e o `add_generation_prompt` como estão.",
        "Em Python, monte a string em pedaços entre parênteses, como `(\"{% for message in messages %}\" "
        "\"…\" \"{% endfor %}\")`; dentro das aspas do Jinja, `\\n` é a quebra de linha. Confira com "
        "`tokenizer.apply_chat_template(conversa, tokenize=False, chat_template=my_training_template)`, que "
        "deve dar o mesmo texto do original.",
    ),
    conferir=_conferir_ex1,
    tipo="nucleo",
    inicio="""
my_training_template = ____   # o template do SmolLM2 com {% generation %} em volta da fala do assistente (uma string)
""",
    seguir="training_template = my_training_template",
    contexto=celulas_do_notebook(NOTEBOOK, ("7c0a0001",)),
)


def _fator(passo, aquecimento, total, aquecimento_desde_1=False, sem_aquecimento_no_cosseno=False, linear=False):
    """O fator da agenda num passo (ou o de um dos erros comuns)."""
    if passo < aquecimento:
        return (passo + 1 if aquecimento_desde_1 else passo) / aquecimento
    inicio = 0 if sem_aquecimento_no_cosseno else aquecimento
    progresso = (passo - inicio) / max(1, total - inicio)
    return max(0.0, 1 - progresso) if linear else max(0.0, 0.5 * (1 + math.cos(math.pi * progresso)))


def _entradas(ns):
    """Agendas que o notebook nunca mostra (semente própria): outros picos, aquecimentos e totais, inclusive
    sem aquecimento e com o aquecimento de um passo só; cada caso pede a taxa de um passo."""
    import random

    gen = random.Random(1207)
    configs = [(5e-4, 0, 10), (1e-3, 1, 5), (3e-4, 10, 40), (2e-3, 3, 12)]
    casos = []
    for pico, aquecimento, total in configs:
        passos = sorted({0, max(0, aquecimento - 1), aquecimento, total - 1, *gen.sample(range(total), 3)})
        casos += [dict(step=p, peak=pico, warmup=aquecimento, total=total) for p in passos]
    return casos


def _do_transformers(step, peak, warmup, total):
    """A taxa no passo ``step``, pela agenda do próprio ``transformers`` (outro caminho que não a fórmula)."""
    import torch
    from transformers import get_cosine_schedule_with_warmup

    otimizador = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=peak)
    agenda = get_cosine_schedule_with_warmup(otimizador, warmup, total)
    for _ in range(step):
        otimizador.step()
        agenda.step()
    return otimizador.param_groups[0]["lr"]


def _como_erro(**kw):
    return lambda ns: {"lr_at": lambda step, peak, warmup, total: peak * _fator(step, warmup, total, **kw)}


ex2 = Exercicio(
    "cap07_sft_na_pratica.ex2", "a taxa de cada passo, com aquecimento e cosseno", ("lr_at",),
    dicas=(
        "Nos passos de aquecimento (0, 1, …, warmup − 1), a taxa sobe em linha reta de zero: step/warmup da "
        "taxa máxima. O primeiro passo, o 0, usa taxa zero.",
        "Depois do aquecimento, o cosseno vai de 1 a 0 ao longo dos passos que sobram: o progresso é "
        "(step − warmup)/(total − warmup), e o fator é ½(1 + cos(π · progresso)).",
        "Use os argumentos da função, não as constantes da lição (`T`, `WARMUP`, `PEAK`): o verificador chama "
        "`lr_at` com outras agendas, inclusive sem aquecimento (warmup = 0).",
    ),
    esperado=lambda ns: {"lr_at": _do_transformers},
    entradas=_entradas,
    rtol=1e-6, atol=1e-12,           # a cauda da agenda vale ~1e-7: uma tolerância absoluta de 1e-6 aceitaria zero
    erros_comuns=(
        ErroComum("o aquecimento começou em 1/warmup: no `transformers`, o passo 0 usa o fator 0, e o primeiro "
                  "passo do treino não mexe em nada.", _como_erro(aquecimento_desde_1=True),
                  dica="No aquecimento o fator é `step / warmup`, não `(step + 1) / warmup`: o passo 0 tem taxa "
                       "zero."),
        ErroComum("o cosseno começou no passo 0: ele só começa depois do aquecimento, com progresso "
                  "(step − warmup)/(total − warmup).", _como_erro(sem_aquecimento_no_cosseno=True),
                  dica="Conte o progresso do cosseno a partir do fim do aquecimento: `(step - warmup) / "
                       "(total - warmup)`."),
        ErroComum("esse é o decaimento linear (`lr_scheduler_type=\"linear\"`); pede-se o cosseno, "
                  "½(1 + cos(π · progresso)).", _como_erro(linear=True),
                  dica="Troque `1 - progress` por `0.5 * (1 + math.cos(math.pi * progress))`."),
    ),
    atalhos=(
        ErroComum("`lr_at` devolve as taxas da agenda da lição (12 passos, aquecimento 3, pico 2e-3), seja qual "
                  "for a agenda pedida: use os argumentos `peak`, `warmup` e `total`.",
                  lambda ns: {"lr_at": lambda step, peak, warmup, total: (
                      TAXA * _fator(step, AQUECIMENTO, PASSOS) if step < PASSOS else -1.0)}),
    ),
    proibidas=("transformers.get_cosine_schedule_with_warmup",
               "transformers.optimization.get_cosine_schedule_with_warmup",
               "transformers.optimization._get_cosine_schedule_with_warmup_lr_lambda",
               "torch.optim.lr_scheduler.LambdaLR", "torch.optim.lr_scheduler.CosineAnnealingLR"),
    inicio="""
def lr_at(step, peak, warmup, total):
    # a taxa de aprendizado no passo `step` (0, 1, …, total − 1) da agenda com aquecimento linear de `warmup`
    # passos até `peak` e cosseno até zero no passo `total`; devolve um float
    return ____
""",
    contexto=celulas_do_notebook(NOTEBOOK, ("7c0a0001",)),
)
