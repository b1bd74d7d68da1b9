/* ffn_kernel_share_params: a kernel bound to another's packed parameters
 * reads the very same buffers (one copy), computes what it computes with its
 * own copy of the same values, keeps them when the owner is given new ones
 * or is destroyed, and every misuse is an error naming what is wrong. */
#include "kernels.h"

#include <ffn/runtime.h>

#include <stdio.h>
#include <string.h>

enum { D = 24, F = 40, M = 5 };

static ffn_context *ctx;

static void report(const char *what, ffn_status s) {
  printf("%s: %s%s%s\n", what, ffn_status_string(s), s ? " -- " : "",
         s ? ffn_context_last_error(ctx) : "");
}

static float wu[D * F], wg[D * F], wd[F * D], bu[F], bg[F], bd[D];

static void fill(float scale) {
  for (int i = 0; i < D * F; ++i) {
    wu[i] = scale * (float)((i * 7 % 23) - 11) / 64.0f;
    wg[i] = scale * (float)((i * 5 % 19) - 9) / 64.0f;
    wd[i] = scale * (float)((i * 3 % 17) - 8) / 64.0f;
  }
  for (int i = 0; i < F; ++i) {
    bu[i] = (float)(i % 5) / 16.0f;
    bg[i] = (float)(i % 3) / 16.0f;
  }
  for (int i = 0; i < D; ++i)
    bd[i] = (float)(i % 7) / 16.0f;
}

static ffn_status setAll(ffn_kernel *k) {
  struct {
    const char *name;
    const float *data;
    size_t n;
  } p[] = {{"w_up", wu, D * F}, {"w_gate", wg, D * F}, {"w_down", wd, F * D},
           {"b_up", bu, F},     {"b_gate", bg, F},     {"b_down", bd, D}};
  for (size_t i = 0; i < sizeof p / sizeof p[0]; ++i) {
    ffn_status s = ffn_kernel_set_param(
        k, p[i].name, p[i].data, p[i].n * sizeof(float), FFN_LAYOUT_IN_OUT);
    if (s)
      return s;
  }
  return FFN_OK;
}

static int sameBuffers(ffn_kernel *x, ffn_kernel *y) {
  const ffn_kernel_desc *d = ffn_kernel_descriptor(x);
  for (int64_t i = 0; i < d->num_params; ++i) {
    const void *p = ffn_kernel_packed_param(x, d->params[i].name);
    if (!p || p != ffn_kernel_packed_param(y, d->params[i].name))
      return 0;
  }
  return 1;
}

int main(void) {
  ffn_context_create(&ctx);
  ffn_kernel *a, *b, *own, *c, *unset;
  ffn_kernel_create(ctx, &ffn_kernel_a, &a);
  ffn_kernel_create(ctx, &ffn_kernel_b, &b);
  ffn_kernel_create(ctx, &ffn_kernel_b, &own);
  ffn_kernel_create(ctx, &ffn_kernel_c, &c);
  ffn_kernel_create(ctx, &ffn_kernel_a, &unset);

  /* The signatures agree where the packing does. */
  printf("a and b pack alike: %s\n",
         strcmp(ffn_kernel_a.pack_signature, ffn_kernel_b.pack_signature) == 0
             ? "yes"
             : "no");

  fill(1.0f);
  report("set a", setAll(a));
  report("set own", setAll(own));
  report("share b <- a", ffn_kernel_share_params(b, a));
  printf("b reads a's buffers: %s\n", sameBuffers(b, a) ? "yes" : "no");
  printf("own reads its own: %s\n", sameBuffers(own, a) ? "no" : "yes");

  float x[M * D], yb[M * D], yo[M * D], yb2[M * D];
  for (int i = 0; i < M * D; ++i)
    x[i] = (float)((i * 13 % 29) - 14) / 16.0f;
  report("run b", ffn_kernel_run(b, M, x, yb));
  report("run own", ffn_kernel_run(own, M, x, yo));
  printf("b == own, bit for bit: %s\n",
         memcmp(yb, yo, sizeof yb) == 0 ? "yes" : "no");

  /* New values for the owner: b keeps what it was bound to. */
  fill(0.5f);
  report("set a again", setAll(a));
  printf("b still reads the old buffers: %s\n",
         sameBuffers(b, a) ? "no" : "yes");
  ffn_kernel_destroy(a);
  report("run b after a is gone", ffn_kernel_run(b, M, x, yb2));
  printf("b unchanged: %s\n", memcmp(yb, yb2, sizeof yb) == 0 ? "yes" : "no");

  /* Misuse. */
  report("null kernel", ffn_kernel_share_params(NULL, own));
  report("null owner", ffn_kernel_share_params(b, NULL));
  report("itself", ffn_kernel_share_params(b, b));
  report("other shapes", ffn_kernel_share_params(c, own));
  report("owner unset", ffn_kernel_share_params(b, unset));
  printf("unknown name: %s\n",
         ffn_kernel_packed_param(b, "w_nope") ? "a pointer" : "NULL");
  printf("unset parameter: %s\n",
         ffn_kernel_packed_param(unset, "w_up") ? "a pointer" : "NULL");

  ffn_kernel_destroy(b);
  ffn_kernel_destroy(own);
  ffn_kernel_destroy(c);
  ffn_kernel_destroy(unset);
  ffn_context_destroy(ctx);
  return 0;
}
