"""Testes de lncc_llm.lora_layer: o forward do LoRA contra o do peft."""
import pytest
import torch

from lncc_llm.lora_layer import lora_forward

peft = pytest.importorskip("peft")


def _peft_linear(d, k, r, alpha, bias, seed):
    """Uma nn.Linear com adaptador do peft, com A e B sorteados (B ≠ 0, ao contrário do início do treino)."""
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(seed)
    modelo = torch.nn.Sequential()
    modelo.add_module("proj", torch.nn.Linear(k, d, bias=bias).double())
    adaptado = get_peft_model(modelo, LoraConfig(r=r, lora_alpha=alpha, target_modules=["proj"],
                                                  lora_dropout=0.0))
    camada = adaptado.base_model.model.proj
    with torch.no_grad():
        camada.lora_B["default"].weight.normal_()
    return camada


@pytest.mark.parametrize("d, k, r, alpha, bias", [(6, 4, 1, 1, False), (5, 7, 2, 16, True), (12, 8, 8, 4, True)])
def test_igual_ao_peft(d, k, r, alpha, bias):
    camada = _peft_linear(d, k, r, alpha, bias, seed=d)
    x = torch.randn(3, 2, k, dtype=torch.float64)
    base = camada.base_layer
    obtido = lora_forward(x, base.weight, camada.lora_A["default"].weight, camada.lora_B["default"].weight,
                          alpha, r, base.bias)
    torch.testing.assert_close(obtido, camada(x), rtol=0, atol=1e-12)
    # sem o adaptador (B = 0) fica só a base; com α/r errado, não bate
    A, B = camada.lora_A["default"].weight, camada.lora_B["default"].weight
    torch.testing.assert_close(lora_forward(x, base.weight, A, torch.zeros_like(B), alpha, r, base.bias), base(x))
    if alpha != r:                                     # a escala r/α no lugar de α/r não bate
        invertida = base(x) + (r / alpha) * (x @ A.T) @ B.T
        assert not torch.allclose(invertida, camada(x))


def test_formatos_errados_em_portugues():
    W, A, B = torch.zeros(6, 4), torch.zeros(2, 4), torch.zeros(6, 2)
    with pytest.raises(ValueError, match="A precisa ser 2 × 4"):
        lora_forward(torch.zeros(4), W, A.T, B, 16, 2)
    with pytest.raises(ValueError, match="última dimensão"):
        lora_forward(torch.zeros(5), W, A, B, 16, 2)
