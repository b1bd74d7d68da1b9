/* The runtime's side of grouped FFNs, on hand-made descriptors whose
 * functions are this program's (no compiler involved): which grouped
 * descriptors it refuses and why (every rule of the runtime's stacking
 * check); how it sizes, lays out and packs a stacked parameter's blocks
 * (pack and pack_quantized record where each block's source and
 * destination lie and check what they receive) while the norm's vector
 * stays one tensor; and a run whose phase has one unit per block and row,
 * on one thread and on two. One line per check, for FileCheck. */
#include <ffn/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  D = 16,           /* d_model: the whole row */
  F = 32,           /* d_ff */
  G = 4,            /* groups */
  BD = D / G,       /* one block's d_model */
  BF = F / G,       /* one block's d_ff */
  MAT = BD * BF,    /* elements of one block's w_up or w_down */
  PACKED = 200,     /* a block's packed w_up / w_down: not a multiple */
  STRIDE = 256,     /*   of 64, so the stride rounds it up */
  BIAS_PACKED = 40, /* a block's b_up (8 floats) or b_down (4) and some */
  BIAS_STRIDE = 64, /*   rounded up */
  NORM_PACKED = D * 4,
  QG = 2,            /* quant_group of the quantized descriptor */
  QGROUPS = BD / QG, /* a block's w_up scale rows: in = BD */
  NUM_PARAMS = 5,
  UNITS = G, /* phase 0 units per row: one per block */
  M = 4096,  /* rows of the threaded run: enough work for the pool */
};

static ffn_context *ctx;

static void report(const char *what, ffn_status s) {
  printf("%s: %s%s%s\n", what, ffn_status_string(s), s ? " -- " : "",
         s ? ffn_context_last_error(ctx) : "");
}

/* The fake kernel: a block's shapes, stacked G times; the norm's scale is
 * the whole row's. */

static const ffn_param_desc params[NUM_PARAMS] = {
    {"w_up", 2, {BD, BF}, PACKED, G},
    {"b_up", 1, {BF, 0}, BIAS_PACKED, G},
    {"w_down", 2, {BF, BD}, PACKED, G},
    {"b_down", 1, {BD, 0}, BIAS_PACKED, G},
    {"norm_scale", 1, {D, 0}, NORM_PACKED, 0},
};

/* What one pack call got. */
typedef struct pack_call {
  int64_t index;
  const void *src, *scales;
  void *dst;
  int src_ok; /* src held block g's tensor in [in, out] */
} pack_call;

static pack_call calls[16];
static int ncalls;

/* Element (i, j) of block g's tensor of parameter `index` in [in, out] (a
 * vector: i = 0): distinct, exact in f32. */
static float value(int64_t index, int g, int64_t i, int64_t j) {
  return (float)(index * 100000 + g * 1000 + i * 32 + j);
}

/* The byte a fake pack fills block g's packed tensor of `index` with. */
static unsigned char marker(int64_t index, int g) {
  return (unsigned char)(16 * (index + 1) + g + 1);
}

/* Each call packs the next block: the runtime packs in block order. */
static int blockOf(int64_t index) {
  int g = 0;
  for (int c = 0; c < ncalls; ++c)
    g += calls[c].index == index;
  return g;
}

static void pack(int64_t index, const void *src, void *dst) {
  const ffn_param_desc *p = &params[index];
  int g = blockOf(index);
  int64_t rows = p->rank == 2 ? p->shape[0] : 1;
  int64_t cols = p->rank == 2 ? p->shape[1] : p->shape[0];
  int ok = 1;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      ok &= ((const float *)src)[i * cols + j] == value(index, g, i, j);
  if (ncalls < 16)
    calls[ncalls++] = (pack_call){index, src, NULL, dst, ok};
  memset(dst, marker(index, g), (size_t)p->packed_bytes);
}

/* q(g, i, j) in [-8, 7] and scale(g, s, j) of the quantized descriptor. */
static signed char qValue(int g, int i, int j) {
  return (signed char)((g * 5 + i * 3 + j) % 16 - 8);
}
static float scaleValue(int g, int s, int j) {
  return (float)(g * 100 + s * 20 + j);
}

static void packQuantized(int64_t index, const void *q, const void *scales,
                          const void *zeroPoints, void *dst) {
  (void)zeroPoints;
  int g = blockOf(index);
  int ok = index == 0;
  for (int i = 0; ok && i < BD; ++i)
    for (int j = 0; j < BF; ++j)
      ok &= ((const signed char *)q)[i * BF + j] == qValue(g, i, j);
  for (int s = 0; ok && s < QGROUPS; ++s)
    for (int j = 0; j < BF; ++j)
      ok &= ((const float *)scales)[s * BF + j] == scaleValue(g, s, j);
  if (ncalls < 16)
    calls[ncalls++] = (pack_call){index, q, scales, dst, ok};
  memset(dst, marker(index, g), (size_t)params[index].packed_bytes);
}

/* Phase 0: UNITS units per row, unit u writes workspace word u. Phase 1: one
 * unit per row, which sums its row's words (each unit ran once: the sum is
 * exact) and, in row 0, checks every packed parameter's bytes. */
static int64_t phaseUnits(int64_t phase, int64_t m) {
  return phase == 0 ? UNITS * m : m;
}

static int packedOk(const void *const *packed) {
  for (int64_t index = 0; index < NUM_PARAMS; ++index) {
    const ffn_param_desc *p = &params[index];
    int64_t stride =
        p->experts ? (p->packed_bytes + 63) / 64 * 64 : p->packed_bytes;
    int64_t tensors = p->experts ? p->experts : 1;
    const unsigned char *b = (const unsigned char *)packed[index];
    if ((uintptr_t)b % 64)
      return 0;
    for (int64_t g = 0; g < tensors; ++g)
      for (int64_t i = 0; i < stride; ++i)
        if (b[g * stride + i] !=
            (i < p->packed_bytes ? marker(index, (int)g) : 0))
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

static ffn_kernel_desc groupedDesc(void) {
  ffn_kernel_desc d;
  memset(&d, 0, sizeof d);
  d.abi_version = FFN_KERNEL_ABI_VERSION;
  d.struct_size = sizeof(ffn_kernel_desc);
  d.name = "grouped";
  d.target = "x86-64-avx2";
  d.kind = FFN_KIND_GROUPED;
  d.device = FFN_DEVICE_CPU;
  d.d_model = D;
  d.d_ff = F;
  d.dtype = FFN_DTYPE_F32;
  d.activation = FFN_ACT_RELU;
  d.residual = 1;
  d.norm = FFN_NORM_RMSNORM;
  d.norm_position = FFN_NORM_PRE;
  d.norm_eps = 1e-6;
  d.operand_rounding = FFN_DTYPE_F32;
  d.weight_quant = FFN_WEIGHTS_DTYPE;
  d.groups = G;
  d.num_params = NUM_PARAMS;
  d.params = params;
  d.pack = pack;
  d.pack_signature = "fake";
  d.workspace_per_row = UNITS * 8;
  d.strategy = "fake: one unit per block and row";
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
  static ffn_param_desc table[NUM_PARAMS];

  /* The kind's own fields. */
  ffn_kernel_desc d = groupedDesc();
  d.top_k = 2;
  tryDesc("moe field in a grouped kernel", &d);
  d = groupedDesc();
  d.groups = 1;
  tryDesc("groups 1", &d);
  d.groups = 0;
  tryDesc("groups 0", &d);
  d.groups = ((int64_t)1 << 16) + 1;
  tryDesc("too many groups", &d);
  d.groups = 3;
  tryDesc("groups not dividing d_model", &d);
  d = groupedDesc();
  d.d_ff = F + 2;
  tryDesc("groups not dividing d_ff", &d);
  d = groupedDesc();
  d.num_params = 9;
  tryDesc("num_params 9", &d);

  /* The stacked parameters. */
  d = groupedDesc();
  d.params = table;
  memcpy(table, params, sizeof table);
  table[2].experts = G - 1;
  tryDesc("stacked count", &d);
  memcpy(table, params, sizeof table);
  table[1].experts = -1;
  tryDesc("negative stack", &d);
  memcpy(table, params, sizeof table);
  table[4].experts = G;
  tryDesc("stacked norm", &d);
  memcpy(table, params, sizeof table);
  table[0].experts = table[1].experts = table[2].experts = table[3].experts = 0;
  tryDesc("nothing stacked", &d);
  memcpy(table, params, sizeof table);
  table[0].experts = 0;
  tryDesc("w_up unstacked", &d);
  memcpy(table, params, sizeof table);
  table[0].shape[0] = D; /* the whole row's widths, not a block's */
  table[0].shape[1] = F;
  tryDesc("w_up of the whole row", &d);
  memcpy(table, params, sizeof table);
  table[0].name = "w_upper";
  tryDesc("no w_up", &d);

  /* groups in the other kinds: a dense FFN of the same widths, then a
   * mixture. */
  d = groupedDesc();
  d.kind = FFN_KIND_FFN;
  d.groups = 0;
  memcpy(table, params, sizeof table);
  for (int i = 0; i < 4; ++i) {
    table[i].experts = 0;
    table[i].shape[0] *= G;
    table[i].shape[1] *= G;
  }
  d.params = table;
  tryDesc("dense", &d);
  d.groups = G;
  tryDesc("groups in a dense kernel", &d);
  d = groupedDesc();
  d.kind = FFN_KIND_MOE;
  d.experts = G;
  d.top_k = 1;
  tryDesc("groups in a mixture", &d);

  /* A grouped FFN for the GPU passes the stacking checks; this one lacks
     its device code. */
  d = groupedDesc();
  d.device = FFN_DEVICE_CUDA;
  d.cpu = NULL;
  tryDesc("cuda grouped", &d);
}

static void setAndRun(void) {
  ffn_kernel_desc desc = groupedDesc();
  ffn_kernel *k = NULL;
  report("grouped kernel", ffn_kernel_create(ctx, &desc, &k));
  const ffn_kernel_desc *d = ffn_kernel_descriptor(k);
  printf("descriptor: kind %ld groups %ld d_model %ld d_ff %ld, w_up stacks "
         "%ld x [%ld, %ld], norm_scale stacks %ld\n",
         (long)d->kind, (long)d->groups, (long)d->d_model, (long)d->d_ff,
         (long)d->params[0].experts, (long)d->params[0].shape[0],
         (long)d->params[0].shape[1], (long)d->params[4].experts);

  /* [G, in, out] and [G, out, in] (each block transposed on its own). */
  static float up[G * MAT], upT[G * MAT], down[G * MAT], bUp[G * BF],
      bDown[G * BD], scale[G * D];
  for (int g = 0; g < G; ++g) {
    for (int i = 0; i < BD; ++i)
      for (int j = 0; j < BF; ++j) {
        up[g * MAT + i * BF + j] = value(0, g, i, j);
        upT[g * MAT + j * BD + i] = value(0, g, i, j);
        down[g * MAT + j * BD + i] = value(2, g, j, i);
      }
    for (int j = 0; j < BF; ++j)
      bUp[g * BF + j] = value(1, g, 0, j);
    for (int j = 0; j < BD; ++j)
      bDown[g * BD + j] = value(3, g, 0, j);
  }
  for (int j = 0; j < D; ++j)
    scale[j] = value(4, 0, 0, j);

  report("one block's bytes",
         ffn_kernel_set_param(k, "w_up", up, MAT * 4, FFN_LAYOUT_IN_OUT));
  report("stacked size",
         ffn_kernel_set_param(k, "w_up", up, sizeof up - 4, FFN_LAYOUT_IN_OUT));
  report("run before params", ffn_kernel_run(k, 2, up, down));

  ncalls = 0;
  report("w_up in-out",
         ffn_kernel_set_param(k, "w_up", up, sizeof up, FFN_LAYOUT_IN_OUT));
  int ok = ncalls == G;
  for (int g = 0; g < ncalls; ++g) {
    ptrdiff_t src = (const char *)calls[g].src - (const char *)up;
    ptrdiff_t dst = (char *)calls[g].dst - (char *)calls[0].dst;
    printf("w_up block %d: src +%td dst +%td%s%s\n", g, src, dst,
           calls[g].src_ok ? "" : " WRONG-SOURCE",
           (uintptr_t)calls[g].dst % 64 ? " UNALIGNED" : "");
    ok &= src == (ptrdiff_t)g * MAT * 4 && dst == (ptrdiff_t)g * STRIDE;
  }
  printf("w_up offsets: %s\n", ok ? "g * in*out*4, g * 256" : "WRONG");

  ncalls = 0;
  report("w_up out-in",
         ffn_kernel_set_param(k, "w_up", upT, sizeof upT, FFN_LAYOUT_OUT_IN));
  ok = ncalls == G;
  for (int g = 0; g < ncalls; ++g)
    ok &= calls[g].src_ok &&
          (char *)calls[g].dst - (char *)calls[0].dst == (ptrdiff_t)g * STRIDE;
  printf("w_up out-in: %s\n", ok ? "each block transposed" : "WRONG");

  ncalls = 0;
  report("b_up",
         ffn_kernel_set_param(k, "b_up", bUp, sizeof bUp, FFN_LAYOUT_OUT_IN));
  ok = ncalls == G;
  for (int g = 0; g < ncalls; ++g)
    ok &= calls[g].src_ok &&
          (const char *)calls[g].src - (const char *)bUp == g * BF * 4 &&
          (char *)calls[g].dst - (char *)calls[0].dst == g * BIAS_STRIDE;
  printf("b_up offsets: %s\n", ok ? "g * 32, g * 64" : "WRONG");

  ncalls = 0;
  report("w_down", ffn_kernel_set_param(k, "w_down", down, sizeof down,
                                        FFN_LAYOUT_IN_OUT));
  report("b_down", ffn_kernel_set_param(k, "b_down", bDown, sizeof bDown,
                                        FFN_LAYOUT_IN_OUT));
  /* The norm acts on the whole row: one [d_model] vector, not G. */
  report("norm_scale per block",
         ffn_kernel_set_param(k, "norm_scale", scale, sizeof scale,
                              FFN_LAYOUT_IN_OUT));
  report("norm_scale", ffn_kernel_set_param(k, "norm_scale", scale, D * 4,
                                            FFN_LAYOUT_IN_OUT));
  printf("norm_scale packed once: %s\n",
         ncalls == 2 * G + 1 && calls[2 * G].index == 4 && calls[2 * G].src_ok
             ? "yes"
             : "WRONG");
  report("not quantized",
         ffn_kernel_set_quantized_param(k, "w_up", up, G * MAT, up, 4, NULL, 0,
                                        FFN_LAYOUT_IN_OUT));

  /* One unit per block and row in phase 0, through the pool. */
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
    /* sum of u + 1 over u in [G r, G r + G) */
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
  ffn_kernel_desc desc = groupedDesc();
  desc.name = "groupedq";
  desc.weight_quant = FFN_WEIGHTS_INT4;
  desc.quant_group = QG;
  desc.pack_quantized = packQuantized;
  ffn_kernel *k = NULL;
  report("quantized grouped kernel", ffn_kernel_create(ctx, &desc, &k));

  static signed char q[G * MAT], qT[G * MAT];
  static float s[G * QGROUPS * BF], sT[G * QGROUPS * BF];
  for (int g = 0; g < G; ++g) {
    for (int i = 0; i < BD; ++i)
      for (int j = 0; j < BF; ++j) {
        q[g * MAT + i * BF + j] = qValue(g, i, j);
        qT[g * MAT + j * BD + i] = qValue(g, i, j);
      }
    for (int r = 0; r < QGROUPS; ++r)
      for (int j = 0; j < BF; ++j) {
        s[(g * QGROUPS + r) * BF + j] = scaleValue(g, r, j);
        sT[(g * BF + j) * QGROUPS + r] = scaleValue(g, r, j);
      }
  }
  report("q size",
         ffn_kernel_set_quantized_param(k, "w_up", q, MAT, s, sizeof s, NULL, 0,
                                        FFN_LAYOUT_IN_OUT));
  report("scale size",
         ffn_kernel_set_quantized_param(k, "w_up", q, sizeof q, s, sizeof s - 4,
                                        NULL, 0, FFN_LAYOUT_IN_OUT));
  q[3 * MAT + 7] = 8; /* block 3, integer 7 */
  report("range",
         ffn_kernel_set_quantized_param(k, "w_up", q, sizeof q, s, sizeof s,
                                        NULL, 0, FFN_LAYOUT_IN_OUT));
  q[3 * MAT + 7] = qValue(3, 0, 7);
  report("bias", ffn_kernel_set_quantized_param(k, "b_up", q, G * BF, s, 4,
                                                NULL, 0, FFN_LAYOUT_IN_OUT));

  const int layouts[2] = {FFN_LAYOUT_IN_OUT, FFN_LAYOUT_OUT_IN};
  for (int l = 0; l < 2; ++l) {
    ncalls = 0;
    ffn_status st = ffn_kernel_set_quantized_param(
        k, "w_up", l ? (const void *)qT : q, sizeof q, l ? (const void *)sT : s,
        sizeof s, NULL, 0, (ffn_weight_layout)layouts[l]);
    report(l ? "quantized out-in" : "quantized in-out", st);
    int ok = ncalls == G;
    for (int g = 0; g < ncalls; ++g) {
      ok &= calls[g].src_ok &&
            (char *)calls[g].dst - (char *)calls[0].dst == g * STRIDE;
      if (!l)
        ok &= (const char *)calls[g].src - (const char *)q == g * MAT &&
              (const char *)calls[g].scales - (const char *)s ==
                  g * QGROUPS * BF * 4;
    }
    printf("quantized %s: %s\n", l ? "out-in" : "in-out",
           ok ? "each block's q and scales, packed at g * 256" : "WRONG");
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
