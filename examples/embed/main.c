/* Embeds the tiny_gelu kernel (compiled ahead of time by ffnc through
 * ffnc_add_kernel) and runs it through the runtime: hand over PyTorch-layout
 * weights, run 4 tokens, and check one output row against a direct
 * computation in double precision. */
#include "tiny_kernels.h" /* generated: declares ffn_kernel_tiny_gelu */

#include <ffn/runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { D = 64, F = 256, M = 4 };

static float value(unsigned i, float scale) {
  /* A deterministic spread of values in [-scale, scale]. */
  return scale * (float)((int)((i * 2654435761u) >> 22) % 201 - 100) / 100.0f;
}

static int check(ffn_status status, ffn_context *ctx, const char *what) {
  if (status == FFN_OK)
    return 0;
  fprintf(stderr, "%s failed: %s: %s\n", what, ffn_status_string(status),
          ffn_context_last_error(ctx));
  return 1;
}

int main(void) {
  /* nn.Linear stores weight as [out, in]: W1 is [F, D], W2 is [D, F]. */
  static float w1[F * D], w2[D * F], b1[F], b2[D], x[M * D], y[M * D];
  for (unsigned i = 0; i < F * D; ++i) {
    w1[i] = value(i, 0.125f);
    w2[i] = value(i + 7919, 0.0625f);
  }
  for (unsigned i = 0; i < F; ++i)
    b1[i] = value(i + 31, 0.1f);
  for (unsigned i = 0; i < D; ++i)
    b2[i] = value(i + 57, 0.1f);
  for (unsigned i = 0; i < M * D; ++i)
    x[i] = value(i + 101, 1.0f);

  ffn_context *ctx = NULL;
  ffn_kernel *k = NULL;
  if (ffn_context_create(&ctx) != FFN_OK)
    return 1;
  if (check(ffn_kernel_create(ctx, &ffn_kernel_tiny_gelu, &k), ctx, "create") ||
      check(ffn_kernel_set_param(k, "w_up", w1, sizeof w1, FFN_LAYOUT_OUT_IN),
            ctx, "w_up") ||
      check(ffn_kernel_set_param(k, "w_down", w2, sizeof w2, FFN_LAYOUT_OUT_IN),
            ctx, "w_down") ||
      check(ffn_kernel_set_param(k, "b_up", b1, sizeof b1, FFN_LAYOUT_IN_OUT),
            ctx, "b_up") ||
      check(ffn_kernel_set_param(k, "b_down", b2, sizeof b2, FFN_LAYOUT_IN_OUT),
            ctx, "b_down") ||
      check(ffn_kernel_run(k, M, x, y), ctx, "run"))
    return 1;

  /* Row 2 by hand: y = x + gelu(x W1^T + b1) W2^T + b2. */
  const float *xr = x + 2 * D;
  double h[F], worst = 0;
  for (int j = 0; j < F; ++j) {
    double u = b1[j];
    for (int i = 0; i < D; ++i)
      u += (double)xr[i] * w1[j * D + i];
    h[j] = 0.5 * u * (1.0 + erf(u / sqrt(2.0)));
  }
  for (int o = 0; o < D; ++o) {
    double ref = xr[o] + b2[o];
    for (int j = 0; j < F; ++j)
      ref += h[j] * w2[o * F + j];
    double err = fabs(y[2 * D + o] - ref) / (1.0 + fabs(ref));
    if (err > worst)
      worst = err;
  }
  printf("kernel %s (%s), d_model %ld, d_ff %ld\n", ffn_kernel_tiny_gelu.name,
         ffn_kernel_tiny_gelu.target, (long)ffn_kernel_tiny_gelu.d_model,
         (long)ffn_kernel_tiny_gelu.d_ff);
  printf("row 2: max relative error vs double reference %.2e: %s\n", worst,
         worst < 1e-5 ? "ok" : "MISMATCH");

  ffn_kernel_destroy(k);
  ffn_context_destroy(ctx);
  return worst < 1e-5 ? 0 : 1;
}
