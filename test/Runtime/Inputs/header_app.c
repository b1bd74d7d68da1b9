/* Calls every function a generated header declares, directly and through
 * the runtime, and checks that all paths give the same bits and match a
 * double-precision reference. Compiled as C11 and as C++17 with
 * -Wall -Wextra -Werror: the header must declare each symbol with exactly
 * the type of ffn/kernel_abi.h (the assignments to the ABI's function
 * pointer types below do not compile otherwise). */
#include "kernels.h"

#include <ffn/runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry_points {
  const ffn_kernel_desc *desc;
  ffn_cpu_entry run;
  ffn_pack_fn pack;
  ffn_phase_units_fn units;
  ffn_cpu_phase phase;
  int64_t num_params;
} entry_points;

static void *aligned(size_t bytes) {
  /* aligned_alloc wants a multiple of the alignment; never 0 bytes. */
  return aligned_alloc(64, (bytes + 64) / 64 * 64);
}

static float value(size_t i, double scale) {
  return (float)(scale * ((double)((i * 2654435761u) >> 20 & 1023) / 512.0 - 1.0));
}

static int64_t count(const ffn_param_desc *p) {
  return p->rank == 2 ? p->shape[0] * p->shape[1] : p->shape[0];
}

static const float *param(const ffn_kernel_desc *d, float **values,
                          const char *name) {
  for (int64_t i = 0; i < d->num_params; ++i)
    if (strcmp(d->params[i].name, name) == 0)
      return values[i];
  return NULL;
}

static double act(int64_t a, double v) {
  return a == FFN_ACT_RELU ? (v > 0 ? v : 0) : v / (1 + exp(-v));
}

/* y = FFN(x) in double for f32 kernels without norms (api.ffn's). */
static double max_error(const ffn_kernel_desc *d, float **values, int64_t m,
                        const float *x, const float *y) {
  int64_t dm = d->d_model, df = d->d_ff;
  const float *wu = param(d, values, "w_up"), *wg = param(d, values, "w_gate");
  const float *wd = param(d, values, "w_down"), *bu = param(d, values, "b_up");
  const float *bd = param(d, values, "b_down");
  double *h = (double *)malloc(sizeof(double) * (size_t)df), worst = 0;
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t j = 0; j < df; ++j) {
      double u = bu ? bu[j] : 0, g = 0;
      for (int64_t k = 0; k < dm; ++k) {
        u += (double)x[r * dm + k] * wu[k * df + j];
        if (wg)
          g += (double)x[r * dm + k] * wg[k * df + j];
      }
      h[j] = wg ? act(d->activation, g) * u : act(d->activation, u);
    }
    for (int64_t j = 0; j < dm; ++j) {
      double o = bd ? bd[j] : 0;
      for (int64_t k = 0; k < df; ++k)
        o += h[k] * wd[k * dm + j];
      if (d->residual)
        o += x[r * dm + j];
      double e = fabs(y[r * dm + j] - o) / (1 + fabs(o));
      if (e > worst)
        worst = e;
    }
  }
  free(h);
  return worst;
}

static int exercise(ffn_context *ctx, entry_points e, int64_t m) {
  const ffn_kernel_desc *d = e.desc;
  size_t n = (size_t)(m * d->d_model), bytes = n * sizeof(float);
  int same_symbols = d->cpu->run == e.run && d->pack == e.pack &&
                     d->cpu->phase_units == e.units &&
                     d->cpu->phase == e.phase &&
                     d->num_params == e.num_params;
  float **values = (float **)calloc((size_t)d->num_params, sizeof(float *));
  void **packed = (void **)calloc((size_t)d->num_params, sizeof(void *));
  ffn_kernel *k = NULL;
  int ok = ffn_kernel_create(ctx, d, &k) == FFN_OK;
  for (int64_t i = 0; i < d->num_params && ok; ++i) {
    const ffn_param_desc *p = &d->params[i];
    size_t len = (size_t)count(p);
    values[i] = (float *)malloc(len * sizeof(float));
    for (size_t j = 0; j < len; ++j)
      values[i][j] = value(j + 7919 * (size_t)i,
                           p->rank == 2 ? 1 / sqrt((double)p->shape[0]) : 0.1);
    ok = ffn_kernel_set_param(k, p->name, values[i], len * sizeof(float),
                              FFN_LAYOUT_IN_OUT) == FFN_OK;
    /* The direct path packs with the kernel's own pack function. */
    packed[i] = aligned((size_t)p->packed_bytes);
    e.pack(i, values[i], packed[i]);
  }
  float *x = (float *)aligned(bytes), *y_rt = (float *)aligned(bytes);
  float *y_run = (float *)aligned(bytes), *y_phase = (float *)aligned(bytes);
  for (size_t i = 0; i < n; ++i)
    x[i] = value(i + 101, 1.0);
  if (ok)
    ok = ffn_kernel_run(k, m, x, y_rt) == FFN_OK;
  if (!ok)
    printf("runtime: %s\n", ffn_context_last_error(ctx));

  void *ws = d->workspace_per_row ? aligned((size_t)(m * d->workspace_per_row))
                                  : NULL;
  e.run(m, x, (const void *const *)packed, y_run, ws);
  /* Every phase in two halves, as two threads would split it. */
  for (int64_t p = 0; p < d->cpu->num_phases; ++p) {
    int64_t units = e.units(p, m);
    e.phase(p, m, x, (const void *const *)packed, y_phase, ws, 0, units / 2);
    e.phase(p, m, x, (const void *const *)packed, y_phase, ws, units / 2,
            units);
  }
  double err = max_error(d, values, m, x, y_run);
  printf("%s m=%ld: symbols %s, runtime %s, run == runtime %s, "
         "phases == runtime %s, reference %s\n",
         d->name, (long)m, same_symbols ? "match" : "DIFFER",
         ok ? "ok" : "FAILED",
         memcmp(y_run, y_rt, bytes) == 0 ? "bitwise" : "DIFFER",
         memcmp(y_phase, y_rt, bytes) == 0 ? "bitwise" : "DIFFER",
         err < 1e-5 ? "ok" : "MISMATCH");
  ffn_kernel_destroy(k);
  for (int64_t i = 0; i < d->num_params; ++i) {
    free(values[i]);
    free(packed[i]);
  }
  free(values);
  free(packed);
  free(ws);
  free(x);
  free(y_rt);
  free(y_run);
  free(y_phase);
  return ok && same_symbols;
}

int main(void) {
  entry_points small = {&ffn_kernel_small, ffn_small_run, ffn_small_pack,
                        ffn_small_phase_units, ffn_small_phase,
                        ffn_small_num_params};
  entry_points wide = {&ffn_kernel_wide, ffn_wide_run, ffn_wide_pack,
                       ffn_wide_phase_units, ffn_wide_phase,
                       ffn_wide_num_params};
  /* The parameter indices the header names are the descriptor's. */
  printf("indices %s\n",
         strcmp(ffn_kernel_small.params[ffn_small_param_b_up].name, "b_up") ==
                     0 &&
                 strcmp(ffn_kernel_wide.params[ffn_wide_param_w_down].name,
                        "w_down") == 0
             ? "match"
             : "DIFFER");
  ffn_context *ctx = NULL;
  if (ffn_context_create(&ctx) != FFN_OK)
    return 1;
  int ok = 1;
  const int64_t ms[] = {1, 5, 33};
  for (int i = 0; i < 3; ++i) {
    ok &= exercise(ctx, small, ms[i]);
    ok &= exercise(ctx, wide, ms[i]);
  }
  ffn_context_destroy(ctx);
  return ok ? 0 : 1;
}
