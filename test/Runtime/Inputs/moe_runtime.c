/* The runtime's side of mixtures of experts, on hand-made descriptors whose
 * functions are this program's (no compiler involved): which MoE
 * descriptors it refuses and why; how it sizes, lays out and packs stacked
 * parameters (pack and pack_quantized record where each expert's source
 * and destination lie and check what they receive); and a run whose phases
 * have five units per row, on one thread and on two. One line per check,
 * for FileCheck. */
#include <ffn/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  D = 8,  /* d_model */
  F = 16, /* d_ff */
  E = 4,  /* routed experts */
  S = 1,  /* shared experts */
  N = E + S,
  G = 4,             /* quant_group of the quantized descriptor */
  GROUPS = D / G,    /* w_up's groups: in = D */
  MAT = D * F,       /* elements of one expert's w_up or w_down */
  PACKED = 520,      /* an expert's packed w_up / w_down: not a multiple */
  STRIDE = 576,      /*   of 64, so the stride rounds it up */
  BIAS_PACKED = 70,  /* b_up: 16 floats and some */
  BIAS_STRIDE = 128, /*   rounded up */
  ROUTER_PACKED = D * E * 4,
  UNITS = N, /* phase 0 units per row */
  M = 4096,  /* rows of the threaded run: enough work for the pool */
};

static ffn_context *ctx;

static void report(const char *what, ffn_status s) {
  printf("%s: %s%s%s\n", what, ffn_status_string(s), s ? " -- " : "",
         s ? ffn_context_last_error(ctx) : "");
}

/* The fake kernel. */

static const ffn_param_desc params[4] = {
    {"w_up", 2, {D, F}, PACKED, N},
    {"b_up", 1, {F, 0}, BIAS_PACKED, N},
    {"w_down", 2, {F, D}, PACKED, N},
    {"w_router", 2, {D, E}, ROUTER_PACKED, 0},
};

/* What one pack call got. */
typedef struct pack_call {
  int64_t index;
  const void *src, *scales;
  void *dst;
  int src_ok; /* src held expert e's tensor in [in, out] */
} pack_call;

static pack_call calls[16];
static int ncalls;

/* Element (i, j) of expert e's tensor of parameter `index` in [in, out]
 * (a vector: i = 0): distinct, exact in f32. */
static float value(int64_t index, int e, int64_t i, int64_t j) {
  return (float)(index * 100000 + e * 1000 + i * 32 + j);
}

/* The byte a fake pack fills expert e's packed tensor of `index` with. */
static unsigned char marker(int64_t index, int e) {
  return (unsigned char)(16 * (index + 1) + e + 1);
}

static int64_t packedBytes(int64_t index) { return params[index].packed_bytes; }

/* Each call packs the next expert: the runtime packs in expert order. */
static int expertOf(int64_t index) {
  int e = 0;
  for (int c = 0; c < ncalls; ++c)
    e += calls[c].index == index;
  return e;
}

static void pack(int64_t index, const void *src, void *dst) {
  const ffn_param_desc *p = &params[index];
  int e = expertOf(index);
  int64_t rows = p->shape[0], cols = p->rank == 2 ? p->shape[1] : p->shape[0];
  if (p->rank == 1)
    rows = 1;
  int ok = 1;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      ok &= ((const float *)src)[i * cols + j] == value(index, e, i, j);
  if (ncalls < 16)
    calls[ncalls++] = (pack_call){index, src, NULL, dst, ok};
  memset(dst, marker(index, e), (size_t)packedBytes(index));
}

/* q(e, i, j) in [-8, 7] and scale(e, g, j) of the quantized descriptor. */
static signed char qValue(int e, int i, int j) {
  return (signed char)((e * 5 + i * 3 + j) % 16 - 8);
}
static float scaleValue(int e, int g, int j) {
  return (float)(e * 100 + g * 20 + j);
}

static void packQuantized(int64_t index, const void *q, const void *scales,
                          const void *zeroPoints, void *dst) {
  (void)zeroPoints;
  int e = expertOf(index);
  int ok = index == 0;
  for (int i = 0; ok && i < D; ++i)
    for (int j = 0; j < F; ++j)
      ok &= ((const signed char *)q)[i * F + j] == qValue(e, i, j);
  for (int g = 0; ok && g < GROUPS; ++g)
    for (int j = 0; j < F; ++j)
      ok &= ((const float *)scales)[g * F + j] == scaleValue(e, g, j);
  if (ncalls < 16)
    calls[ncalls++] = (pack_call){index, q, scales, dst, ok};
  memset(dst, marker(index, e), (size_t)packedBytes(index));
}

/* Phase 0: UNITS units per row, unit u writes workspace word u. Phase 1: one
 * unit per row, which sums its row's words (each unit ran once: the sum is
 * exact) and, in row 0, checks every packed parameter's bytes. */
static int64_t phaseUnits(int64_t phase, int64_t m) {
  return phase == 0 ? UNITS * m : m;
}

static int packedOk(const void *const *packed) {
  for (int64_t index = 0; index < 4; ++index) {
    const ffn_param_desc *p = &params[index];
    int64_t stride =
        p->experts ? (p->packed_bytes + 63) / 64 * 64 : p->packed_bytes;
    int64_t tensors = p->experts ? p->experts : 1;
    const unsigned char *b = (const unsigned char *)packed[index];
    if ((uintptr_t)b % 64)
      return 0;
    for (int64_t e = 0; e < tensors; ++e)
      for (int64_t i = 0; i < stride; ++i)
        if (b[e * stride + i] !=
            (i < p->packed_bytes ? marker(index, (int)e) : 0))
          return 0;
  }
  return 1;
}

static void phase(int64_t p, int64_t m, const void *x,
                  const void *const *packed, void *y, void *workspace,
                  int64_t begin, int64_t end) {
  (void)m;
  int64_t *ws = (int64_t *)workspace;
  const float *xf = (const float *)x;
  float *yf = (float *)y;
  for (int64_t u = begin; u < end; ++u) {
    if (p == 0) {
      ws[u] = u + 1;
      continue;
    }
    int64_t sum = 0;
    for (int k = 0; k < UNITS; ++k)
      sum += ws[u * UNITS + k];
    yf[u * D] = (float)sum;
    yf[u * D + 1] = u == 0 ? (float)packedOk(packed) : 1.0f;
    for (int k = 2; k < D; ++k)
      yf[u * D + k] = xf[u * D + k];
  }
}

static void run(int64_t m, const void *x, const void *const *packed, void *y,
                void *workspace) {
  for (int64_t p = 0; p < 2; ++p)
    phase(p, m, x, packed, y, workspace, 0, phaseUnits(p, m));
}

static const ffn_cpu_code code = {run, 2, phaseUnits, phase};

static ffn_kernel_desc moeDesc(void) {
  ffn_kernel_desc d;
  memset(&d, 0, sizeof d);
  d.abi_version = FFN_KERNEL_ABI_VERSION;
  d.struct_size = sizeof(ffn_kernel_desc);
  d.name = "moe";
  d.target = "x86-64-avx2";
  d.kind = FFN_KIND_MOE;
  d.device = FFN_DEVICE_CPU;
  d.d_model = D;
  d.d_ff = F;
  d.dtype = FFN_DTYPE_F32;
  d.activation = FFN_ACT_RELU;
  d.operand_rounding = FFN_DTYPE_F32;
  d.weight_quant = FFN_WEIGHTS_DTYPE;
  d.experts = E;
  d.shared_experts = S;
  d.top_k = 2;
  d.router = FFN_ROUTER_SOFTMAX_TOPK;
  d.router_normalize = 1;
  d.num_params = 4;
  d.params = params;
  d.pack = pack;
  d.pack_signature = "fake";
  d.workspace_per_row = UNITS * 8;
  d.strategy = "fake: five units per row";
  d.cpu = &code;
  return d;
}

/* Checks. */

static void tryDesc(const char *what, const ffn_kernel_desc *d) {
  ffn_kernel *k = NULL;
  report(what, ffn_kernel_create(ctx, d, &k));
  ffn_kernel_destroy(k);
}

/* Descriptors refused, each a good one with one thing wrong. The tables
 * must lie in the program's image, as a real kernel's do. */
static void refusals(void) {
  static ffn_param_desc table[4];
  ffn_kernel_desc d = moeDesc();
  d.top_k = E + 1;
  tryDesc("top_k > experts", &d);
  d = moeDesc();
  d.top_k = 0;
  tryDesc("top_k 0", &d);
  d = moeDesc();
  d.experts = 0;
  tryDesc("no experts", &d);
  d = moeDesc();
  d.shared_experts = -1;
  tryDesc("negative shared", &d);
  d = moeDesc();
  d.experts = ((int64_t)1 << 16) + 1;
  tryDesc("too many experts", &d);
  d = moeDesc();
  d.router = 7;
  tryDesc("unknown router", &d);
  d = moeDesc();
  d.router_normalize = 2;
  tryDesc("router_normalize 2", &d);

  d = moeDesc();
  memcpy(table, params, sizeof table);
  table[2].experts = E; /* the shared expert forgotten */
  d.params = table;
  tryDesc("stacked count", &d);
  memcpy(table, params, sizeof table);
  table[1].experts = -3;
  tryDesc("negative stack", &d);
  memcpy(table, params, sizeof table);
  table[3].shape[1] = N; /* logits for the shared expert too */
  tryDesc("router shape", &d);
  memcpy(table, params, sizeof table);
  table[3].experts = N;
  tryDesc("stacked router", &d);
  memcpy(table, params, sizeof table);
  table[3].name = "w_gate_router";
  tryDesc("no router", &d);
  memcpy(table, params, sizeof table);
  table[0].experts = table[1].experts = table[2].experts = 0;
  tryDesc("nothing stacked", &d);
  memcpy(table, params, sizeof table);
  table[1].name = "norm_scale"; /* the norm is outside the experts */
  tryDesc("stacked norm", &d);

  /* A plain FFN: no stacked parameter, no MoE field set. */
  d = moeDesc();
  d.kind = FFN_KIND_FFN;
  d.experts = d.shared_experts = d.top_k = d.router = d.router_normalize = 0;
  memcpy(table, params, sizeof table);
  table[3].name = "b_down";
  table[3].rank = 1;
  table[3].shape[0] = D;
  table[3].shape[1] = 0;
  d.params = table;
  tryDesc("stacked in a dense kernel", &d);
  table[0].experts = table[1].experts = table[2].experts = 0;
  tryDesc("dense", &d);
  d.top_k = 2;
  tryDesc("moe field in a dense kernel", &d);
  d.top_k = 0;
  d.kind = 3;
  tryDesc("unknown kind", &d);

  /* A CUDA mixture is read like any CUDA kernel: without CUDA code the
     entries do not match its device. */
  d = moeDesc();
  d.device = FFN_DEVICE_CUDA;
  d.cpu = NULL;
  tryDesc("cuda moe", &d);
}

static void setAndRun(void) {
  ffn_kernel_desc desc = moeDesc();
  ffn_kernel *k = NULL;
  report("moe kernel", ffn_kernel_create(ctx, &desc, &k));
  const ffn_kernel_desc *d = ffn_kernel_descriptor(k);
  printf("descriptor: experts %ld shared %ld top_k %ld router %ld "
         "normalize %ld, w_up stacks %ld\n",
         (long)d->experts, (long)d->shared_experts, (long)d->top_k,
         (long)d->router, (long)d->router_normalize,
         (long)d->params[0].experts);

  /* [N, in, out] and [N, out, in] (each expert transposed on its own). */
  static float up[N * MAT], upT[N * MAT], down[N * MAT], bias[N * F],
      router[D * E];
  for (int e = 0; e < N; ++e)
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < F; ++j) {
        up[e * MAT + i * F + j] = value(0, e, i, j);
        upT[e * MAT + j * D + i] = value(0, e, i, j);
        down[e * MAT + j * D + i] = value(2, e, j, i);
      }
  for (int e = 0; e < N; ++e)
    for (int j = 0; j < F; ++j)
      bias[e * F + j] = value(1, e, 0, j);
  for (int i = 0; i < D * E; ++i)
    router[i] = value(3, 0, i / E, i % E);

  report("one expert's bytes",
         ffn_kernel_set_param(k, "w_up", up, MAT * 4, FFN_LAYOUT_IN_OUT));
  report("stacked size",
         ffn_kernel_set_param(k, "w_up", up, sizeof up - 4, FFN_LAYOUT_IN_OUT));
  report("run before params", ffn_kernel_run(k, 2, up, down));

  ncalls = 0;
  report("w_up in-out",
         ffn_kernel_set_param(k, "w_up", up, sizeof up, FFN_LAYOUT_IN_OUT));
  int ok = ncalls == N;
  for (int e = 0; e < ncalls; ++e) {
    ptrdiff_t src = (const char *)calls[e].src - (const char *)up;
    ptrdiff_t dst = (char *)calls[e].dst - (char *)calls[0].dst;
    printf("w_up expert %d: src +%td dst +%td%s%s\n", e, src, dst,
           calls[e].src_ok ? "" : " WRONG-SOURCE",
           (uintptr_t)calls[e].dst % 64 ? " UNALIGNED" : "");
    ok &= src == (ptrdiff_t)e * MAT * 4 && dst == (ptrdiff_t)e * STRIDE;
  }
  printf("w_up offsets: %s\n", ok ? "e * in*out*4, e * 576" : "WRONG");

  ncalls = 0;
  report("w_up out-in",
         ffn_kernel_set_param(k, "w_up", upT, sizeof upT, FFN_LAYOUT_OUT_IN));
  ok = ncalls == N;
  for (int e = 0; e < ncalls; ++e)
    ok &= calls[e].src_ok &&
          (char *)calls[e].dst - (char *)calls[0].dst == (ptrdiff_t)e * STRIDE;
  printf("w_up out-in: %s\n", ok ? "each expert transposed" : "WRONG");

  ncalls = 0;
  report("b_up",
         ffn_kernel_set_param(k, "b_up", bias, sizeof bias, FFN_LAYOUT_OUT_IN));
  ok = ncalls == N;
  for (int e = 0; e < ncalls; ++e)
    ok &= calls[e].src_ok &&
          (const char *)calls[e].src - (const char *)bias == e * F * 4 &&
          (char *)calls[e].dst - (char *)calls[0].dst == e * BIAS_STRIDE;
  printf("b_up offsets: %s\n", ok ? "e * 64, e * 128" : "WRONG");

  ncalls = 0;
  report("w_down", ffn_kernel_set_param(k, "w_down", down, sizeof down,
                                        FFN_LAYOUT_IN_OUT));
  report("router size", ffn_kernel_set_param(k, "w_router", router, N * D * 4,
                                             FFN_LAYOUT_IN_OUT));
  report("w_router", ffn_kernel_set_param(k, "w_router", router, sizeof router,
                                          FFN_LAYOUT_IN_OUT));
  printf("w_router packed once: %s\n",
         ncalls == N + 1 && calls[N].index == 3 && calls[N].src_ok ? "yes"
                                                                   : "WRONG");
  report("not quantized",
         ffn_kernel_set_quantized_param(k, "w_up", up, N * MAT, up, 4, NULL, 0,
                                        FFN_LAYOUT_IN_OUT));

  /* Five units per row in phase 0: more units than rows, through the pool. */
  float *x = (float *)calloc(M * D, sizeof(float));
  float *y1 = (float *)calloc(M * D, sizeof(float));
  float *y2 = (float *)calloc(M * D, sizeof(float));
  for (int i = 0; i < M * D; ++i)
    x[i] = (float)(i % 97);
  ffn_context_set_threads(ctx, 1);
  report("run, 1 thread", ffn_kernel_run(k, M, x, y1));
  ffn_context_set_threads(ctx, 2);
  report("run, 2 threads", ffn_kernel_run(k, M, x, y2));
  ok = 1;
  for (int64_t r = 0; r < M; ++r) {
    /* sum of u + 1 over u in [5r, 5r + 5) */
    float want = (float)(UNITS * UNITS * r + UNITS * (UNITS + 1) / 2);
    ok &= y1[r * D] == want && y1[r * D + 1] == 1.0f;
  }
  printf("every unit once, packed buffers as laid out: %s\n",
         ok ? "yes" : "NO");
  printf("threads agree: %s\n",
         memcmp(y1, y2, sizeof(float) * M * D) == 0 ? "yes" : "no");
  free(x);
  free(y1);
  free(y2);
  ffn_kernel_destroy(k);
}

/* The same kernel with int4 weights, from blocks quantized elsewhere. */
static void quantized(void) {
  ffn_kernel_desc desc = moeDesc();
  desc.name = "moeq";
  desc.weight_quant = FFN_WEIGHTS_INT4;
  desc.quant_group = G;
  desc.pack_quantized = packQuantized;
  ffn_kernel *k = NULL;
  report("quantized moe kernel", ffn_kernel_create(ctx, &desc, &k));

  static signed char q[N * MAT], qT[N * MAT];
  static float s[N * GROUPS * F], sT[N * GROUPS * F];
  for (int e = 0; e < N; ++e) {
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < F; ++j) {
        q[e * MAT + i * F + j] = qValue(e, i, j);
        qT[e * MAT + j * D + i] = qValue(e, i, j);
      }
    for (int g = 0; g < GROUPS; ++g)
      for (int j = 0; j < F; ++j) {
        s[(e * GROUPS + g) * F + j] = scaleValue(e, g, j);
        sT[(e * F + j) * GROUPS + g] = scaleValue(e, g, j);
      }
  }
  report("q size",
         ffn_kernel_set_quantized_param(k, "w_up", q, MAT, s, sizeof s, NULL, 0,
                                        FFN_LAYOUT_IN_OUT));
  report("scale size",
         ffn_kernel_set_quantized_param(k, "w_up", q, sizeof q, s, sizeof s - 4,
                                        NULL, 0, FFN_LAYOUT_IN_OUT));
  q[3 * MAT + 7] = 8; /* expert 3, integer 7 */
  report("range",
         ffn_kernel_set_quantized_param(k, "w_up", q, sizeof q, s, sizeof s,
                                        NULL, 0, FFN_LAYOUT_IN_OUT));
  q[3 * MAT + 7] = qValue(3, 0, 7);
  report("router", ffn_kernel_set_quantized_param(k, "w_router", q, D * E, s,
                                                  GROUPS * E * 4, NULL, 0,
                                                  FFN_LAYOUT_IN_OUT));
  report("bias", ffn_kernel_set_quantized_param(k, "b_up", q, N * F, s, 4, NULL,
                                                0, FFN_LAYOUT_IN_OUT));

  const int layouts[2] = {FFN_LAYOUT_IN_OUT, FFN_LAYOUT_OUT_IN};
  for (int l = 0; l < 2; ++l) {
    ncalls = 0;
    ffn_status st = ffn_kernel_set_quantized_param(
        k, "w_up", l ? (const void *)qT : q, sizeof q, l ? (const void *)sT : s,
        sizeof s, NULL, 0, (ffn_weight_layout)layouts[l]);
    report(l ? "quantized out-in" : "quantized in-out", st);
    int ok = ncalls == N;
    for (int e = 0; e < ncalls; ++e) {
      ok &= calls[e].src_ok &&
            (char *)calls[e].dst - (char *)calls[0].dst == e * STRIDE;
      if (!l)
        ok &= (const char *)calls[e].src - (const char *)q == e * MAT &&
              (const char *)calls[e].scales - (const char *)s ==
                  e * GROUPS * F * 4;
    }
    printf("quantized %s: %s\n", l ? "out-in" : "in-out",
           ok ? "each expert's blocks, packed at e * 576" : "WRONG");
  }
  ffn_kernel_destroy(k);
}

int main(void) {
  if (ffn_context_create(&ctx) != FFN_OK)
    return 1;
  refusals();
  setAndRun();
  quantized();
  ffn_context_destroy(ctx);
  printf("done\n");
  return 0;
}
