// Two kernels of the same shape, one from each back end: their packed
// buffers are laid out by different code, so sharing parameters between them
// must be refused (the pack signatures differ by the Halide layout), while
// two Halide kernels of that shape share.
#include "ffn/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void setAll(ffn_kernel *k) {
  const ffn_kernel_desc *d = ffn_kernel_descriptor(k);
  for (int64_t i = 0; i < d->num_params; ++i) {
    const ffn_param_desc *p = &d->params[i];
    size_t n = 1;
    for (int64_t r = 0; r < p->rank; ++r)
      n *= (size_t)p->shape[r];
    float *v = calloc(n, sizeof(float));
    for (size_t j = 0; j < n; ++j)
      v[j] = (float)((j % 7) + 1) / 8.0f;
    ffn_status s = ffn_kernel_set_param(k, p->name, v, n * sizeof(float),
                                        FFN_LAYOUT_IN_OUT);
    free(v);
    if (s != FFN_OK) {
      printf("set %s: %s\n", p->name, ffn_status_string(s));
      exit(1);
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s ffnc.so halide.so name\n", argv[0]);
    return 2;
  }
  ffn_context *ctx;
  ffn_kernel *native, *halide, *halide2;
  if (ffn_context_create(&ctx) != FFN_OK ||
      ffn_kernel_load_library(ctx, argv[1], argv[3], &native) != FFN_OK ||
      ffn_kernel_load_library(ctx, argv[2], argv[3], &halide) != FFN_OK ||
      ffn_kernel_load_library(ctx, argv[2], argv[3], &halide2) != FFN_OK) {
    printf("load: %s\n", ffn_context_last_error(ctx));
    return 1;
  }
  setAll(native);
  setAll(halide);
  ffn_status s = ffn_kernel_share_params(halide2, native);
  printf("halide <- ffnc: %s -- %s\n", ffn_status_string(s),
         s == FFN_OK ? "" : ffn_context_last_error(ctx));
  s = ffn_kernel_share_params(halide2, halide);
  printf("halide <- halide: %s\n", ffn_status_string(s));
  printf("same buffer: %s\n", ffn_kernel_packed_param(halide2, "w_up") ==
                                      ffn_kernel_packed_param(halide, "w_up")
                                  ? "yes"
                                  : "no");
  ffn_kernel_destroy(native);
  ffn_kernel_destroy(halide);
  ffn_kernel_destroy(halide2);
  ffn_context_destroy(ctx);
  return 0;
}
