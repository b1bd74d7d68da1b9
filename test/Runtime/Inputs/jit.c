/* ffn_kernel_compile (ffn/jit.h): a spec compiled at run time runs and
 * matches an f64 evaluation of the same FFN; the second compile of the same
 * spec is a cache hit; a damaged cache entry (library or checksum) is
 * rebuilt; every mistake is a status and a located message.
 * Usage: jit <cache dir>            the whole sequence
 *        jit <cache dir> race       compile and check once (run several at
 *                                   once on an empty cache) */
#include <ffn/jit.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { D = 8, F = 16, M = 3 };

static const char *kSpec =
    "// a plain ReLU FFN with biases and a residual\n"
    "ffn tiny { d_model = 8; d_ff = 2 * d_model; activation = relu;\n"
    "           residual = true }\n";

static ffn_context *ctx;
static float wu[D * F], wd[F * D], bu[F], bd[D], x[M * D];

static void report(const char *what, ffn_status s) {
  printf("%s: %s%s%s\n", what, ffn_status_string(s), s ? " -- " : "",
         s ? ffn_context_last_error(ctx) : "");
}

static void stats(const char *when) {
  int64_t hits, builds;
  ffn_jit_cache_stats(&hits, &builds);
  printf("%s: hits %lld, builds %lld\n", when, (long long)hits,
         (long long)builds);
}

/* Compiles, sets the parameters, runs; 1 if the output is within 1e-5 of
 * the f64 evaluation (relu(x W_up + b_up) W_down + b_down + x). */
static int compileAndCheck(const char *options) {
  ffn_kernel *k = NULL;
  ffn_status s = ffn_kernel_compile(ctx, kSpec, "tiny", options, &k);
  if (s != FFN_OK) {
    report("compile", s);
    return 0;
  }
  ffn_kernel_set_param(k, "w_up", wu, sizeof wu, FFN_LAYOUT_IN_OUT);
  ffn_kernel_set_param(k, "w_down", wd, sizeof wd, FFN_LAYOUT_IN_OUT);
  ffn_kernel_set_param(k, "b_up", bu, sizeof bu, FFN_LAYOUT_IN_OUT);
  ffn_kernel_set_param(k, "b_down", bd, sizeof bd, FFN_LAYOUT_IN_OUT);
  float y[M * D];
  s = ffn_kernel_run(k, M, x, y);
  ffn_kernel_destroy(k);
  if (s != FFN_OK) {
    report("run", s);
    return 0;
  }
  int ok = 1;
  for (int r = 0; r < M; ++r) {
    double h[F];
    for (int j = 0; j < F; ++j) {
      double a = bu[j];
      for (int i = 0; i < D; ++i)
        a += (double)x[r * D + i] * wu[i * F + j];
      h[j] = a > 0 ? a : 0;
    }
    for (int c = 0; c < D; ++c) {
      double o = bd[c] + x[r * D + c];
      for (int j = 0; j < F; ++j)
        o += h[j] * wd[j * D + c];
      if (fabs(o - y[r * D + c]) > 1e-5 * (1 + fabs(o)))
        ok = 0;
    }
  }
  return ok;
}

/* Overwrites the cache's one file ending in `suffix` with garbage. */
static void damage(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t n = strlen(e->d_name), m = strlen(suffix);
    if (n > m && strcmp(e->d_name + n - m, suffix) == 0) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      FILE *f = fopen(path, "wb");
      fputs("not what was written", f);
      fclose(f);
    }
  }
  if (d)
    closedir(d);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  for (int i = 0; i < D * F; ++i) {
    wu[i] = (float)((i * 7 % 23) - 11) / 32.0f;
    wd[i] = (float)((i * 5 % 19) - 9) / 32.0f;
  }
  for (int i = 0; i < F; ++i)
    bu[i] = (float)(i % 5 - 2) / 8.0f;
  for (int i = 0; i < D; ++i)
    bd[i] = (float)(i % 3) / 8.0f;
  for (int i = 0; i < M * D; ++i)
    x[i] = (float)((i * 11 % 29) - 14) / 16.0f;
  ffn_context_create(&ctx);
  char options[4200];
  snprintf(options, sizeof options, "--cache-dir=%s --kernel-threads=2",
           argv[1]);

  if (argc > 2) {
    printf("race: %s\n", compileAndCheck(options) ? "matches" : "FAILED");
    ffn_context_destroy(ctx);
    return 0;
  }
  printf("first: %s\n", compileAndCheck(options) ? "matches" : "FAILED");
  stats("after the first");
  printf("second: %s\n", compileAndCheck(options) ? "matches" : "FAILED");
  stats("after the second");
  damage(argv[1], ".so");
  printf("damaged library: %s\n",
         compileAndCheck(options) ? "matches" : "FAILED");
  stats("after a damaged library");
  damage(argv[1], ".sum");
  printf("damaged checksum: %s\n",
         compileAndCheck(options) ? "matches" : "FAILED");
  stats("after a damaged checksum");
  char other[4300];
  snprintf(other, sizeof other, "%s --batch-invariant", options);
  printf("other options: %s\n", compileAndCheck(other) ? "matches" : "FAILED");
  stats("after other options");

  ffn_kernel *k = NULL;
  report("bad spec", ffn_kernel_compile(ctx,
                                        "ffn bad {\n  d_model = 16; d_ff = 32\n"
                                        "  activation = gleu\n}\n",
                                        "bad", options, &k));
  report("unknown block", ffn_kernel_compile(ctx, kSpec, "tiny2", options, &k));
  report("unknown option",
         ffn_kernel_compile(ctx, kSpec, "tiny", "--threads=2", &k));
  report("bad threads",
         ffn_kernel_compile(ctx, kSpec, "tiny", "--kernel-threads=many", &k));
  report("bad strategy",
         ffn_kernel_compile(ctx, kSpec, "tiny", "--strategy=mr=0", &k));
  report("gpu target",
         ffn_kernel_compile(ctx, kSpec, "tiny", "--target=nvptx-sm90", &k));
  report("null spec", ffn_kernel_compile(ctx, NULL, "tiny", options, &k));
  printf("null context: %s\n",
         ffn_status_string(ffn_kernel_compile(NULL, kSpec, "tiny", "", &k)));
  printf("kernel after errors: %s\n", k ? "set" : "null");
  ffn_context_destroy(ctx);
  return 0;
}
