/*===- ffn/kernel_abi.h - the contract between ffnc kernels and apps ------===*\
 *
 * Every kernel ffnc generates exports one `ffn_kernel_desc` named
 * `ffn_kernel_<name>` (<name> is the spec's ffn block name). The descriptor
 * says what the kernel computes, which parameters it needs in which shapes,
 * and how to call it. The runtime (ffn/runtime.h) reads it; an application
 * may also call `run` directly.
 *
 * The descriptor is device-neutral: what the kernel computes (its `kind`
 * and model), its parameters, and then one entry per device of which
 * exactly the kernel's own is set (`cpu` or `cuda`). A new kind or device
 * adds its own entry.
 *
 * Versioning: FFN_KERNEL_ABI_VERSION changes whenever the layout or meaning
 * of anything here changes (6: the kind, and the code moved into the
 * per-device entries; 7: weight-only quantization; 8: already-quantized
 * weights; 9: mixtures of experts, stacked per-expert parameters, the
 * pack signature; 10: grouped FFNs, kind 2 and the `groups` field; 11: each
 * device launch's own workspace_per_row; 12: TMA tensor-map arguments and
 * each launch's maps and grid.x terms; 13: tile counter arguments; 14:
 * sm_90 kernels wait for the grid before them, see ffn_device_launch; 15:
 * grid.x row-band counters after the tile counters; 16: persistent
 * launches, ffn_device_launch's max_blocks).
 * Every field is 8 bytes wide, so
 * the layout is the same for any C or C++ compiler on a 64-bit target.
\*===----------------------------------------------------------------------===*/

#ifndef FFN_KERNEL_ABI_H
#define FFN_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FFN_KERNEL_ABI_VERSION 16

typedef enum ffn_dtype {
  FFN_DTYPE_F32 = 0,
  FFN_DTYPE_BF16 = 1,
  FFN_DTYPE_F16 = 2,
  /* operand_rounding only: the matmuls' inputs quantized to int8, see
   * ffn_weight_quant. */
  FFN_DTYPE_INT8 = 3,
} ffn_dtype;

/* For a gated FFN, the function applied to the gate projection:
 * GLU = sigmoid, ReGLU = relu, GEGLU = gelu, SwiGLU = silu,
 * bilinear = identity. */
typedef enum ffn_activation {
  FFN_ACT_RELU = 0,
  FFN_ACT_GELU = 1,      /* exact: 0.5 x (1 + erf(x / sqrt 2)) */
  FFN_ACT_GELU_TANH = 2, /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
  FFN_ACT_SILU = 3,      /* x * sigmoid(x) */
  FFN_ACT_SIGMOID = 4,
  FFN_ACT_IDENTITY = 5,
} ffn_activation;

typedef enum ffn_norm_kind {
  FFN_NORM_NONE = 0,
  FFN_NORM_LAYERNORM = 1,
  FFN_NORM_RMSNORM = 2,
} ffn_norm_kind;

typedef enum ffn_norm_position {
  FFN_NORM_PRE = 0,  /* y = [x +] FFN(norm(x)) */
  FFN_NORM_POST = 1, /* y = norm([x +] FFN(x)) */
} ffn_norm_position;

/* How a kernel stores its weight matrices. The parameters are still set in
 * the dtype (unquantized); `pack` quantizes them symmetrically, one scale
 * (in the dtype) per `quant_group` input rows of each output column:
 * s = dtype(max |w| / qmax) computed in f32, q = round-to-nearest-even(w / s)
 * in f32, clamped to [-qmax, qmax] (q = 0 where s = 0), with qmax = 127
 * (int8) or 7 (int4). The kernel multiplies by s q exactly.
 *
 * A kernel with operand_rounding = FFN_DTYPE_INT8 (the spec's `activations
 * = int8`) also quantizes the matmuls' inputs, per row and per quant_group
 * of the reduction (quant_group is then a multiple of 16), in f32:
 * a = max |x| over the group, q = clamp(round-to-nearest-even(x * (127 /
 * a)), -127, 127) (q = 0 where a = 0), scale a / 127; each group's dot
 * product sum q_x q_w is exact in int32, and the output accumulates
 * (a / 127) s sum q_x q_w in f32. Each input is off by at most half a
 * quantum, a / 254, which the reference's bound includes. */
typedef enum ffn_weight_quant {
  FFN_WEIGHTS_DTYPE = 0, /* the weights in the dtype, unquantized */
  FFN_WEIGHTS_INT8 = 1,
  FFN_WEIGHTS_INT4 = 2,
  /* int4, asymmetric: per group and column, in f32, lo = min(min w, 0),
   * hi = max(max w, 0), s = dtype((hi - lo) / 15), z = clamp(roundeven(-lo
   * / s), 0, 15), q = clamp(roundeven(w / s) + z, 0, 15) (q = z = 0 where
   * s = 0); the kernel multiplies by s (q - z) exactly. */
  FFN_WEIGHTS_INT4_ZP = 3,
} ffn_weight_quant;

/* What a kernel computes. */
typedef enum ffn_kernel_kind {
  FFN_KIND_FFN = 0,     /* one FFN block: y = FFN(x) */
  FFN_KIND_MOE = 1,     /* a mixture of experts: see ffn_router */
  FFN_KIND_GROUPED = 2, /* a grouped (block-diagonal) FFN: see below */
} ffn_kernel_kind;

/* A grouped FFN (kind FFN_KIND_GROUPED) splits the row into `groups` blocks
 * of bd = d_model / groups columns; each block is an FFN of the
 * descriptor's family (activation, gate, biases) with d_ff / groups hidden
 * columns and its own weights and biases (tensor g of each stacked
 * parameter). With a the matmuls' input (x, or pre-norm(x)) in f32, block
 * g computes the FFN of a's columns [g bd, (g + 1) bd) into the same
 * columns of the output, with its own f32 reductions: d_model / groups
 * terms in GEMM 1 and d_ff / groups in GEMM 2, never a term from another
 * block. The residual and the norm (pre or post) act on the whole d_model
 * row, as for one FFN. With operand_rounding = FFN_DTYPE_INT8, the
 * quantization groups of a row restart at each block's first column (and
 * quant_group counts rows of one block's matrix), so no group spans two
 * blocks. */

/* A mixture of experts (kind FFN_KIND_MOE) holds `experts` routed expert
 * FFNs and `shared_experts` always-on ones, each an FFN of the descriptor's
 * family, width and biases without residual or norm. With a the matmuls'
 * input (x, or pre-norm(x)) in f32, the router computes logits
 * l[e] = sum_i a[i] w_router[i, e] for the routed experts e < experts, and
 * selects the top_k largest logits, in descending order, ties to the lower
 * expert index. Their weights g[j]:
 *   SOFTMAX_TOPK: p = softmax(l) over all routed experts, g[j] = p[e_j],
 *                 divided by sum_j p[e_j] when router_normalize is set;
 *   TOPK_SOFTMAX: g = softmax over the selected logits only.
 * Then f = sum_j g[j] FFN_{e_j}(a) + sum_s FFN_{experts + s}(a), the
 * selected experts in selection order, then the shared ones in index order,
 * each expert's output computed on its own (its own f32 reductions) first;
 * the residual and a post-norm apply to f as for one FFN. */
typedef enum ffn_router {
  FFN_ROUTER_SOFTMAX_TOPK = 0,
  FFN_ROUTER_TOPK_SOFTMAX = 1,
} ffn_router;

/* Where the kernel runs: which entry of the descriptor holds its code. */
typedef enum ffn_device {
  FFN_DEVICE_CPU = 0,
  FFN_DEVICE_CUDA = 1,
} ffn_device;

/* One parameter tensor. Matrices are described in their logical [in, out]
 * row-major layout (shape[0] = in, shape[1] = out); vectors have rank 1 and
 * shape[1] = 0. The element type is the kernel's dtype. Names: "w_up",
 * "w_gate", "w_down", "b_up", "b_gate", "b_down", "norm_scale",
 * "norm_shift", and for a mixture of experts "w_router" ([d_model,
 * experts]). packed_bytes is the size of the parameter after `pack`.
 *
 * `experts` = 0: one tensor. experts = n > 0: n tensors of this shape,
 * stacked, one per expert FFN of a mixture (its weights and biases) or,
 * for kind FFN_KIND_GROUPED, one per block (n = groups; the shape is one
 * block's, such as [d_model / groups, d_ff / groups] for w_up). Stacked
 * is [n, shape...] row-major, tensor e at element e * shape[0] *
 * max(shape[1], 1); `pack` and `pack_quantized` pack one tensor at a
 * time, tensor e's packed bytes starting at e * round_up(packed_bytes, 64)
 * of the parameter's packed buffer. The norm parameters are never
 * stacked: the norm acts on the whole row. */
typedef struct ffn_param_desc {
  const char *name;
  int64_t rank;
  int64_t shape[2];
  int64_t packed_bytes;
  int64_t experts;
} ffn_param_desc;

/* Packs parameter `index` from its logical [in, out] layout (`src`) into the
 * kernel's own blocked layout (`dst`, packed_bytes long), once, at load
 * time. */
typedef void (*ffn_pack_fn)(int64_t index, const void *src, void *dst);

/* Packs quantized weight matrix `index` from blocks quantized elsewhere
 * instead of quantizing it: `q` the integers [in, out], one byte each
 * (int8: any; int4: [-8, 7]; int4 with zero points: [0, 15]), `scales`
 * [ceil(in / quant_group), out] in the dtype, `zero_points` the same
 * shape, one byte each in [0, 15] (int4 with zero points; else ignored).
 * The kernel multiplies by s q (s (q - z)) exactly, as when it quantizes.
 * Does nothing for a parameter that is not a quantized matrix. */
typedef void (*ffn_pack_quantized_fn)(int64_t index, const void *q,
                                      const void *scales,
                                      const void *zero_points, void *dst);

/* CPU entry point: y[m, d_model] = FFN(x[m, d_model]) for any m >= 1.
 * params[i] points to parameter i, packed by `pack`. x and y are the
 * kernel's dtype, row-major and contiguous; y must not overlap x.
 * `workspace` is scratch of at least m * workspace_per_row bytes, 64-byte
 * aligned (may be NULL when that is 0). The kernel checks nothing: the
 * runtime does. */
typedef void (*ffn_cpu_entry)(int64_t m, const void *x,
                              const void *const *params, void *y,
                              void *workspace);

/* The number of work units of phase p for a run of m rows (0: the phase has
 * nothing to do at this m). A kernel may schedule different token-count
 * buckets differently (say, a fused schedule for decode-sized m), so the
 * split depends on m. */
typedef int64_t (*ffn_phase_units_fn)(int64_t phase, int64_t m);

/* The same computation split into phases for a thread pool: phase p covers
 * work units [0, phase_units(p, m)). Within a phase, any partition of the
 * units may run concurrently (each unit writes its own part of the workspace or
 * y); all units of phase p must finish before phase p + 1 starts. Running every
 * phase once over all its units is exactly `run`. Each output element is
 * computed by one unit with the same operations whatever the partition, so
 * results do not depend on the thread count. */
typedef void (*ffn_cpu_phase)(int64_t phase, int64_t m, const void *x,
                              const void *const *params, void *y,
                              void *workspace, int64_t begin, int64_t end);

/* What a device kernel argument is bound to at launch. Buffers are passed
 * as MLIR's rank-1 memref descriptor, five launch parameters: base pointer,
 * aligned pointer (the same), int64 offset (0), int64 size (elements),
 * int64 stride (1). The row count is one int64 parameter. */
typedef enum ffn_device_arg_kind {
  FFN_DEVICE_ARG_M = 0,          /* the run's row count m */
  FFN_DEVICE_ARG_INPUT = 1,      /* x, [m, d_model] */
  FFN_DEVICE_ARG_OUTPUT = 2,     /* y, [m, d_model] */
  FFN_DEVICE_ARG_PARAM = 3,      /* packed parameter `index` */
  FFN_DEVICE_ARG_WORKSPACE = 4,  /* workspace + m * index bytes */
  FFN_DEVICE_ARG_TENSOR_MAP = 5, /* the launch's maps[index], encoded */
  /* grid.x * (grid.y + 1) int32 counters (index 0), a rank-1 memref like
   * a buffer: zero when the launch starts, and the launch leaves them zero
   * (a split GEMM's blocks count finished K slices per tile on the first
   * grid.x * grid.y, a GEMM with a fused post-norm its finished tiles per
   * row band on the last grid.x) */
  FFN_DEVICE_ARG_COUNTERS = 6,
} ffn_device_arg_kind;

/* A TMA tensor map (a CUtensorMap, 128 bytes, passed by value) that the
 * runtime encodes for each launch over the buffer `source` (INPUT, PARAM
 * or WORKSPACE, `index` as for that argument kind): `rank` dimensions of
 * the descriptor's dtype, dims[0] contiguous; dims[i] elements (0: the
 * run's m); strides[i] bytes between consecutive entries of dimension
 * i + 1; the kernel copies boxes of box[i] elements (zeros outside the
 * dims) into shared memory swizzled over `swizzle` bytes (0, 32, 64, 128).
 * Entries past `rank` are 1 (dims, box) or 0 (strides). */
typedef struct ffn_tensor_map {
  int64_t source;
  int64_t index;
  int64_t rank;
  int64_t dims[3];
  int64_t strides[2];
  int64_t box[3];
  int64_t swizzle;
} ffn_tensor_map;

typedef struct ffn_device_arg {
  int64_t kind; /* ffn_device_arg_kind */
  int64_t index;
} ffn_device_arg;

/* One kernel launch of a device kernel's plan. A run of m rows launches,
 * in order, every entry with min_m <= m <= max_m, on one stream: grid
 * (ceil((m * grid_m_scale + grid_rows_extra) / rows_per_block), grid_y,
 * grid_z), block_threads threads,
 * shared_bytes of dynamic shared memory. Its workspace arguments reach
 * less than workspace_per_row bytes per row: a run of m rows needs m times
 * the largest workspace_per_row among the launches it runs (a decode
 * bucket's split-K partials are not paid for at large m).
 *
 * On sm_90 and later targets (nvptx-sm90, nvptx-sm90a) every kernel begins
 * with griddepcontrol.launch_dependents and griddepcontrol.wait, before it
 * touches memory: it may therefore be launched with programmatic stream
 * serialization (cuLaunchKernelEx), as the runtime does, and still see
 * every earlier launch's writes on the stream. */
typedef struct ffn_device_launch {
  const char *kernel; /* entry function in the module image */
  int64_t min_m, max_m;
  int64_t rows_per_block;
  int64_t grid_y, grid_z;
  int64_t block_threads;
  int64_t shared_bytes;
  int64_t workspace_per_row; /* at most the descriptor's */
  int64_t num_args;
  const ffn_device_arg *args;
  int64_t num_maps; /* the tensor maps its TENSOR_MAP arguments name */
  const ffn_tensor_map *maps;
  /* grid.x's terms (1 and 0 but for a mixture's expert GEMMs, whose
   * blocks walk a tile list of every expert's rows: m (k + S) slot rows
   * plus a partial tile per expert). */
  int64_t grid_m_scale;
  int64_t grid_rows_extra;
  /* A persistent launch (> 0): of that grid of x * grid_y * grid_z tiles,
   * min(x * grid_y * grid_z, max_blocks) blocks run as a grid of
   * (blocks, 1, 1), each walking the tiles blockIdx.x, blockIdx.x +
   * gridDim.x, ... in x-fastest order. 0: a block per tile. */
  int64_t max_blocks;
} ffn_device_launch;

/* The code of a CPU kernel. */
typedef struct ffn_cpu_code {
  ffn_cpu_entry run;
  int64_t num_phases;
  ffn_phase_units_fn phase_units;
  ffn_cpu_phase phase;
} ffn_cpu_code;

/* The code of a CUDA kernel: the module image (a cubin for the target's
 * SM, 16-byte aligned) and its launch plan. */
typedef struct ffn_cuda_code {
  const void *image;
  uint64_t image_size;
  int64_t num_launches;
  const ffn_device_launch *launches;
} ffn_cuda_code;

typedef struct ffn_kernel_desc {
  uint64_t abi_version; /* FFN_KERNEL_ABI_VERSION of the generating ffnc */
  uint64_t struct_size; /* sizeof(ffn_kernel_desc) of the generating ffnc */
  const char *name;     /* ffn block name */
  const char *target;   /* "x86-64-avx2", "x86-64-avx512", "nvptx-sm90", ... */
  int64_t kind;         /* ffn_kernel_kind */
  int64_t device;       /* ffn_device: which code entry below is set */
  /* The model. */
  int64_t d_model;
  int64_t d_ff;
  int64_t dtype;         /* ffn_dtype: input, output and parameter storage */
  int64_t activation;    /* ffn_activation */
  int64_t gated;         /* 0 or 1 */
  int64_t residual;      /* 0 or 1 */
  int64_t norm;          /* ffn_norm_kind */
  int64_t norm_position; /* ffn_norm_position */
  double norm_eps;
  /* The dtype the kernel rounds the matmuls' inputs to: the normalized
   * input of a pre-norm FFN and the hidden activations. FFN_DTYPE_F32 (CPU
   * kernels): kept in f32. A GPU kernel stores them in the FFN's dtype, as
   * tensor-core operands; the reference's error bound includes it.
   * FFN_DTYPE_INT8: quantized per row and group (ffn_weight_quant). */
  int64_t operand_rounding;
  /* ffn_weight_quant, and the input rows per scale (0 when unquantized). */
  int64_t weight_quant;
  int64_t quant_group;
  /* A mixture of experts (kind FFN_KIND_MOE; all 0 otherwise): routed and
   * shared experts, the experts each token selects, ffn_router, and 0 or 1. */
  int64_t experts;
  int64_t shared_experts;
  int64_t top_k;
  int64_t router;
  int64_t router_normalize;
  /* A grouped FFN (kind FFN_KIND_GROUPED): its blocks, at least 2 and
   * dividing both d_model and d_ff; 0 for every other kind. */
  int64_t groups;
  /* The parameters, packed once by `pack` (on the host; a device kernel's
   * are then uploaded). */
  int64_t num_params;
  const ffn_param_desc *params;
  ffn_pack_fn pack;
  /* From already-quantized blocks: set exactly when weight_quant is not
   * FFN_WEIGHTS_DTYPE. */
  ffn_pack_quantized_fn pack_quantized;
  /* How this kernel packs its parameters, as text: two kernels with equal
   * signatures read the same packed bytes, so one may use the other's
   * (ffn_kernel_share_params). */
  const char *pack_signature;
  /* Scratch bytes per token row (host memory for a CPU kernel, device
   * memory for a device kernel). A device kernel's is the largest of its
   * launches' (which are what a run of m rows allocates). */
  int64_t workspace_per_row;
  const char *strategy; /* the schedule, as text ("packed mr=8 ...") */
  /* The code: exactly the entry of `device` is non-NULL. */
  const ffn_cpu_code *cpu;
  const ffn_cuda_code *cuda;
} ffn_kernel_desc;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FFN_KERNEL_ABI_H */
