/* Kernel libraries and descriptors that are not what they should be: each
 * is refused with a status and a message, never a crash.
 *
 *   hostile_libraries <clash.so> <truncated.so> <text file> <directory>
 *
 * The program links api.ffn's kernels (kernels.h), so it defines
 * ffn_small_run itself; clash.so holds another kernel named 'small'. */
#include "kernels.h"

#include <ffn/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static ffn_context *ctx;

static void report(const char *what, ffn_status s) {
  printf("%s: %s: %s\n", what, ffn_status_string(s),
         s == FFN_OK ? "" : ffn_context_last_error(ctx));
}

static void try_desc(const char *what, const ffn_kernel_desc *d) {
  ffn_kernel *k = NULL;
  ffn_status s = ffn_kernel_create(ctx, d, &k);
  report(what, s);
  ffn_kernel_destroy(k);
}

int main(int argc, char **argv) {
  if (argc != 5)
    return 2;
  ffn_context_create(&ctx);
  ffn_kernel *k = NULL;
  report("empty path", ffn_kernel_load_library(ctx, "", "small", &k));
  report("empty name", ffn_kernel_load_library(ctx, argv[1], "", &k));
  report("truncated", ffn_kernel_load_library(ctx, argv[2], "small", &k));
  report("text file", ffn_kernel_load_library(ctx, argv[3], "small", &k));
  report("directory", ffn_kernel_load_library(ctx, argv[4], "small", &k));

  /* Corrupt descriptors: copies of a good one with one field broken. */
  ffn_kernel_desc d = ffn_kernel_small;
  d.name = NULL;
  try_desc("null name", &d);
  d = ffn_kernel_small;
  d.d_model = (int64_t)1 << 40;
  try_desc("absurd d_model", &d);
  d = ffn_kernel_small;
  d.workspace_per_row = -5;
  try_desc("negative workspace", &d);
  static ffn_param_desc params[4]; /* in the image, as a real table is */
  memcpy(params, ffn_kernel_small.params, sizeof params);
  params[1].packed_bytes = (int64_t)1 << 62;
  d = ffn_kernel_small;
  d.params = params;
  try_desc("absurd packed size", &d);
  memcpy(params, ffn_kernel_small.params, sizeof params);
  params[0].shape[1] = -16;
  try_desc("negative shape", &d);
  memcpy(params, ffn_kernel_small.params, sizeof params);
  params[2].name = NULL;
  try_desc("null parameter name", &d);
  static ffn_cpu_code code;
  code = *ffn_kernel_small.cpu;
  d = ffn_kernel_small;
  d.cpu = &code;
  code.run = (ffn_cpu_entry)(void *)0x1234;
  try_desc("wild entry point", &d);
  d = ffn_kernel_small;
  d.cpu = (const ffn_cpu_code *)(void *)0x10;
  try_desc("wild code entry", &d);
  d = ffn_kernel_small;
  d.params = (const ffn_param_desc *)(void *)0x10;
  try_desc("wild parameter table", &d);

  /* A device kernel's entry and launch plan, checked before any driver is
   * opened (so without a GPU too). */
  static const unsigned char image[64] = {0x7f, 'E', 'L', 'F'};
  static const ffn_device_arg args[1] = {{FFN_DEVICE_ARG_M, 0}};
  static ffn_device_launch launches[2];
  static ffn_cuda_code cuda;
  for (int i = 0; i < 2; ++i) {
    ffn_device_launch l = {"k", 1, 16,   16, 1, 1, 128, 0,
                           0,   1, args, 0,  0, 1, 0,   0};
    launches[i] = l;
  }
  launches[1].min_m = 32;
  launches[1].max_m = INT64_MAX;
  cuda.image = image;
  cuda.image_size = sizeof image;
  cuda.num_launches = 2;
  cuda.launches = launches;
  d = ffn_kernel_small;
  d.device = FFN_DEVICE_CUDA;
  d.cpu = NULL;
  d.cuda = &cuda;
  try_desc("plan with a gap", &d);
  launches[1].min_m = 17;
  launches[1].grid_y = 0;
  try_desc("bad launch geometry", &d);
  launches[1].grid_y = 1;
  launches[1].max_blocks = -1;
  try_desc("negative persistent block count", &d);
  launches[1].max_blocks = 0;
  launches[1].workspace_per_row = ffn_kernel_small.workspace_per_row + 16;
  try_desc("launch workspace past the kernel's", &d);
  launches[1].workspace_per_row = 0;
  /* Tensor maps: an argument naming a map the launch lacks, a wild map
   * table, a map whose box or stride TMA cannot take. */
  static const ffn_device_arg mapArgs[2] = {{FFN_DEVICE_ARG_TENSOR_MAP, 1},
                                            {FFN_DEVICE_ARG_M, 0}};
  static ffn_tensor_map maps[1] = {
      {FFN_DEVICE_ARG_INPUT, 0, 2, {16, 0, 1}, {32, 0}, {16, 128, 1}, 128}};
  launches[1].args = mapArgs;
  launches[1].num_args = 2;
  launches[1].maps = maps;
  launches[1].num_maps = 1;
  try_desc("tensor map past the table", &d);
  static const ffn_device_arg mapArg[2] = {{FFN_DEVICE_ARG_TENSOR_MAP, 0},
                                           {FFN_DEVICE_ARG_M, 0}};
  launches[1].args = mapArg;
  launches[1].maps = (const ffn_tensor_map *)(void *)0x10;
  try_desc("wild tensor-map table", &d);
  launches[1].maps = maps;
  maps[0].box[1] = 512;
  try_desc("tensor map box past 256", &d);
  maps[0].box[1] = 128;
  maps[0].strides[0] = 24;
  try_desc("tensor map stride not 16-byte", &d);
  /* Tile counters come in one region per launch: index 0 only. */
  static const ffn_device_arg counterArgs[2] = {{FFN_DEVICE_ARG_COUNTERS, 1},
                                                {FFN_DEVICE_ARG_M, 0}};
  launches[1].args = counterArgs;
  launches[1].maps = NULL;
  launches[1].num_maps = 0;
  try_desc("tile counters with an index", &d);
  launches[1].args = args;
  launches[1].num_args = 1;
  cuda.launches = (const ffn_device_launch *)(void *)0x10;
  try_desc("wild launch plan", &d);

  /* A library whose kernel has the same name as one linked into this
   * program: the runtime runs the library's (d_model 16), not ours (8). */
  report("clash", ffn_kernel_load_library(ctx, argv[1], "small", &k));
  const ffn_kernel_desc *cd = ffn_kernel_descriptor(k);
  printf("library kernel d_model %ld, ours %ld, entry %s\n", (long)cd->d_model,
         (long)ffn_kernel_small.d_model,
         cd->cpu->run == ffn_kernel_small.cpu->run ? "SHARED" : "its own");
  float w1[16 * 32], w2[32 * 16], x[2 * 16], y[2 * 16];
  for (int i = 0; i < 16 * 32; ++i)
    w1[i] = w2[i] = (float)((i * 7 % 13) - 6) / 32.0f;
  for (int i = 0; i < 32; ++i)
    x[i] = (float)((i * 5 % 11) - 5) / 4.0f;
  ffn_kernel_set_param(k, "w_up", w1, sizeof w1, FFN_LAYOUT_IN_OUT);
  ffn_kernel_set_param(k, "w_down", w2, sizeof w2, FFN_LAYOUT_IN_OUT);
  report("clash run", ffn_kernel_run(k, 2, x, y));
  /* Row 1, column 3 by hand: relu(x W1) W2. */
  double out = 0;
  for (int j = 0; j < 32; ++j) {
    double h = 0;
    for (int i = 0; i < 16; ++i)
      h += (double)x[16 + i] * w1[i * 32 + j];
    out += (h > 0 ? h : 0) * w2[j * 16 + 3];
  }
  printf("clash result %s\n",
         y[16 + 3] - out < 1e-4 && out - y[16 + 3] < 1e-4 ? "matches" : "WRONG");
  ffn_kernel_destroy(k);
  ffn_context_destroy(ctx);
  printf("done\n");
  return 0;
}
