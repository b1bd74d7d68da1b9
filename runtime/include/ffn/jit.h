/*===- ffn/jit.h - compile a spec into a kernel at run time ---------------===*\
 *
 * libffnc_jit.so: ffnc's compiler as a library, for applications that build
 * their FFN kernels from a spec at run time instead of linking ones ffnc
 * made ahead of time (link with -lffnc_jit -lffn_runtime).
 *
 *   ffn_kernel *k;
 *   ffn_kernel_compile(ctx, "ffn mlp { d_model = 4096; d_ff = 11008; "
 *                           "gate = swiglu; bias = false; dtype = bf16 }",
 *                      "mlp", "--kernel-threads=8", &k);
 *   ffn_kernel_set_param(k, "w_up", ...);  ffn_kernel_run(k, m, x, y);
 *
\*===----------------------------------------------------------------------===*/

#ifndef FFN_JIT_H
#define FFN_JIT_H

#include <ffn/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Compiles the ffn block `name` of `spec` (text of the .ffn language) for
 * this machine and loads it as a kernel of `ctx`, as
 * ffn_kernel_load_library would load it from a library `ffnc --emit=so`
 * built. `options` (NULL or ""): ffnc's own flags, separated by spaces:
 * --target=host|x86-64-avx2|x86-64-avx512|x86-64-avx512-bf16 (default
 * host), --strategy=..., --kernel-threads=N (default: this machine's
 * cores), --batch-invariant, --cache-dir=DIR.
 *
 * The compiled library is cached on disk, keyed by the spec text, the
 * block, the options, the resolved target and ffnc's version and kernel
 * ABI: in --cache-dir, else $FFNC_CACHE_DIR, else $XDG_CACHE_HOME/ffnc,
 * else $HOME/.cache/ffnc (created if missing). An entry is written
 * atomically (a complete file or none) with a checksum that is verified
 * before every use; a corrupt or unloadable entry is rebuilt. Processes and
 * threads that compile the same spec at once each get a valid kernel.
 *
 * A mistake in the spec is FFN_ERROR_INVALID_ARGUMENT with the located
 * diagnostics ffnc prints ("<spec>:3:18: error: ...", the source line and
 * a caret) as the context's last error; so is a mistake in `options`, an
 * unknown block `name` (FFN_ERROR_NOT_FOUND), or a target this CPU cannot
 * run (FFN_ERROR_UNSUPPORTED). */
ffn_status ffn_kernel_compile(ffn_context *ctx, const char *spec,
                              const char *name, const char *options,
                              ffn_kernel **out);

/* This process's cache lookups so far: entries used as they were, and
 * libraries compiled (missing or corrupt entries). Either may be NULL. */
void ffn_jit_cache_stats(int64_t *hits, int64_t *builds);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FFN_JIT_H */
