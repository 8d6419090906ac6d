"""Testes de lncc_llm.quant4bit: o quantizador de 4 bits e a quantização dupla, contra o bitsandbytes."""
import pytest
import torch

from lncc_llm.quant4bit import double_quantize_absmax, fake_quantize_4bit, nearest_level

bnb = pytest.importorskip("bitsandbytes")
F = bnb.functional


def _pesos(seed, shape, escala=0.05):
    """Pesos com caudas (t de Student), como os de uma camada treinada."""
    g = torch.Generator().manual_seed(seed)
    normal = torch.randn(shape, generator=g)
    qui2 = torch.randn((*shape, 4), generator=g).pow(2).mean(-1)
    return escala * normal / qui2.sqrt()


def _bnb_4bit(w, quant_type, blocksize=64):
    q, estado = F.quantize_4bit(w, blocksize=blocksize, quant_type=quant_type)
    return F.dequantize_4bit(q, estado).reshape(w.shape), estado.code


@pytest.mark.parametrize("quant_type", ["nf4", "fp4"])
@pytest.mark.parametrize("blocksize", [64, 128])
def test_4bit_igual_ao_bitsandbytes(quant_type, blocksize):
    w = _pesos(1, (96, 256))
    esperado, tabela = _bnb_4bit(w, quant_type, blocksize)
    torch.testing.assert_close(fake_quantize_4bit(w, tabela, blocksize), esperado, rtol=0, atol=1e-7)


def test_4bit_blocos_sao_pesos_seguidos_e_o_formato_volta():
    w = _pesos(2, (8, 128))
    _, tabela = _bnb_4bit(w, "nf4")
    # um absmax por bloco de 64 pesos seguidos: um peso enorme só muda o seu bloco
    w2 = w.clone()
    w2[0, 0] = 10.0
    a, b = fake_quantize_4bit(w, tabela), fake_quantize_4bit(w2, tabela)
    assert a.shape == w.shape
    mudou = (a != b).reshape(-1, 64).any(dim=1)
    assert mudou[0] and not mudou[1:].any()
    # o maior |peso| de cada bloco volta exato (nível ±1 × absmax)
    blocos = w.reshape(-1, 64)
    pos = blocos.abs().argmax(dim=1)
    assert torch.equal(a.reshape(-1, 64).gather(1, pos[:, None]), blocos.gather(1, pos[:, None]))


def test_4bit_nao_e_uma_grade_uniforme_nem_absmax_por_linha():
    w = _pesos(3, (4, 256))
    esperado, tabela = _bnb_4bit(w, "nf4")
    uniforme = torch.linspace(-1, 1, 16)
    assert (fake_quantize_4bit(w, uniforme) - esperado).abs().max() > 1e-3
    por_linha = fake_quantize_4bit(w, tabela, blocksize=256)
    assert (por_linha - esperado).abs().max() > 1e-3


def test_4bit_bloco_zero_e_erros_em_portugues():
    w = torch.zeros(128)
    w[64:] = _pesos(4, (64,))
    _, tabela = _bnb_4bit(w, "nf4")
    assert torch.equal(fake_quantize_4bit(w, tabela)[:64], torch.zeros(64))
    with pytest.raises(ValueError, match="múltiplo do tamanho do bloco"):
        fake_quantize_4bit(torch.ones(100), tabela)
    with pytest.raises(ValueError, match="16 valores"):
        fake_quantize_4bit(w, tabela[:8])


def test_nivel_mais_proximo():
    niveis = torch.tensor([-1.0, 0.0, 0.5, 1.0])
    assert nearest_level(torch.tensor([0.3, 0.2, -0.6, 0.9]), niveis).tolist() == [2, 1, 0, 3]


@pytest.mark.parametrize("n_blocos", [256 * 3, 5184, 300])
def test_quantizacao_dupla_igual_ao_bitsandbytes(n_blocos):
    # absmax de verdade: os de uma matriz de pesos em blocos de 64, com o último bloco de 256 incompleto
    w = _pesos(5, (n_blocos, 64))
    _, estado = F.quantize_4bit(w, blocksize=64, quant_type="nf4", compress_statistics=True)
    _, simples = F.quantize_4bit(w, blocksize=64, quant_type="nf4")
    esperado = F.dequantize_blockwise(estado.absmax, estado.state2) + estado.offset
    obtido = double_quantize_absmax(simples.absmax, estado.state2.code)
    # o nível mais próximo; a busca binária do bitsandbytes na CPU, em poucos valores, fica com o vizinho um
    # pouco mais distante: onde os dois diferem, a nossa escolha está mais perto do valor centrado
    diferentes = (obtido - esperado).abs() > 1e-7
    assert diferentes.float().mean() < 0.01
    centrado = simples.absmax - simples.absmax.mean()
    assert ((obtido - simples.absmax.mean() - centrado).abs()[diferentes]
            <= (esperado - simples.absmax.mean() - centrado).abs()[diferentes]).all()
    # e erra pouco: em média, o absmax em 8 bits fica a menos de 1 % do original
    assert ((obtido - simples.absmax).abs() / simples.absmax).mean() < 0.01


def test_quantizacao_dupla_precisa_da_media_e_erros_em_portugues():
    w = _pesos(6, (512, 64))
    _, estado = F.quantize_4bit(w, blocksize=64, quant_type="nf4", compress_statistics=True)
    _, simples = F.quantize_4bit(w, blocksize=64, quant_type="nf4")
    esperado = F.dequantize_blockwise(estado.absmax, estado.state2) + estado.offset
    sem_media, _ = F.quantize_blockwise(simples.absmax, code=estado.state2.code, blocksize=256)
    assert not torch.equal(F.dequantize_blockwise(sem_media, _), esperado)
    with pytest.raises(ValueError, match="256 valores"):
        double_quantize_absmax(simples.absmax, estado.state2.code[:16])
    with pytest.raises(ValueError, match="1-D"):
        double_quantize_absmax(simples.absmax[None], estado.state2.code)


def test_bytes_de_uma_camada_de_4_bits():
    from lncc_llm.quant4bit import linear4bit_bytes

    def camada_4bit(dupla):
        camada = bnb.nn.Linear4bit(256, 96, bias=False, quant_type="nf4", compress_statistics=dupla)
        camada.load_state_dict({"weight": _pesos(7, (96, 256))})
        return camada.to("cpu")                               # quantiza ao ir para o dispositivo

    camada = camada_4bit(False)
    n = 96 * 256
    contado = linear4bit_bytes(camada)
    assert contado == {"quantizado": n // 2 + 4 * (n // 64), "copia": 4 * n}
    # e a cópia é, de fato, do tamanho da matriz que a dequantize_4bit escreve
    copia = F.dequantize_4bit(camada.weight.data, camada.weight.quant_state)
    assert copia.numel() * copia.element_size() == contado["copia"]
    with pytest.raises(ValueError, match="Linear4bit"):
        linear4bit_bytes(torch.nn.Linear(4, 4))
    with pytest.raises(ValueError, match="quantização dupla"):
        linear4bit_bytes(camada_4bit(True))
