/* The safetensors calls of ffn/runtime.h on the files make_safetensors.py
 * writes: the tensors a file lists, each misuse an error naming what is
 * wrong, and a failed ffn_kernel_set_params_safetensors leaving the kernel
 * as it was (the output bits before and after are equal). */
#include "kernels.h"

#include <ffn/runtime.h>

#include <stdio.h>
#include <string.h>

enum { D = 24, M = 3 };

static ffn_context *ctx;

static void report(const char *what, ffn_status s) {
  printf("%s: %s%s%s\n", what, ffn_status_string(s), s ? " -- " : "",
         s ? ffn_context_last_error(ctx) : "");
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  char path[4096];
  ffn_context_create(&ctx);
  ffn_safetensors *file = NULL;
  printf("no context: %s\n",
         ffn_status_string(ffn_safetensors_open(NULL, "x", &file)));
  report("null path", ffn_safetensors_open(ctx, NULL, &file));
  snprintf(path, sizeof path, "%s/missing.safetensors", argv[1]);
  ffn_status s = ffn_safetensors_open(ctx, path, &file);
  printf("missing: %s, handle %s\n", ffn_status_string(s),
         file ? "set" : "null");

  snprintf(path, sizeof path, "%s/mlp-f32.safetensors", argv[1]);
  report("open", ffn_safetensors_open(ctx, path, &file));
  printf("tensors: %lld\n", (long long)ffn_safetensors_count(file));
  for (int64_t i = 0; i < ffn_safetensors_count(file); ++i) {
    ffn_tensor_info t;
    ffn_safetensors_tensor_at(file, i, &t);
    printf("  %s %s [", t.name, t.dtype);
    for (int64_t r = 0; r < t.rank; ++r)
      printf("%s%lld", r ? ", " : "", (long long)t.shape[r]);
    printf("] %zu bytes\n", t.bytes);
  }
  ffn_tensor_info info;
  report("index 4", ffn_safetensors_tensor_at(file, 4, &info));
  report("index -1", ffn_safetensors_tensor_at(file, -1, &info));
  report("by name", ffn_safetensors_tensor(
                        file, "model.layers.0.mlp.down_proj.weight", &info));
  report("unknown name", ffn_safetensors_tensor(file, "lm_head.weight", &info));
  report("null name", ffn_safetensors_tensor(file, NULL, &info));
  printf("null file: %s, count %lld\n",
         ffn_status_string(ffn_safetensors_tensor(NULL, "x", &info)),
         (long long)ffn_safetensors_count(NULL));

  ffn_kernel *k = NULL;
  report("kernel", ffn_kernel_create(ctx, &ffn_kernel_mlp_f32, &k));
  const char *names[] = {"model.layers.0.mlp.up_proj.weight",
                         "model.layers.0.mlp.gate_proj.weight",
                         "model.layers.0.mlp.down_proj.weight",
                         "model.layers.0.post_attention_layernorm.weight"};
  report("null kernel", ffn_kernel_set_params_safetensors(NULL, file, names,
                                                          FFN_LAYOUT_OUT_IN));
  report("null file",
         ffn_kernel_set_params_safetensors(k, NULL, names, FFN_LAYOUT_OUT_IN));
  report("bad layout", ffn_kernel_set_params_safetensors(k, file, names,
                                                         (ffn_weight_layout)7));
  report("set",
         ffn_kernel_set_params_safetensors(k, file, names, FFN_LAYOUT_OUT_IN));
  float x[M * D], before[M * D], after[M * D];
  for (int i = 0; i < M * D; ++i)
    x[i] = (float)((i * 11 % 29) - 14) / 16.0f;
  report("run", ffn_kernel_run(k, M, x, before));
  /* Wrong layout: the first tensor does not fit, nothing is set. */
  report("in-out layout",
         ffn_kernel_set_params_safetensors(k, file, names, FFN_LAYOUT_IN_OUT));
  /* The last tensor is missing: the three before it are not set either. */
  const char *partial[] = {names[0], names[1], names[2], "no.such.tensor"};
  report("missing last", ffn_kernel_set_params_safetensors(k, file, partial,
                                                           FFN_LAYOUT_OUT_IN));
  report("run again", ffn_kernel_run(k, M, x, after));
  printf("unchanged: %s\n",
         memcmp(before, after, sizeof before) == 0 ? "yes" : "no");

  ffn_kernel_destroy(k);
  /* The handle keeps its context alive. */
  ffn_context_destroy(ctx);
  printf("after the context: %lld tensors\n",
         (long long)ffn_safetensors_count(file));
  ffn_safetensors_close(file);
  ffn_safetensors_close(NULL);
  return 0;
}
