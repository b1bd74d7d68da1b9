"""The Python package against PyTorch's own modules on the CPU: each kernel
output is compared with the f64 evaluation of the same module (weights and
input as the kernel sees them) with a stated tolerance, and with PyTorch's
own output in the kernel's dtype."""
import os

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ffnc

EXAMPLES = os.environ["FFNC_EXAMPLES"]
CACHE = os.environ["FFNC_TEST_CACHE"]


def close(got, ref, rel):
    """|got - ref| <= rel (1 + |ref|) elementwise, ref in f64."""
    err = (got.double() - ref).abs()
    bound = rel * (1 + ref.abs())
    assert bool((err <= bound).all()), "max err/bound %.3g" % float(
        (err / bound).max())


class LlamaMLP(torch.nn.Module):
    """LLaMA's MLP as Hugging Face writes it."""

    def __init__(self, d, f):
        super().__init__()
        self.gate_proj = torch.nn.Linear(d, f, bias=False)
        self.up_proj = torch.nn.Linear(d, f, bias=False)
        self.down_proj = torch.nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


LLAMA_NAMES = {"w_gate": "gate_proj.weight", "w_up": "up_proj.weight",
               "w_down": "down_proj.weight"}


def test_gelu_mlp_f32_matches_pytorch():
    torch.manual_seed(1)
    fc1, fc2 = torch.nn.Linear(96, 384), torch.nn.Linear(384, 96)
    k = ffnc.compile("ffn mlp { d_model = 96; d_ff = 384; activation = gelu }",
                     cache_dir=CACHE)
    k.load({"w_up": fc1.weight, "b_up": fc1.bias, "w_down": fc2.weight,
            "b_down": fc2.bias})
    x = torch.randn(2, 7, 96)  # leading dimensions are kept
    with torch.no_grad():
        y = k(x)
        ref = fc2.double()(F.gelu(fc1.double()(x.double())))
        assert y.shape == x.shape and y.dtype == torch.float32
        # f32 sums of 96 and 384 terms: well inside 1e-5.
        close(y, ref, 1e-5)
        close(fc2.float()(F.gelu(fc1.float()(x))), ref, 1e-5)


@pytest.mark.parametrize("dtype,rel", [(torch.float32, 1e-5),
                                       (torch.bfloat16, 2e-2)])
def test_llama_mlp_matches_pytorch(dtype, rel):
    torch.manual_seed(2)
    mlp = LlamaMLP(128, 352).to(dtype)
    spec = ("ffn llama { d_model = 128; d_ff = 352; gate = swiglu; "
            "bias = false; dtype = %s }"
            % ("bf16" if dtype == torch.bfloat16 else "f32"))
    k = ffnc.compile(spec, cache_dir=CACHE)
    k.load(mlp.state_dict(), names=LLAMA_NAMES)
    x = torch.randn(33, 128).to(dtype)
    with torch.no_grad():
        y = k(x)
        ref = mlp.double()(x.double())
    assert y.dtype == dtype
    # bf16: the output's own rounding (2^-8) and the hidden activations'
    # (the kernel may round them to bf16 for its pair dot products) on
    # values of order 1.
    close(y, ref, rel)


def test_numpy_arrays():
    rng = np.random.default_rng(3)
    w1 = rng.standard_normal((48, 32), dtype=np.float32) / 8  # [out, in]
    w2 = rng.standard_normal((32, 48), dtype=np.float32) / 8
    k = ffnc.compile("ffn relu { d_model = 32; d_ff = 48; activation = relu; "
                     "bias = false; residual = true }", cache_dir=CACHE)
    k.load({"w_up": w1, "w_down": w2})
    x = rng.standard_normal((4, 32), dtype=np.float32)
    y = k(x)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32
    x64 = x.astype(np.float64)
    ref = np.maximum(x64 @ w1.T.astype(np.float64), 0) @ w2.T + x64
    assert np.all(np.abs(y - ref) <= 1e-5 * (1 + np.abs(ref)))
    # The same weights [in, out].
    k.load({"w_up": w1.T, "w_down": w2.T}, layout="in_out")
    assert np.array_equal(k(x), y)


def test_spec_file_and_info():
    path = os.path.join(EXAMPLES, "classic.ffn")
    k = ffnc.compile(path, name="bert_base", cache_dir=CACHE)
    assert k.descriptor["d_model"] == 768 and k.descriptor["d_ff"] == 3072
    assert [p for p, _ in k.params][:2] == ["w_up", "w_down"]
    bert = [b for b in ffnc.info(path) if b["name"] == "bert_base"][0]
    # ffnc info's numbers (test/Driver/info-classic.test): 4,722,432 FFN
    # parameters plus 1,536 of the norm.
    assert bert["total_parameters"] == 4722432 + 1536
    assert bert["flops_per_token"] == 9437184


def test_cache_hit():
    spec = "ffn c { d_model = 16; d_ff = 32; activation = silu }"
    ffnc.compile(spec, cache_dir=CACHE)
    hits, _ = ffnc.cache_stats()
    ffnc.compile(spec, cache_dir=CACHE)
    assert ffnc.cache_stats()[0] == hits + 1


def test_errors_name_what_is_wrong():
    with pytest.raises(ffnc.CompileError, match=r"<spec>:1:47: error: "
                       r"unknown activation 'gleu'; did you mean 'gelu'\?"):
        ffnc.compile("ffn e { d_model = 16; d_ff = 32; activation = gleu }",
                     cache_dir=CACHE)
    with pytest.raises(ValueError, match="2 ffn blocks"):
        ffnc.compile("ffn a { d_model = 8; d_ff = 8; activation = relu }\n"
                     "ffn b { d_model = 8; d_ff = 8; activation = relu }",
                     cache_dir=CACHE)
    k = ffnc.compile("ffn mlp { d_model = 16; d_ff = 32; activation = relu; "
                     "bias = false }", cache_dir=CACHE)
    with pytest.raises(ValueError, match="parameter 'w_up'"):
        k.load({"w_up": torch.zeros(16, 16), "w_down": torch.zeros(16, 32)})
    with pytest.raises(KeyError, match="no weights 'w_down'"):
        k.load({"w_up": torch.zeros(32, 16)})
    with pytest.raises(ValueError, match="torch.float64"):
        k.load({"w_up": torch.zeros(32, 16, dtype=torch.float64),
                "w_down": torch.zeros(16, 32)})
    with pytest.raises(ValueError, match="not set|was not set"):
        k(torch.zeros(1, 16))
    k.load({"w_up": torch.zeros(32, 16), "w_down": torch.zeros(16, 32)})
    with pytest.raises(ValueError, match="last dimension is 8"):
        k(torch.zeros(3, 8))


def write_safetensors(path, tensors):
    """A safetensors file of `tensors` (name -> CPU tensor), written here
    by the format's definition: 8-byte header length, JSON, data."""
    import json
    import struct
    header, data = {}, b""
    names = {torch.float32: "F32", torch.bfloat16: "BF16"}
    for name, t in tensors.items():
        raw = t.contiguous().view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


@pytest.mark.parametrize("dtype,rel", [(torch.float32, 1e-5),
                                       (torch.bfloat16, 2e-2)])
def test_safetensors_round_trip(tmp_path, dtype, rel):
    """A checkpoint written to a safetensors file and read back by the
    kernel computes what the PyTorch module holding the same weights
    computes."""
    torch.manual_seed(4)
    mlp = LlamaMLP(64, 176).to(dtype)
    prefix = "model.layers.3.mlp."
    path = tmp_path / "mlp.safetensors"
    write_safetensors(path, {prefix + k: v
                             for k, v in mlp.state_dict().items()})
    spec = ("ffn llama { d_model = 64; d_ff = 176; gate = swiglu; "
            "bias = false; dtype = %s }"
            % ("bf16" if dtype == torch.bfloat16 else "f32"))
    k = ffnc.compile(spec, cache_dir=CACHE)
    k.load_safetensors(path, {p: prefix + n for p, n in LLAMA_NAMES.items()})
    x = torch.randn(9, 64).to(dtype)
    with torch.no_grad():
        close(k(x), mlp.double()(x.double()), rel)
    with pytest.raises(ValueError, match="has no tensor 'w_up'"):
        k.load_safetensors(path)
    with pytest.raises(ValueError, match=r"must be .* \[64, 176\] \(\[in, out\]\)"):
        k.load_safetensors(path, {p: prefix + n
                                  for p, n in LLAMA_NAMES.items()},
                           layout="in_out")
