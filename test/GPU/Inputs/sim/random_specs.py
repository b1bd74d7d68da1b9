"""Random FFN specs for the GPU kernels' numerics in the PTX interpreter.

random_specs.py SEED COUNT prints COUNT specs drawn from SEED: every family
and activation, dtype, bias, residual, norm kind and position, grouped
FFNs, mixtures of experts (both routers, shared experts, normalize) and
int8/int4 weights with any even group and zero points (int8 activations
too, groups of 16 to 128), at sizes off every
tile (d_model up to 200, d_ff up to 600). The same seed always prints the
same specs, so a failure reproduces from the seed alone.
"""
import random
import sys


def spec(r, i):
    groups = r.choice([1, 1, 1, 2, 3, 4])
    d_model = groups * r.randint(max(1, 8 // groups), 200 // groups)
    d_ff = groups * r.randint(max(1, 8 // groups), 600 // groups)
    parts = [f"d_model = {d_model}", f"d_ff = {d_ff}"]
    if r.random() < 0.5:
        parts.append("activation = " + r.choice(
            ["relu", "gelu", "gelu_tanh", "silu", "sigmoid", "identity"]))
    else:
        parts.append("gate = " + r.choice(
            ["glu", "reglu", "geglu", "swiglu", "bilinear"]))
    parts.append("bias = " + r.choice(["true", "false"]))
    if r.random() < 0.4:
        parts.append("residual = true")
    if r.random() < 0.3:
        parts.append("norm = %s(position = %s)" % (
            r.choice(["rmsnorm", "layernorm"]), r.choice(["pre", "post"])))
    if r.random() < 0.25:
        experts = r.randint(1, 12)
        router = r.choice(["softmax_topk", "topk_softmax"])
        parts += [f"experts = {experts}", f"top_k = {r.randint(1, experts)}",
                  f"router = {router}"]
        if r.random() < 0.3:
            parts.append(f"shared_experts = {r.randint(1, 2)}")
        if router == "softmax_topk" and r.random() < 0.3:
            parts.append("normalize = true")
    elif groups > 1:
        parts.append(f"groups = {groups}")
    if r.random() < 0.35:
        kind = r.choice(["int8", "int4"])
        zero = ", zero_points = true" if kind == "int4" and r.random() < 0.4 else ""
        # int8 activations need groups that are a multiple of 16.
        if r.random() < 0.4:
            parts.append(f"weights = {kind}(group = {16 * r.randint(1, 8)}, "
                         f"activations = int8{zero})")
        else:
            parts.append(f"weights = {kind}(group = {2 * r.randint(1, 40)}{zero})")
    parts.append("dtype = " + r.choice(["f32", "bf16", "f16"]))
    return f"ffn r{i} {{ " + "; ".join(parts) + " }"


def main():
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    r = random.Random(seed)
    print(f"// random_specs.py {seed} {count}")
    for i in range(count):
        print(spec(r, i))


if __name__ == "__main__":
    main()
