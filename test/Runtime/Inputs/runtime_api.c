/* Exercises every validation of the runtime's C API against a kernel linked
 * into this program, and prints one line per check for FileCheck. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "kernels.h"

#include <ffn/runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D 8
#define F 16

static ffn_context *ctx;

static void report(const char *what, ffn_status s) {
  printf("%s: %s: %s\n", what, ffn_status_string(s),
         s == FFN_OK ? "" : ffn_context_last_error(ctx));
}

int main(void) {
  float w1[D * F], w1t[F * D], w2[F * D], b1[F], b2[D], x[4 * D], y[4 * D],
      y2[4 * D];
  for (int i = 0; i < D * F; ++i)
    w1[i] = w2[i] = (float)((i * 37 % 17) - 8) / 16.0f;
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < F; ++j)
      w1t[j * D + i] = w1[i * F + j];
  for (int i = 0; i < F; ++i)
    b1[i] = 0.01f * i;
  for (int i = 0; i < D; ++i)
    b2[i] = -0.02f * i;
  for (int i = 0; i < 4 * D; ++i)
    x[i] = (float)((i * 13 % 11) - 5) / 5.0f;

  printf("null out: %s\n", ffn_status_string(ffn_context_create(NULL)));
  report("create", ffn_context_create(&ctx));

  ffn_kernel *k = NULL;
  report("null desc", ffn_kernel_create(ctx, NULL, &k));
  report("missing library",
         ffn_kernel_load_library(ctx, "/nonexistent/libk.so", "small", &k));
  report("null path", ffn_kernel_load_library(ctx, NULL, "small", &k));

  /* Descriptors the runtime must refuse. */
  ffn_kernel_desc bad = ffn_kernel_small;
  bad.abi_version = 99;
  report("abi version", ffn_kernel_create(ctx, &bad, &k));
  bad = ffn_kernel_small;
  bad.struct_size = 8;
  report("struct size", ffn_kernel_create(ctx, &bad, &k));
  bad = ffn_kernel_small;
  bad.dtype = 7;
  report("dtype", ffn_kernel_create(ctx, &bad, &k));
  bad = ffn_kernel_small;
  bad.weight_quant = 5;
  report("weight format", ffn_kernel_create(ctx, &bad, &k));
  bad = ffn_kernel_small;
  bad.weight_quant = FFN_WEIGHTS_INT4;
  bad.quant_group = 3;
  report("quant group", ffn_kernel_create(ctx, &bad, &k));
  bad = ffn_kernel_small;
  bad.device = FFN_DEVICE_CUDA; /* no device image or launch plan */
  report("device", ffn_kernel_create(ctx, &bad, &k));
  bad = ffn_kernel_small;
  bad.device = 7;
  report("unknown device", ffn_kernel_create(ctx, &bad, &k));
  bad = ffn_kernel_small;
  bad.cpu = NULL;
  report("no entry", ffn_kernel_create(ctx, &bad, &k));
  /* Static: the runtime wants the entry in a loaded object. */
  static ffn_cpu_code code;
  code = *ffn_kernel_small.cpu;
  code.run = NULL;
  bad.cpu = &code;
  report("no run", ffn_kernel_create(ctx, &bad, &k));
  /* A mixture of experts without its fields (test/Runtime/moe-runtime.test
   * has the rest). */
  bad = ffn_kernel_small;
  bad.kind = FFN_KIND_MOE;
  report("moe kind", ffn_kernel_create(ctx, &bad, &k));
  bad = ffn_kernel_small;
  bad.target = "x86-64-sse2";
  report("foreign target", ffn_kernel_create(ctx, &bad, &k));
  /* As if this CPU had no AVX-512: code for it is refused at load time
   * (it would die of SIGILL in its first run). */
  setenv("FFN_MAX_CPU_ISA", "avx2", 1);
  bad = ffn_kernel_small;
  bad.target = "x86-64-avx512";
  report("avx512 on avx2", ffn_kernel_create(ctx, &bad, &k));
  report("avx2 on avx2", ffn_kernel_create(ctx, &ffn_kernel_small, &k));
  ffn_kernel_destroy(k);
  unsetenv("FFN_MAX_CPU_ISA");

  report("kernel", ffn_kernel_create(ctx, &ffn_kernel_small, &k));
  printf("name %s d_model %ld d_ff %ld params %ld\n",
         ffn_kernel_descriptor(k)->name,
         (long)ffn_kernel_descriptor(k)->d_model,
         (long)ffn_kernel_descriptor(k)->d_ff,
         (long)ffn_kernel_descriptor(k)->num_params);

  report("run before params", ffn_kernel_run(k, 4, x, y));
  report("unknown param",
         ffn_kernel_set_param(k, "w_gate", w1, sizeof w1, FFN_LAYOUT_IN_OUT));
  report("wrong size",
         ffn_kernel_set_param(k, "w_up", w1, sizeof w1 - 4, FFN_LAYOUT_IN_OUT));
  report("null data",
         ffn_kernel_set_param(k, "w_up", NULL, sizeof w1, FFN_LAYOUT_IN_OUT));
  report("bad layout",
         ffn_kernel_set_param(k, "w_up", w1, sizeof w1, (ffn_weight_layout)5));
  report("w_up",
         ffn_kernel_set_param(k, "w_up", w1, sizeof w1, FFN_LAYOUT_IN_OUT));
  report("w_down",
         ffn_kernel_set_param(k, "w_down", w2, sizeof w2, FFN_LAYOUT_IN_OUT));
  report("b_up",
         ffn_kernel_set_param(k, "b_up", b1, sizeof b1, FFN_LAYOUT_IN_OUT));
  report("b_down",
         ffn_kernel_set_param(k, "b_down", b2, sizeof b2, FFN_LAYOUT_OUT_IN));

  report("m = 0", ffn_kernel_run(k, 0, x, y));
  report("m < 0", ffn_kernel_run(k, -3, x, y));
  report("null x", ffn_kernel_run(k, 4, NULL, y));
  report("overlap", ffn_kernel_run(k, 4, x, x + 1));
  report("run", ffn_kernel_run(k, 4, x, y));

  /* The same weights given as [out, in] give the same bits. */
  report("w_up out-in",
         ffn_kernel_set_param(k, "w_up", w1t, sizeof w1t, FFN_LAYOUT_OUT_IN));
  report("run again", ffn_kernel_run(k, 4, x, y2));
  printf("layouts agree: %s\n", memcmp(y, y2, sizeof y) == 0 ? "yes" : "no");

  /* One element by hand: y[1][3] = sum_j relu(x1 . W1[:, j] + b1[j]) W2[j][3] +
   * b2[3]. */
  double ref = b2[3];
  for (int j = 0; j < F; ++j) {
    double h = b1[j];
    for (int i = 0; i < D; ++i)
      h += (double)x[D + i] * w1[i * F + j];
    ref += (h > 0 ? h : 0) * w2[j * D + 3];
  }
  printf("y[1][3] matches: %s\n",
         fabs(y[D + 3] - ref) <= 1e-5 * (1 + fabs(ref)) ? "yes" : "no");

  ffn_kernel_destroy(k);

  /* Threads: the same bits for 1 and 2 threads (work large enough that the
   * runtime really splits it), and the thread count is validated. */
  report("threads -1", ffn_context_set_threads(ctx, -1));
  ffn_kernel *w = NULL;
  report("wide", ffn_kernel_create(ctx, &ffn_kernel_wide, &w));
  static float wu[256 * 1024], wg[256 * 1024], wd[1024 * 256], xw[16 * 256],
      yw1[16 * 256], yw2[16 * 256];
  for (int i = 0; i < 256 * 1024; ++i) {
    wu[i] = (float)((i * 7 % 23) - 11) / 256.0f;
    wg[i] = (float)((i * 5 % 19) - 9) / 256.0f;
    wd[i] = (float)((i * 3 % 29) - 14) / 512.0f;
  }
  for (int i = 0; i < 16 * 256; ++i)
    xw[i] = (float)((i * 11 % 13) - 6) / 6.0f;
  ffn_kernel_set_param(w, "w_up", wu, sizeof wu, FFN_LAYOUT_IN_OUT);
  ffn_kernel_set_param(w, "w_gate", wg, sizeof wg, FFN_LAYOUT_IN_OUT);
  ffn_kernel_set_param(w, "w_down", wd, sizeof wd, FFN_LAYOUT_IN_OUT);
  ffn_context_set_threads(ctx, 1);
  report("1 thread", ffn_kernel_run(w, 16, xw, yw1));
  ffn_context_set_threads(ctx, 2);
  printf("threads now %d\n", ffn_context_threads(ctx));
  report("2 threads", ffn_kernel_run(w, 16, xw, yw2));
  printf("threads agree: %s\n",
         memcmp(yw1, yw2, sizeof yw1) == 0 ? "yes" : "no");
  ffn_kernel_destroy(w);
  ffn_kernel_destroy(NULL);
  ffn_context_destroy(ctx);
  ffn_context_destroy(NULL);
  printf("done\n");
  return 0;
}
