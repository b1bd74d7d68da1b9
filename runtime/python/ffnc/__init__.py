"""ffnc from Python: compile an FFN spec for this CPU and run it on numpy
arrays or PyTorch CPU tensors.

    import ffnc, torch
    k = ffnc.compile("ffn mlp { d_model = 64; d_ff = 256; activation = gelu }")
    k.load({"w_up": fc1.weight, "b_up": fc1.bias,
            "w_down": fc2.weight, "b_down": fc2.bias})
    y = k(x)   # fc2(F.gelu(fc1(x)))

Matrices are taken as nn.Linear stores them ([out, in]) unless
``layout="in_out"``; bf16 tensors are passed as they are. Inputs and
outputs keep their leading dimensions; the kernel sees rows of d_model.
"""

import os

from . import _ffnc
from ._ffnc import CompileError

__all__ = ["compile", "info", "Kernel", "CompileError", "cache_stats"]


def _spec_text(spec_or_path):
    """The spec's text: a path to a .ffn file, or the text itself."""
    if "{" not in spec_or_path and os.path.isfile(spec_or_path):
        with open(spec_or_path, encoding="utf-8") as f:
            return f.read()
    return spec_or_path


def _block_names(text):
    return [b["name"] for b in _ffnc.info(text)]


def compile(spec_or_path, name=None, target="host", threads=0,
            batch_invariant=False, strategy=None, cache_dir=None):
    """Compiles block `name` of a spec (text or a .ffn path; the only block
    if `name` is None) for `target` and returns its Kernel. `threads`: the
    threads it will run on (0: this machine's cores). Libraries are cached
    on disk (ffn/jit.h). A spec mistake raises CompileError with ffnc's
    located diagnostics."""
    text = _spec_text(spec_or_path)
    if name is None:
        names = _block_names(text)
        if len(names) != 1:
            raise ValueError("the spec has %d ffn blocks (%s): pass name="
                             % (len(names), ", ".join(names)))
        name = names[0]
    options = ["--target=%s" % target, "--kernel-threads=%d" % threads]
    if batch_invariant:
        options.append("--batch-invariant")
    if strategy:
        options.append("--strategy=%s" % strategy)
    if cache_dir:
        options.append("--cache-dir=%s" % cache_dir)
    kernel = Kernel(_ffnc.Kernel(text, name, " ".join(options)))
    if threads:
        kernel.set_threads(threads)
    return kernel


def info(spec_or_path):
    """Per block: d_model, d_ff, total_parameters, weight_bytes,
    flops_per_token (the numbers `ffnc info` prints)."""
    return _ffnc.info(_spec_text(spec_or_path))


def cache_stats():
    """(hits, builds) of this process's compile cache lookups."""
    return _ffnc.cache_stats()


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _raw(array, dtype):
    """`array` as a C-contiguous buffer of the kernel's dtype, without a
    copy where it already is one: numpy arrays as they are, PyTorch CPU
    tensors through their numpy view (bf16 as int16)."""
    torch = _torch()
    if torch is not None and isinstance(array, torch.Tensor):
        if array.device.type != "cpu":
            raise ValueError("ffnc runs CPU kernels; the tensor is on %s"
                             % array.device)
        want = {"f32": torch.float32, "bf16": torch.bfloat16,
                "f16": torch.float16}[dtype]
        if array.dtype != want:
            raise ValueError("the tensor is %s; this kernel's dtype is %s"
                             % (array.dtype, dtype))
        array = array.detach().contiguous()
        if dtype == "bf16":
            return array.view(torch.int16).numpy()
        return array.numpy()
    import numpy as np
    array = np.ascontiguousarray(array)
    if dtype == "f32" and array.dtype != np.float32:
        raise ValueError("the array is %s; this kernel's dtype is f32"
                         % array.dtype)
    if dtype == "f16" and array.dtype != np.float16:
        raise ValueError("the array is %s; this kernel's dtype is f16"
                         % array.dtype)
    if dtype == "bf16" and array.dtype not in (np.int16, np.uint16):
        raise ValueError("bf16 data from numpy must be its 16-bit patterns "
                         "(int16/uint16); pass a torch.bfloat16 tensor")
    return array


class Kernel:
    """A compiled FFN kernel: load() its parameters, then call it."""

    def __init__(self, native):
        self._native = native
        self.descriptor = native.descriptor
        self.dtype = self.descriptor["dtype"]
        self.d_model = self.descriptor["d_model"]

    @property
    def params(self):
        """[(name, shape)] in the order the kernel declares them (logical
        [in, out] shapes; stacked ones with their count first)."""
        return list(self.descriptor["params"])

    def set_threads(self, threads):
        self._native.set_threads(threads)

    def load(self, weights, names=None, layout="out_in"):
        """Sets every parameter from `weights`, a mapping (a state_dict, a
        dict of tensors or arrays). `names` maps a parameter ("w_up") to its
        key in `weights` (default: the parameter's own name). Matrices are
        [out, in] as nn.Linear stores them, or [in, out] with
        layout="in_out"."""
        if layout not in ("out_in", "in_out"):
            raise ValueError("layout must be 'out_in' or 'in_out'")
        names = dict(names or {})
        unknown = set(names) - {p for p, _ in self.params}
        if unknown:
            raise ValueError("no parameter %s; the kernel's: %s" % (
                ", ".join(sorted(unknown)),
                ", ".join(p for p, _ in self.params)))
        for param, _ in self.params:
            key = names.get(param, param)
            if key not in weights:
                raise KeyError("no weights '%s' for parameter '%s'"
                               % (key, param))
            self._native.set_param(param, _raw(weights[key], self.dtype),
                                   layout == "out_in")

    def load_safetensors(self, path, names=None, layout="out_in"):
        """Sets every parameter from a safetensors file (a Hugging Face
        checkpoint): `names` maps a parameter ("w_up") to its tensor name
        (default: the parameter's own name); each tensor's dtype and shape
        are checked first (ffn_kernel_set_params_safetensors), and a
        mismatch raises an error naming the tensor."""
        if layout not in ("out_in", "in_out"):
            raise ValueError("layout must be 'out_in' or 'in_out'")
        self._native.load_safetensors(os.fspath(path), dict(names or {}),
                                      layout == "out_in")

    def __call__(self, x):
        """y = FFN(x) over the last dimension (d_model), the type of x."""
        torch = _torch()
        if x.shape[-1] != self.d_model:
            raise ValueError("the input's last dimension is %d, d_model %d"
                             % (x.shape[-1], self.d_model))
        if torch is not None and isinstance(x, torch.Tensor):
            x = x.contiguous()
            y = torch.empty_like(x)
            self._native.run(_raw(x, self.dtype), _raw(y, self.dtype))
            return y
        import numpy as np
        src = _raw(x, self.dtype)
        y = np.empty_like(src)
        self._native.run(src, y)
        return y
