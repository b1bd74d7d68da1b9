/* ffn_kernel_set_quantized_param: blocks quantized elsewhere -- integers
 * over the whole range of each format (int4 -8 included, which ffnc's own
 * quantizer never produces), scales no formula would pick, zero points --
 * must give the FFN with weights s q (s (q - z)): checked against a double
 * evaluation of that FFN, with both layouts; then every error path. */
#include "kernels.h"

#include <ffn/runtime.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { D = 8, F = 12, G = 4, M = 3 };

static ffn_context *ctx;

static void report(const char *what, ffn_status s) {
  printf("%s: %s%s%s\n", what, ffn_status_string(s), s ? ": " : "",
         s ? ffn_context_last_error(ctx) : "");
}

/* Blocks of an [in, out] matrix: q in [lo, hi], scales, zero points. */
typedef struct blocks {
  signed char q[F * F];
  float s[F * F];
  unsigned char z[F * F];
  double w[F * F]; /* s (q - z) */
} blocks;

static void make(blocks *b, int in, int out, int lo, int hi, int zp,
                 unsigned seed) {
  int groups = (in + G - 1) / G;
  for (int g = 0; g < groups; ++g)
    for (int c = 0; c < out; ++c) {
      b->s[g * out + c] = 0.004f * (float)(1 + (seed + 7 * g + 3 * c) % 9);
      b->z[g * out + c] = zp ? (unsigned char)((seed + g + 5 * c) % 16) : 0;
    }
  for (int k = 0; k < in; ++k)
    for (int c = 0; c < out; ++c) {
      int span = hi - lo + 1;
      int v = lo + (int)((seed * 31u + (unsigned)(k * 17 + c * 13)) %
                         (unsigned)span);
      b->q[k * out + c] = (signed char)v;
      int gi = (k / G) * out + c;
      b->w[k * out + c] = (double)b->s[gi] * (v - b->z[gi]);
    }
}

/* [rows, cols] of `es` bytes to [cols, rows]. */
static void transpose(const void *src, void *dst, int rows, int cols, int es) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      memcpy((char *)dst + (c * rows + r) * es,
             (const char *)src + (r * cols + c) * es, (size_t)es);
}

static ffn_status set(ffn_kernel *k, const char *name, const blocks *b, int in,
                      int out, int zp, int outIn) {
  int groups = (in + G - 1) / G;
  size_t qn = (size_t)in * out, sn = (size_t)groups * out;
  if (!outIn)
    return ffn_kernel_set_quantized_param(k, name, b->q, qn, b->s, sn * 4,
                                          zp ? b->z : NULL, zp ? sn : 0,
                                          FFN_LAYOUT_IN_OUT);
  signed char q[F * F];
  float s[F * F];
  unsigned char z[F * F];
  transpose(b->q, q, in, out, 1);
  transpose(b->s, s, groups, out, 4);
  transpose(b->z, z, groups, out, 1);
  return ffn_kernel_set_quantized_param(
      k, name, q, qn, s, sn * 4, zp ? z : NULL, zp ? sn : 0, FFN_LAYOUT_OUT_IN);
}

/* Runs `desc` on fixed input with weights from blocks; prints the largest
 * error against the double FFN relative to its bound: 1e-5 of the sum of
 * |terms| of each output (f32 evaluation of sums of 8 and 12 terms). */
static void check(const char *label, const ffn_kernel_desc *desc, int lo,
                  int hi, int zp, int outIn) {
  ffn_kernel *k = NULL;
  if (ffn_kernel_create(ctx, desc, &k) != FFN_OK) {
    report(label, FFN_ERROR_INVALID_ARGUMENT);
    return;
  }
  blocks up, down;
  make(&up, D, F, lo, hi, zp, 3);
  make(&down, F, D, lo, hi, zp, 11);
  ffn_status s = set(k, "w_up", &up, D, F, zp, outIn);
  if (s == FFN_OK)
    s = set(k, "w_down", &down, F, D, zp, outIn);
  float x[M * D], y[M * D];
  for (int i = 0; i < M * D; ++i)
    x[i] = (float)((i * 37 % 19) - 9) / 8.0f;
  if (s == FFN_OK)
    s = ffn_kernel_run(k, M, x, y);
  if (s != FFN_OK) {
    report(label, s);
    ffn_kernel_destroy(k);
    return;
  }
  double worst = 0;
  for (int r = 0; r < M; ++r) {
    double h[F];
    for (int j = 0; j < F; ++j) {
      double a = 0;
      for (int i = 0; i < D; ++i)
        a += x[r * D + i] * up.w[i * F + j];
      h[j] = a > 0 ? a : 0;
    }
    for (int j = 0; j < D; ++j) {
      double a = 0, mag = 0;
      for (int i = 0; i < F; ++i) {
        a += h[i] * down.w[i * D + j];
        mag += fabs(h[i] * down.w[i * D + j]);
      }
      double e = fabs(y[r * D + j] - a) / (1e-5 * mag + 1e-30);
      if (e > worst)
        worst = e;
    }
  }
  printf("%s: %s (err/bound %.3f)\n", label, worst <= 1 ? "ok" : "WRONG",
         worst);
  ffn_kernel_destroy(k);
}

int main(void) {
  ffn_context_create(&ctx);
  check("int8 in-out", &ffn_kernel_q8, -128, 127, 0, 0);
  check("int8 out-in", &ffn_kernel_q8, -128, 127, 0, 1);
  check("int4 in-out", &ffn_kernel_q4, -8, 7, 0, 0);
  check("int4 out-in", &ffn_kernel_q4, -8, 7, 0, 1);
  check("int4 zp in-out", &ffn_kernel_q4zp, 0, 15, 1, 0);
  check("int4 zp out-in", &ffn_kernel_q4zp, 0, 15, 1, 1);

  /* Error paths: each a clear message, the kernel unchanged. */
  ffn_kernel *k4 = NULL, *kz = NULL, *kd = NULL;
  ffn_kernel_create(ctx, &ffn_kernel_q4, &k4);
  ffn_kernel_create(ctx, &ffn_kernel_q4zp, &kz);
  ffn_kernel_create(ctx, &ffn_kernel_dense, &kd);
  blocks b;
  make(&b, D, F, -8, 7, 0, 5);
  size_t qn = D * F, sn = 2 * F * 4;
  report("null q", ffn_kernel_set_quantized_param(k4, "w_up", NULL, qn, b.s, sn,
                                                  NULL, 0, FFN_LAYOUT_IN_OUT));
  report("unknown name",
         ffn_kernel_set_quantized_param(k4, "w_gate", b.q, qn, b.s, sn, NULL, 0,
                                        FFN_LAYOUT_IN_OUT));
  report("q size",
         ffn_kernel_set_quantized_param(k4, "w_up", b.q, qn - 1, b.s, sn, NULL,
                                        0, FFN_LAYOUT_IN_OUT));
  report("scale size",
         ffn_kernel_set_quantized_param(k4, "w_up", b.q, qn, b.s, sn / 2, NULL,
                                        0, FFN_LAYOUT_IN_OUT));
  b.q[5] = 8;
  report("int4 range",
         ffn_kernel_set_quantized_param(k4, "w_up", b.q, qn, b.s, sn, NULL, 0,
                                        FFN_LAYOUT_IN_OUT));
  b.q[5] = 0;
  report("zero points given",
         ffn_kernel_set_quantized_param(k4, "w_up", b.q, qn, b.s, sn, b.z,
                                        sn / 4, FFN_LAYOUT_IN_OUT));
  report("zero points missing",
         ffn_kernel_set_quantized_param(kz, "w_up", b.q, qn, b.s, sn, NULL, 0,
                                        FFN_LAYOUT_IN_OUT));
  report("zp negative q",
         ffn_kernel_set_quantized_param(kz, "w_up", b.q, qn, b.s, sn, b.z,
                                        sn / 4, FFN_LAYOUT_IN_OUT));
  report("layout",
         ffn_kernel_set_quantized_param(k4, "w_up", b.q, qn, b.s, sn, NULL, 0,
                                        (ffn_weight_layout)7));
  report("dense kernel",
         ffn_kernel_set_quantized_param(kd, "w_up", b.q, qn, b.s, sn, NULL, 0,
                                        FFN_LAYOUT_IN_OUT));
  report("not set", ffn_kernel_run(k4, 1, b.s, b.s + 16));
  ffn_kernel_destroy(k4);
  ffn_kernel_destroy(kz);
  ffn_kernel_destroy(kd);
  ffn_context_destroy(ctx);
  return 0;
}
