#!/usr/bin/env python3
"""Times ffnc's GPU kernels against PyTorch's eager CUDA path (cuBLAS GEMMs
plus PyTorch's elementwise kernels) on the same weights, in one process,
interleaved, with CUDA events. Reports the median time of each, the ratio
(PyTorch time / ffnc time: above 1 means ffnc is faster), TFLOP/s (GEMM
FLOPs only) and the weight-streaming bandwidth.

    gpu_bench.py libffn_runtime.so kernels.so name:tokens[,tokens...] ...

Weights are nn.Linear-initialized. Each timing is a batch of back-to-back
runs between two CUDA events (GPU time, not the Python caller's); weights
larger than the L2 cache stream from memory on every run, smaller ones
(BERT) stay in L2 for both contenders.
"""
import ctypes
import statistics
import sys

import torch
import torch.nn.functional as F


def load_runtime(path):
    rt = ctypes.CDLL(path)
    rt.ffn_context_create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    rt.ffn_kernel_load_library.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                           ctypes.c_char_p,
                                           ctypes.POINTER(ctypes.c_void_p)]
    rt.ffn_kernel_descriptor.restype = ctypes.c_void_p
    rt.ffn_kernel_descriptor.argtypes = [ctypes.c_void_p]
    rt.ffn_kernel_set_param.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                        ctypes.c_void_p, ctypes.c_size_t,
                                        ctypes.c_int]
    rt.ffn_kernel_run_device.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                         ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_void_p]
    rt.ffn_context_last_error.restype = ctypes.c_char_p
    rt.ffn_context_last_error.argtypes = [ctypes.c_void_p]
    return rt


def check(rt, ctx, status, what):
    if status != 0:
        raise RuntimeError(f"{what}: {rt.ffn_context_last_error(ctx).decode()}")


# ffn_kernel_desc fields, 8 bytes each (ffn/kernel_abi.h).
DESC_FIELDS = ["abi_version", "struct_size", "name", "target", "kind",
               "device", "d_model", "d_ff", "dtype", "activation", "gated",
               "residual", "norm", "norm_position", "norm_eps",
               "operand_rounding", "weight_quant", "quant_group", "experts",
               "shared_experts", "top_k", "router", "router_normalize",
               "groups", "num_params", "params"]


def descriptor(ptr):
    raw = (ctypes.c_int64 * len(DESC_FIELDS)).from_address(ptr)
    return {k: raw[i] for i, k in enumerate(DESC_FIELDS)}


ACT = {0: F.relu, 1: F.gelu, 2: lambda v: F.gelu(v, approximate="tanh"),
       3: F.silu, 4: torch.sigmoid, 5: lambda v: v}
DTYPE = {0: torch.float32, 1: torch.bfloat16, 2: torch.float16}


def main():
    runtime, library, jobs = sys.argv[1], sys.argv[2], sys.argv[3:]
    rt = load_runtime(runtime)
    ctx = ctypes.c_void_p()
    rt.ffn_context_create(ctypes.byref(ctx))
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    print(f"device: {props.name}, {props.multi_processor_count} SMs, "
          f"torch {torch.__version__}, CUDA {torch.version.cuda}")
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    for job in jobs:
        name, tokens = job.split(":")
        tokens = [int(t) for t in tokens.split(",")]
        k = ctypes.c_void_p()
        check(rt, ctx, rt.ffn_kernel_load_library(ctx, library.encode(),
                                                  name.encode(), ctypes.byref(k)),
              "load")
        d = descriptor(rt.ffn_kernel_descriptor(k))
        dm, dff, dt = d["d_model"], d["d_ff"], DTYPE[d["dtype"]]
        gated, act = d["gated"], ACT[d["activation"]]
        torch.manual_seed(0)
        # [in, out] weights, as ffnc's parameters are declared.
        names = ["w_up", "w_gate", "w_down"] if gated else ["w_up", "w_down"]
        shapes = {"w_up": (dm, dff), "w_gate": (dm, dff), "w_down": (dff, dm)}
        w = {n: ((torch.rand(shapes[n]) * 2 - 1) / shapes[n][0] ** 0.5).to(dt)
             for n in names}
        bias = d["num_params"] > len(names)
        b = {}
        if bias:
            b = {"b_up": (torch.rand(dff) * 0.2 - 0.1).to(dt),
                 "b_down": (torch.rand(dm) * 0.2 - 0.1).to(dt)}
        for n, t in list(w.items()) + list(b.items()):
            t = t.contiguous()
            check(rt, ctx, rt.ffn_kernel_set_param(
                k, n.encode(), t.data_ptr(), t.numel() * t.element_size(), 0),
                f"set_param {n}")
        weight_bytes = sum(t.numel() * t.element_size() for t in w.values())
        copies = 1  # the same weights, in the same cache state, for both
        # PyTorch's operands: nn.Linear layout [out, in] on the GPU, one set
        # per copy so both read weights from DRAM at decode.
        tw = [{n: t.t().contiguous().to(dev) for n, t in w.items()}
              for _ in range(copies)]
        tb = {n: t.to(dev) for n, t in b.items()}
        flops_per_row = 2 * dm * dff * (3 if gated else 2)

        def torch_ffn(x, ws):
            if gated:
                h = act(F.linear(x, ws["w_gate"])) * F.linear(x, ws["w_up"])
            else:
                h = act(F.linear(x, ws["w_up"], tb.get("b_up")))
            return F.linear(h, ws["w_down"], tb.get("b_down"))

        stream = torch.cuda.current_stream()
        for m in tokens:
            x = (torch.rand(m, dm, device=dev) * 2 - 1).to(dt)
            y = torch.empty_like(x)

            def ffnc_run():
                check(rt, ctx, rt.ffn_kernel_run_device(
                    k, m, x.data_ptr(), y.data_ptr(), stream.cuda_stream),
                    "run")

            ref = torch_ffn(x, tw[0]).float()
            ffnc_run()
            torch.cuda.synchronize()
            err = (y.float() - ref).abs().max().item()
            scale = ref.abs().max().item()
            # Back-to-back runs between two events keep the GPU busy, so
            # the time is the GPU's, not the Python caller's (both sides
            # are called from Python). Weights larger than L2 come from
            # memory on every run; smaller ones stay in L2 for both.
            batch = 20 if m <= 2048 else 5
            times = {"ffnc": [], "torch": []}
            for r in range(7):
                for who in ("ffnc", "torch"):
                    start = torch.cuda.Event(enable_timing=True)
                    end = torch.cuda.Event(enable_timing=True)
                    start.record()
                    for i in range(batch):
                        if who == "ffnc":
                            ffnc_run()
                        else:
                            torch_ffn(x, tw[i % copies])
                    end.record()
                    torch.cuda.synchronize()
                    times[who].append(start.elapsed_time(end) * 1e-3 / batch)
            tf = statistics.median(times["ffnc"])
            tt = statistics.median(times["torch"])
            tbs = weight_bytes / tf / 1e12
            print(f"{name} m={m}: ffnc {tf*1e6:9.1f} us ({flops_per_row*m/tf/1e12:6.1f} "
                  f"TFLOP/s, {tbs:5.2f} TB/s weights) | torch {tt*1e6:9.1f} us "
                  f"({flops_per_row*m/tt/1e12:6.1f} TFLOP/s) | torch/ffnc "
                  f"{tt/tf:5.2f}x | max|ffnc-torch| {err:.2e} (max|y| {scale:.2e})",
                  flush=True)


if __name__ == "__main__":
    main()
