/*===- ffn/runtime.h - load and run ffnc kernels (plain C API) ------------===*\
 *
 *   ffn_context *ctx;             ffn_context_create(&ctx);
 *   ffn_kernel *k;                ffn_kernel_load_library(ctx, "libffn.so",
 *                                                         "bert_base", &k);
 *   ffn_kernel_set_param(k, "w_up", w1, bytes, FFN_LAYOUT_OUT_IN);  ...
 *   ffn_kernel_run(k, m, x, y);
 *   ffn_kernel_destroy(k);        ffn_context_destroy(ctx);
 *
 * Every call validates its arguments and returns a status; on failure
 * ffn_context_last_error() says what was wrong. No call crashes on bad
 * arguments (null pointers, m < 1, wrong sizes, ABI or dtype mismatch, a
 * truncated library or a corrupt descriptor).
 *
 * Threads. Every call may be made from any thread, concurrently:
 *  - Runs are reentrant: any number of threads may run the same kernel, or
 *    kernels of one context, at once. Each run has its own scratch; results
 *    are bit-for-bit those of serial runs. One run at a time uses the
 *    context's worker pool; a run that finds it busy runs on its calling
 *    thread alone (a server's request threads are its parallelism).
 *  - ffn_kernel_set_param may be called while runs are in flight: it packs
 *    the new values aside and swaps them in once the runs in flight have
 *    finished (it waits for them); every run sees either the old or the new
 *    parameter, never a mix.
 *  - ffn_context_set_threads waits for the run using the pool, if any.
 *  - A kernel must not be destroyed while one of its runs is in flight.
 *  - ffn_context_destroy may be called while kernels of the context live:
 *    the context is then freed when its last kernel is destroyed, and those
 *    kernels stay usable until then.
 *  - ffn_context_last_error is per calling thread.
 *
 * Room for the GPU target: kernels carry a device kind and a module image
 * (ffn/kernel_abi.h). Device kernels will get their own calls next to these
 * (device buffers, a run on a stream, a CUDA driver loaded with dlopen); the
 * calls below stay the CPU path, and today a device kernel is refused with
 * FFN_ERROR_UNSUPPORTED.
\*===----------------------------------------------------------------------===*/

#ifndef FFN_RUNTIME_H
#define FFN_RUNTIME_H

#include <ffn/kernel_abi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FFN_RUNTIME_VERSION 1

typedef enum ffn_status {
  FFN_OK = 0,
  FFN_ERROR_INVALID_ARGUMENT = 1, /* null pointer, m < 1, wrong size, ... */
  FFN_ERROR_ABI_MISMATCH = 2,     /* kernel built for another ABI version */
  FFN_ERROR_NOT_FOUND = 3,        /* no such file, kernel or parameter */
  FFN_ERROR_LOAD_FAILED = 4,      /* dlopen failed */
  FFN_ERROR_OUT_OF_MEMORY = 5,
  FFN_ERROR_UNSUPPORTED = 6, /* e.g. a device kernel, or an ISA this
                                CPU lacks */
  FFN_ERROR_NOT_READY = 7,   /* run before every parameter was set */
  FFN_ERROR_DEVICE = 8,      /* the GPU or its driver failed or is absent */
} ffn_status;

/* Weight matrix layouts accepted by ffn_kernel_set_param. */
typedef enum ffn_weight_layout {
  FFN_LAYOUT_IN_OUT = 0, /* [in, out] row-major: x @ W */
  FFN_LAYOUT_OUT_IN = 1, /* [out, in] row-major: PyTorch nn.Linear.weight */
} ffn_weight_layout;

typedef struct ffn_context ffn_context;
typedef struct ffn_kernel ffn_kernel;

/* A short name for a status ("FFN_ERROR_INVALID_ARGUMENT"). */
const char *ffn_status_string(ffn_status status);

ffn_status ffn_context_create(ffn_context **out);
/* Releases the application's reference to the context: it is freed now,
 * or, while kernels of it live, when the last of them is destroyed. NULL is
 * ignored. */
void ffn_context_destroy(ffn_context *ctx);
/* Threads used by kernel runs of this context: 0 (the default) means one
 * per core. The pool of workers is started here and kept between runs
 * (FFN_ERROR_OUT_OF_MEMORY, count unchanged, if the system cannot start
 * them). Results are the same for any count: each output is computed by
 * one thread. */
ffn_status ffn_context_set_threads(ffn_context *ctx, int threads);
int ffn_context_threads(ffn_context *ctx);

/* The message of the last failed call this thread made on this context
 * (or on one of its kernels); "" if none. Valid until this thread's next
 * failing call on the context. */
const char *ffn_context_last_error(const ffn_context *ctx);
/* For libraries built on the runtime (ffnc's JIT, ffn/jit.h; language
 * bindings): records `message` as the calling thread's last error on `ctx`
 * and returns `status`. */
ffn_status ffn_context_set_error(ffn_context *ctx, ffn_status status,
                                 const char *message);

/* A kernel linked into the application: pass &ffn_kernel_<name> from the
 * header ffnc generated. */
ffn_status ffn_kernel_create(ffn_context *ctx, const ffn_kernel_desc *desc,
                             ffn_kernel **out);
/* A kernel in a shared library built by `ffnc --emit=so`. The library stays
 * loaded until the kernel is destroyed. */
ffn_status ffn_kernel_load_library(ffn_context *ctx, const char *path,
                                   const char *name, ffn_kernel **out);
void ffn_kernel_destroy(ffn_kernel *kernel);

/* The kernel's descriptor (ffn/kernel_abi.h): the model, the parameter
 * table (names, shapes, `experts` of stacked parameters) and, for a mixture
 * of experts (kind FFN_KIND_MOE), experts, shared_experts, top_k, router
 * and router_normalize; for a grouped FFN (kind FFN_KIND_GROUPED), groups. */
const ffn_kernel_desc *ffn_kernel_descriptor(const ffn_kernel *kernel);

/* Copies one parameter into the kernel. `bytes` must be exactly the
 * parameter's element count times the dtype's size. `layout` applies to
 * matrices only (vectors ignore it).
 *
 * Mixtures of experts. A stacked parameter (desc->params[i].experts = n > 0:
 * the expert FFNs' w_up, w_gate, w_down and biases) is set in one call with
 * all n experts' tensors back to back: [n, in, out] with FFN_LAYOUT_IN_OUT,
 * [n, out, in] with FFN_LAYOUT_OUT_IN (each expert's [out, in] matrix as
 * PyTorch stores it, e.g. torch.stack of the experts' nn.Linear weights),
 * [n, size] for biases; `bytes` is n times one expert's. n counts the
 * routed experts first, then the shared ones: expert e < desc->experts is
 * routed expert e, expert desc->experts + s is shared expert s. The router
 * "w_router" is one plain [d_model, experts] matrix (its [experts, d_model]
 * transpose with FFN_LAYOUT_OUT_IN).
 *
 * Grouped FFNs. Their stacked parameters (experts = groups = G) are set the
 * same way, block g's tensor g: w_up [G, d_model / G, d_ff / G], w_down
 * [G, d_ff / G, d_model / G], biases [G, size]; norm_scale and norm_shift
 * are one [d_model] vector each. */
ffn_status ffn_kernel_set_param(ffn_kernel *kernel, const char *name,
                                const void *data, size_t bytes,
                                ffn_weight_layout layout);

/* Sets a quantized weight matrix (a kernel built with `weights = int8(...)`
 * or `int4(...)`) from blocks quantized elsewhere, instead of handing the
 * unquantized matrix to ffn_kernel_set_param, which quantizes it: `q` one
 * byte per weight, `q_bytes` = in * out (int8: any value; int4: [-8, 7];
 * int4 with zero points: [0, 15]); `scales` one per quant_group input rows
 * of each output column, in the dtype (`scale_bytes` = ceil(in / group) *
 * out * dtype size); `zero_points` (int4 with zero points only, else NULL)
 * one byte each in [0, 15], the scales' shape. With FFN_LAYOUT_IN_OUT the
 * blocks are [in, out], [groups, out], [groups, out]; with
 * FFN_LAYOUT_OUT_IN, as PyTorch stores weights, [out, in], [out, groups],
 * [out, groups]. The kernel then multiplies by s q, or s (q - z), exactly.
 * A stacked parameter (a mixture's experts, a grouped FFN's blocks) takes
 * every stacked tensor's q, scales and zero points back to back, each in
 * that layout ([n, in, out], [n, groups, out], ...; every byte count n
 * times one tensor's); a mixture's router w_router is not quantized (set
 * it with ffn_kernel_set_param).
 * A value out of range (named by its index, and its expert's or block's), a
 * wrong size or a parameter that is not a quantized matrix is an error
 * naming it; the kernel is left unchanged. */
ffn_status ffn_kernel_set_quantized_param(
    ffn_kernel *kernel, const char *name, const void *q, size_t q_bytes,
    const void *scales, size_t scale_bytes, const void *zero_points,
    size_t zero_point_bytes, ffn_weight_layout layout);

/* Safetensors files (Hugging Face's weight format: an 8-byte header length,
 * a JSON header of each tensor's dtype, shape and byte range, the data).
 * ffn_safetensors_open maps the file read-only and checks every header
 * entry against the file (a truncated, oversized or inconsistent file is
 * FFN_ERROR_INVALID_ARGUMENT naming what is wrong; a missing one
 * FFN_ERROR_NOT_FOUND); the handle keeps the context alive until closed. */
typedef struct ffn_safetensors ffn_safetensors;
typedef struct ffn_tensor_info {
  const char *name;
  const char *dtype; /* as the file says: "F32", "BF16", "F16", "I8", ... */
  int64_t rank;      /* at most 8 */
  int64_t shape[8];
  const void *data; /* in the mapping, unaligned; valid until closed */
  size_t bytes;
} ffn_tensor_info;
ffn_status ffn_safetensors_open(ffn_context *ctx, const char *path,
                                ffn_safetensors **out);
void ffn_safetensors_close(ffn_safetensors *file); /* NULL is ignored */
int64_t ffn_safetensors_count(const ffn_safetensors *file);
/* Tensor `index` (0 .. count - 1, in the header's order). */
ffn_status ffn_safetensors_tensor_at(const ffn_safetensors *file, int64_t index,
                                     ffn_tensor_info *out);
/* The tensor called `name` (FFN_ERROR_NOT_FOUND naming it if none). */
ffn_status ffn_safetensors_tensor(const ffn_safetensors *file, const char *name,
                                  ffn_tensor_info *out);
/* Sets every parameter of `kernel` from `file`: parameter i (in the
 * descriptor's order) from the tensor named names[i], or, where `names` or
 * names[i] is NULL, the tensor named as the parameter ("w_up", ...). Each
 * tensor must have the kernel's dtype ("F32", "BF16", "F16") and the
 * parameter's shape in `layout`: with FFN_LAYOUT_OUT_IN a matrix is
 * [out, in] as nn.Linear stores it (a Hugging Face checkpoint's
 * up_proj.weight for w_up), with FFN_LAYOUT_IN_OUT [in, out]; a stacked
 * parameter has its count first ([experts or groups, ...]), a vector is
 * [n]. Every tensor is checked before any parameter is set; a missing
 * tensor or a dtype or shape mismatch is an error naming the tensor, what
 * it is and what the parameter needs, and leaves the kernel unchanged. */
ffn_status ffn_kernel_set_params_safetensors(ffn_kernel *kernel,
                                             const ffn_safetensors *file,
                                             const char *const *names,
                                             ffn_weight_layout layout);

/* Binds `kernel` to the packed parameters of `owner`, so their memory is
 * paid once: layers that share FFN weights (a spec's `share = other`), or
 * any two CPU kernels that pack their parameters the same way (equal
 * pack_signature in ffn/kernel_abi.h; otherwise an error saying how they
 * differ). Every parameter of `owner` must be set. The binding holds the
 * owner's packed buffers as they are now, for as long as either kernel uses
 * them; setting a parameter of either kernel later replaces that kernel's
 * own binding only. */
ffn_status ffn_kernel_share_params(ffn_kernel *kernel, const ffn_kernel *owner);

/* The packed buffer parameter `name` of a CPU kernel reads (NULL if it is
 * not set, for a device kernel, or for an unknown name): two kernels that
 * share parameters return the same pointer. */
const void *ffn_kernel_packed_param(const ffn_kernel *kernel, const char *name);

/* y[m, d_model] = FFN(x[m, d_model]) (for kind FFN_KIND_MOE the mixture of
 * experts, each row routed on its own; for kind FFN_KIND_GROUPED the
 * blocks side by side) for m >= 1, in the kernel's dtype,
 * row-major. y must not overlap x. x and y are host memory, also for a
 * device kernel (copied to and from the GPU; the call returns when y is
 * written). */
ffn_status ffn_kernel_run(ffn_kernel *kernel, int64_t m, const void *x,
                          void *y);

/* A device kernel (an NVIDIA target) on device memory: x and y are device
 * pointers of the GPU the runtime uses (device 0, its primary context,
 * as CUDA's runtime API and PyTorch use it), `stream` a CUstream (NULL:
 * the default stream). The launches are queued on `stream` and the call
 * returns; y is ready when the stream reaches this point. The first
 * stream that runs a kernel keeps a workspace for its later runs (grown
 * for larger m, freed with the kernel); runs on other streams allocate
 * theirs on the stream (stream-ordered memory). */
ffn_status ffn_kernel_run_device(ffn_kernel *kernel, int64_t m,
                                 const void *x, void *y, void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FFN_RUNTIME_H */
