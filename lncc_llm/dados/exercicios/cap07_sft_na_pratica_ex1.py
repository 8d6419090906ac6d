my_training_template = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"                 # o sistema padrão, como no original
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}"
    "{% if message['role'] == 'assistant' %}"
    "{{ '<|im_start|>assistant\n' }}"                                          # o cabeçalho fica fora da perda
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}"   # a resposta e o seu fim, dentro
    "{{ '\n' }}"
    "{% else %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
three_turns = [{"role": "user", "content": "Hi!"}, {"role": "assistant", "content": "Hello."},
               {"role": "user", "content": "Rain?"}, {"role": "assistant", "content": "Clouds."},
               {"role": "user", "content": "Why?"}, {"role": "assistant", "content": "Cooling air."}]
marked = tokenizer.apply_chat_template(three_turns, tokenize=True, return_dict=True, return_assistant_tokens_mask=True,
                                       chat_template=my_training_template)
print("na perda:", repr(tokenizer.decode([t for t, m in zip(marked["input_ids"], marked["assistant_masks"]) if m])))
