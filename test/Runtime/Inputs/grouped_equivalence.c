/* A grouped FFN against its dense twin (grouped_equivalence.ffn): the dense
 * kernel gets the block-diagonal embedding of the grouped kernel's weights
 * (block g's matrix at rows g*in.., columns g*out.., zeros elsewhere; the
 * stacked biases, which are the blocks' biases back to back, as they are;
 * the norm's vectors as they are), both run the same input, and the outputs
 * must be the same bits, +0 and -0 aside.
 *
 * Why bit for bit: both kernels are batch-invariant two-pass kernels, which
 * compute every output element as one sequential chain of f32 FMAs over k
 * (docs/numerics.md). Hidden column j of block g sums, in the dense GEMM 1,
 * the products of all d_model columns of x in k order: the other blocks'
 * columns contribute x[k] * 0.0, an exact +0 or -0 (the data are finite),
 * and the block's own columns contribute the very terms the grouped GEMM 1
 * adds, in the same order. Adding a zero to an f32 accumulator leaves its
 * value unchanged (round to nearest: a + 0 = a for a != 0, and +0 + -0 =
 * +0), so the two sums can differ at most in the sign of a zero. The
 * activation, the gate product and any rounding to the dtype are then
 * the same functions of the same values, GEMM 2 adds the zero weights of
 * the other blocks' hidden columns the same way, and residual and norm act
 * on identical rows with the same code. A sign of zero only propagates as a
 * sign of zero (a product or a sum with it; a norm squares it). So an
 * element compares equal when the bits are equal or both are zeros.
 *
 * Unwritten output is caught too: the two outputs start with different
 * bytes. And the comparison can fail: with two blocks of the grouped
 * kernel's w_down swapped in the caller's buffer and set again, it must
 * differ from the dense output (then, swapped back, agree again). */
#include "kernels.h"

#include <ffn/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_M = 33, MAX_D = 64, MAX_PARAMS = 8, CONTROL_M = 5 };

static const int64_t kTokens[] = {1, 5, 33};
static const int kThreads[] = {1, 3};

static ffn_context *ctx;

/* Any failure ends the program with a line that no CHECK accepts. */
static void check(const char *kernel, const char *what, ffn_status s) {
  if (s == FFN_OK)
    return;
  printf("%s: %s: %s -- %s\n", kernel, what, ffn_status_string(s),
         ffn_context_last_error(ctx));
  exit(1);
}

static void fail(const char *kernel, const char *what) {
  printf("%s: %s\n", kernel, what);
  exit(1);
}

/* Deterministic data: a 32-bit LCG, values in [-1, 1) on a 2^-23 grid
 * (exact in f32). */
static uint32_t lcgState = 20261123u;

static float uniform(void) {
  lcgState = lcgState * 1664525u + 1013904223u;
  return (float)(lcgState >> 8) / 8388608.0f - 1.0f;
}

/* f32 -> bf16 bit pattern, rounding to nearest even (no NaN here). */
static uint16_t toBf16(float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static float fromBf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* Element i of a buffer of the kernel's dtype: its bits, its value. */
static uint32_t bitsAt(const void *p, size_t i, size_t es) {
  if (es == 2) {
    uint16_t h;
    memcpy(&h, (const char *)p + i * 2, 2);
    return h;
  }
  uint32_t u;
  memcpy(&u, (const char *)p + i * 4, 4);
  return u;
}

static float valueAt(const void *p, size_t i, size_t es) {
  uint32_t u = bitsAt(p, i, es);
  if (es == 2)
    return fromBf16((uint16_t)u);
  float v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* n values center + scale * uniform(), stored in the dtype: bf16 values
 * are rounded once here, so both kernels read exactly the same numbers. */
static void fill(void *dst, size_t n, size_t es, float center, float scale) {
  for (size_t i = 0; i < n; ++i) {
    float v = center + scale * uniform();
    if (es == 2) {
      uint16_t h = toBf16(v);
      memcpy((char *)dst + i * 2, &h, 2);
    } else {
      memcpy((char *)dst + i * 4, &v, 4);
    }
  }
}

static const ffn_param_desc *findParam(const ffn_kernel_desc *d,
                                       const char *name) {
  for (int64_t i = 0; i < d->num_params; ++i)
    if (strcmp(d->params[i].name, name) == 0)
      return &d->params[i];
  return NULL;
}

static size_t elements(const ffn_param_desc *p) {
  size_t one = (size_t)p->shape[0] * (size_t)(p->rank == 2 ? p->shape[1] : 1);
  return one * (size_t)(p->experts ? p->experts : 1);
}

/* Elements that differ, +0 and -0 being equal; *first the first one. */
static size_t compare(const void *a, const void *b, size_t n, size_t es,
                      size_t *first) {
  uint32_t magnitude = es == 2 ? 0x7fffu : 0x7fffffffu;
  size_t differ = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t x = bitsAt(a, i, es), y = bitsAt(b, i, es);
    if (x == y || ((x & magnitude) == 0 && (y & magnitude) == 0))
      continue;
    if (differ++ == 0)
      *first = i;
  }
  return differ;
}

/* Runs both kernels on m rows of x; the outputs start different. */
static void runBoth(const char *name, ffn_kernel *grouped, ffn_kernel *dense,
                    int64_t m, const void *x, void *yGrouped, void *yDense,
                    size_t bytes) {
  memset(yGrouped, 0x55, bytes);
  memset(yDense, 0xaa, bytes);
  check(name, "run grouped", ffn_kernel_run(grouped, m, x, yGrouped));
  check(name, "run dense", ffn_kernel_run(dense, m, x, yDense));
}

static void testPair(const ffn_kernel_desc *gd, const ffn_kernel_desc *dd) {
  const char *name = gd->name;
  if (gd->kind != FFN_KIND_GROUPED || dd->kind != FFN_KIND_FFN ||
      dd->groups != 0 || gd->d_model != dd->d_model || gd->d_ff != dd->d_ff ||
      gd->dtype != dd->dtype || gd->num_params != dd->num_params ||
      gd->num_params > MAX_PARAMS || gd->d_model > MAX_D)
    fail(name, "the pair's descriptors do not match");
  size_t es = gd->dtype == FFN_DTYPE_F32 ? 4 : 2;
  if (gd->dtype != FFN_DTYPE_F32 && gd->dtype != FFN_DTYPE_BF16)
    fail(name, "neither f32 nor bf16");
  int64_t g = gd->groups, d = gd->d_model, f = gd->d_ff;

  ffn_kernel *grouped, *dense;
  check(name, "create grouped", ffn_kernel_create(ctx, gd, &grouped));
  check(name, "create dense", ffn_kernel_create(ctx, dd, &dense));

  /* The parameters: the grouped kernel's stacked tensors, and their
   * block-diagonal embedding for the dense one. */
  void *stacked[MAX_PARAMS] = {0};
  int stackedCount = 0;
  void *wDown = NULL;
  const ffn_param_desc *wDownDesc = NULL;
  for (int64_t i = 0; i < gd->num_params; ++i) {
    const ffn_param_desc *p = &gd->params[i];
    const ffn_param_desc *q = findParam(dd, p->name);
    int norm = strncmp(p->name, "norm_", 5) == 0;
    /* Stacked: every matrix and bias, G blocks; the norm's vectors never. */
    if (!q || q->experts != 0 || q->rank != p->rank ||
        p->experts != (norm ? 0 : g))
      fail(name, "a parameter the twins do not share");
    int64_t rows = p->experts ? g * p->shape[0] : p->shape[0];
    int64_t cols = p->rank == 2 ? g * p->shape[1] : 0;
    if (q->shape[0] != rows || q->shape[1] != cols)
      fail(name, "a dense shape other than the blocks' embedding");
    stackedCount += p->experts != 0;

    size_t n = elements(p);
    stacked[i] = malloc(n * es);
    if (!stacked[i])
      fail(name, "out of memory");
    if (p->rank == 2)
      fill(stacked[i], n, es, 0.0f, 0.25f);
    else if (strcmp(p->name, "norm_scale") == 0)
      fill(stacked[i], n, es, 1.0f, 0.25f);
    else
      fill(stacked[i], n, es, 0.0f, 0.125f);
    check(name, p->name,
          ffn_kernel_set_param(grouped, p->name, stacked[i], n * es,
                               FFN_LAYOUT_IN_OUT));

    if (p->rank == 2) {
      /* Block b's [in, out] matrix at rows b*in.., columns b*out.. of the
       * dense [G*in, G*out] one. */
      size_t in = (size_t)p->shape[0], out = (size_t)p->shape[1];
      size_t denseCols = (size_t)g * out;
      char *embedded = calloc(n * (size_t)g, es);
      if (!embedded)
        fail(name, "out of memory");
      for (size_t b = 0; b < (size_t)g; ++b)
        for (size_t r = 0; r < in; ++r)
          memcpy(embedded + ((b * in + r) * denseCols + b * out) * es,
                 (const char *)stacked[i] + ((b * in + r) * out) * es,
                 out * es);
      check(name, p->name,
            ffn_kernel_set_param(dense, p->name, embedded, n * (size_t)g * es,
                                 FFN_LAYOUT_IN_OUT));
      free(embedded);
    } else {
      /* A stacked bias [G, size] row-major is the blocks' biases back to
       * back: the dense bias. The norm's vectors are the whole row's. */
      check(name, p->name,
            ffn_kernel_set_param(dense, p->name, stacked[i], n * es,
                                 FFN_LAYOUT_IN_OUT));
    }
    if (strcmp(p->name, "w_down") == 0) {
      wDown = stacked[i];
      wDownDesc = p;
    }
  }
  if (!wDownDesc)
    fail(name, "no w_down");
  printf("%s: %lld blocks of d_model %lld, d_ff %lld; %lld parameters, %d "
         "stacked\n",
         name, (long long)g, (long long)(d / g), (long long)(f / g),
         (long long)gd->num_params, stackedCount);

  size_t rowElements = (size_t)d;
  size_t bytes = (size_t)MAX_M * rowElements * es;
  /* Rows of the dtype (float arrays: aligned for either). */
  float x[MAX_M * MAX_D], yGrouped[MAX_M * MAX_D], yDense[MAX_M * MAX_D];
  fill(x, MAX_M * rowElements, es, 0.0f, 1.0f);

  for (size_t t = 0; t < sizeof kThreads / sizeof kThreads[0]; ++t) {
    check(name, "threads", ffn_context_set_threads(ctx, kThreads[t]));
    for (size_t k = 0; k < sizeof kTokens / sizeof kTokens[0]; ++k) {
      int64_t m = kTokens[k];
      size_t n = (size_t)m * rowElements;
      runBoth(name, grouped, dense, m, x, yGrouped, yDense, bytes);
      size_t first = 0;
      size_t differ = compare(yGrouped, yDense, n, es, &first);
      if (differ == 0) {
        printf("%s m=%lld threads=%d: identical\n", name, (long long)m,
               kThreads[t]);
        continue;
      }
      printf("%s m=%lld threads=%d: %zu of %zu elements differ; first "
             "differs at row %zu, column %zu: grouped %.9g (0x%x), dense "
             "%.9g (0x%x)\n",
             name, (long long)m, kThreads[t], differ, n, first / rowElements,
             first % rowElements, (double)valueAt(yGrouped, first, es),
             bitsAt(yGrouped, first, es), (double)valueAt(yDense, first, es),
             bitsAt(yDense, first, es));
    }
  }

  /* The negative control: blocks 0 and 1 of w_down swapped in the caller's
   * buffer and set again; block 0's output columns are then computed with
   * block 1's weights and must differ from the dense output. */
  check(name, "threads", ffn_context_set_threads(ctx, 1));
  size_t block = (size_t)wDownDesc->shape[0] * (size_t)wDownDesc->shape[1];
  size_t n = (size_t)CONTROL_M * rowElements, first = 0;
  for (int round = 0; round < 2; ++round) {
    char *b0 = (char *)wDown, *b1 = b0 + block * es;
    for (size_t i = 0; i < block * es; ++i) {
      char c = b0[i];
      b0[i] = b1[i];
      b1[i] = c;
    }
    check(name, "w_down",
          ffn_kernel_set_param(grouped, "w_down", wDown,
                               elements(wDownDesc) * es, FFN_LAYOUT_IN_OUT));
    runBoth(name, grouped, dense, CONTROL_M, x, yGrouped, yDense, bytes);
    size_t differ = compare(yGrouped, yDense, n, es, &first);
    if (round == 0)
      printf("%s swapped blocks differ: %s\n", name, differ ? "yes" : "no");
    else
      printf("%s swapped back: %s\n", name, differ ? "differ" : "identical");
  }

  for (int64_t i = 0; i < gd->num_params; ++i)
    free(stacked[i]);
  ffn_kernel_destroy(grouped);
  ffn_kernel_destroy(dense);
}

int main(void) {
  check("context", "create", ffn_context_create(&ctx));
  testPair(&ffn_kernel_swiglu_g4, &ffn_kernel_swiglu_g4_dense);
  testPair(&ffn_kernel_relu_g4_post, &ffn_kernel_relu_g4_post_dense);
  testPair(&ffn_kernel_geglu_bf16_g2, &ffn_kernel_geglu_bf16_g2_dense);
  ffn_context_destroy(ctx);
  return 0;
}
