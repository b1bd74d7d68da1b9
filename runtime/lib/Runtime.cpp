//===- Runtime.cpp - the ffn runtime (C API over C++) ---------------------===//

#include "ffn/runtime.h"

#include "ThreadPool.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

static_assert(sizeof(ffn_kernel_desc) == 26 * 8,
              "ffn_kernel_desc must have twenty-six 8-byte fields");
static_assert(sizeof(ffn_param_desc) == 5 * 8,
              "ffn_param_desc must have five 8-byte fields");

namespace {
/// 64-byte aligned heap memory: packed weight panels and the workspace are
/// read with full-width vector loads.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  ~AlignedBuffer() { std::free(data_); }
  /// Ensures at least `bytes`; keeps the old block when it is big enough.
  bool reserve(size_t bytes) {
    if (bytes <= size_)
      return true;
    size_t rounded = (bytes + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, rounded);
    if (!p)
      return false;
    std::free(data_);
    data_ = p;
    size_ = rounded;
    return true;
  }
  void *data() const { return data_; }

private:
  void *data_ = nullptr;
  size_t size_ = 0;
};
} // namespace

/// Work per thread (FLOP) below which a run does not use the pool.
constexpr double kMinFlopsPerThread = 1e6;

struct ffn_context {
  std::string lastError;
  unsigned threads = 0; // 0 until first use: all cores
  std::unique_ptr<ffn_rt::ThreadPool> pool;

  unsigned threadCount() {
    if (threads == 0)
      threads = std::max(1u, std::thread::hardware_concurrency());
    return threads;
  }
  ffn_rt::ThreadPool *threadPool() {
    if (threadCount() == 1)
      return nullptr;
    if (!pool || pool->size() != threads)
      pool = std::make_unique<ffn_rt::ThreadPool>(threads);
    return pool.get();
  }
};

struct ffn_kernel {
  ffn_context *ctx = nullptr;
  const ffn_kernel_desc *desc = nullptr;
  void *library = nullptr; // dlopen handle, or null for linked-in kernels
  std::vector<AlignedBuffer> params; // packed, as the kernel reads them
  std::vector<bool> paramSet;
  std::vector<const void *> paramPointers;
  AlignedBuffer workspace; // grows to the largest m run so far
};

namespace {

ffn_status fail(ffn_context *ctx, ffn_status status, std::string message) {
  if (ctx)
    ctx->lastError = std::move(message);
  return status;
}

size_t dtypeSize(int64_t dtype) { return dtype == FFN_DTYPE_F32 ? 4 : 2; }

/// Checks everything the runtime relies on before trusting a descriptor.
ffn_status validateDescriptor(ffn_context *ctx, const ffn_kernel_desc *d) {
  if (d->abi_version != FFN_KERNEL_ABI_VERSION)
    return fail(ctx, FFN_ERROR_ABI_MISMATCH,
                "kernel ABI version " + std::to_string(d->abi_version) +
                    " does not match the runtime's " +
                    std::to_string(FFN_KERNEL_ABI_VERSION) +
                    "; recompile the kernel with this ffnc");
  if (d->struct_size != sizeof(ffn_kernel_desc))
    return fail(ctx, FFN_ERROR_ABI_MISMATCH,
                "kernel descriptor size " + std::to_string(d->struct_size) +
                    " does not match the runtime's " +
                    std::to_string(sizeof(ffn_kernel_desc)));
  std::string name = d->name ? d->name : "?";
  if (d->device != FFN_DEVICE_CPU)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                "kernel '" + name +
                    "' is a device kernel; this runtime runs CPU kernels only");
  if (!d->run || !d->pack || !d->phase || d->num_phases < 1 ||
      d->num_phases > 16 || !d->phase_units)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "kernel '" + name + "' has no CPU entry point");
  if (d->workspace_per_row < 0)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "kernel '" + name + "' has an inconsistent descriptor");
  if (d->dtype != FFN_DTYPE_F32 && d->dtype != FFN_DTYPE_BF16 &&
      d->dtype != FFN_DTYPE_F16)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                "kernel '" + name + "' has unknown dtype " +
                    std::to_string(d->dtype));
  if (d->d_model < 1 || d->d_ff < 1 || d->num_params < 2 || d->num_params > 8 ||
      !d->params)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "kernel '" + name + "' has an inconsistent descriptor");
  for (int64_t i = 0; i < d->num_params; ++i) {
    const ffn_param_desc &p = d->params[i];
    if (!p.name || (p.rank != 1 && p.rank != 2) || p.shape[0] < 1 ||
        (p.rank == 2 && p.shape[1] < 1) || p.packed_bytes < 1)
      return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  "kernel '" + name + "' has an invalid parameter " +
                      std::to_string(i));
  }
  return FFN_OK;
}

ffn_status makeKernel(ffn_context *ctx, const ffn_kernel_desc *desc,
                      void *library, ffn_kernel **out) {
  if (ffn_status s = validateDescriptor(ctx, desc))
    return s;
  ffn_kernel *k = new (std::nothrow) ffn_kernel;
  if (!k)
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY, "out of memory");
  k->ctx = ctx;
  k->desc = desc;
  k->library = library;
  k->params = std::vector<AlignedBuffer>(desc->num_params);
  k->paramSet.assign(desc->num_params, false);
  k->paramPointers.assign(desc->num_params, nullptr);
  *out = k;
  return FFN_OK;
}

} // namespace

extern "C" {

const char *ffn_status_string(ffn_status status) {
  switch (status) {
  case FFN_OK:
    return "FFN_OK";
  case FFN_ERROR_INVALID_ARGUMENT:
    return "FFN_ERROR_INVALID_ARGUMENT";
  case FFN_ERROR_ABI_MISMATCH:
    return "FFN_ERROR_ABI_MISMATCH";
  case FFN_ERROR_NOT_FOUND:
    return "FFN_ERROR_NOT_FOUND";
  case FFN_ERROR_LOAD_FAILED:
    return "FFN_ERROR_LOAD_FAILED";
  case FFN_ERROR_OUT_OF_MEMORY:
    return "FFN_ERROR_OUT_OF_MEMORY";
  case FFN_ERROR_UNSUPPORTED:
    return "FFN_ERROR_UNSUPPORTED";
  case FFN_ERROR_NOT_READY:
    return "FFN_ERROR_NOT_READY";
  }
  return "FFN_ERROR_UNKNOWN";
}

ffn_status ffn_context_create(ffn_context **out) {
  if (!out)
    return FFN_ERROR_INVALID_ARGUMENT;
  *out = new (std::nothrow) ffn_context;
  return *out ? FFN_OK : FFN_ERROR_OUT_OF_MEMORY;
}

void ffn_context_destroy(ffn_context *ctx) { delete ctx; }

ffn_status ffn_context_set_threads(ffn_context *ctx, int threads) {
  if (!ctx)
    return FFN_ERROR_INVALID_ARGUMENT;
  if (threads < 0 || threads > 1024)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_context_set_threads: threads must be in [0, 1024], got " +
                    std::to_string(threads));
  ctx->threads = static_cast<unsigned>(threads); // 0: all cores
  return FFN_OK;
}

int ffn_context_threads(ffn_context *ctx) {
  return ctx ? static_cast<int>(ctx->threadCount()) : 0;
}

const char *ffn_context_last_error(const ffn_context *ctx) {
  return ctx ? ctx->lastError.c_str() : "null context";
}

ffn_status ffn_kernel_create(ffn_context *ctx, const ffn_kernel_desc *desc,
                             ffn_kernel **out) {
  if (!ctx)
    return FFN_ERROR_INVALID_ARGUMENT;
  if (!desc || !out)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_create: desc and out must not be null");
  *out = nullptr;
  return makeKernel(ctx, desc, nullptr, out);
}

ffn_status ffn_kernel_load_library(ffn_context *ctx, const char *path,
                                   const char *name, ffn_kernel **out) {
  if (!ctx)
    return FFN_ERROR_INVALID_ARGUMENT;
  if (!path || !name || !out)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_load_library: path, name and out must not be "
                "null");
  *out = nullptr;
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return fail(ctx, FFN_ERROR_LOAD_FAILED,
                std::string("cannot load '") + path +
                    "': " + (why ? why : "unknown error"));
  }
  std::string symbol = std::string("ffn_kernel_") + name;
  auto *desc =
      static_cast<const ffn_kernel_desc *>(dlsym(library, symbol.c_str()));
  if (!desc) {
    dlclose(library);
    return fail(ctx, FFN_ERROR_NOT_FOUND,
                std::string("no kernel '") + name + "' in '" + path +
                    "' (symbol " + symbol + " not found)");
  }
  ffn_status s = makeKernel(ctx, desc, library, out);
  if (s != FFN_OK)
    dlclose(library);
  return s;
}

void ffn_kernel_destroy(ffn_kernel *kernel) {
  if (!kernel)
    return;
  if (kernel->library)
    dlclose(kernel->library);
  delete kernel;
}

const ffn_kernel_desc *ffn_kernel_descriptor(const ffn_kernel *kernel) {
  return kernel ? kernel->desc : nullptr;
}

ffn_status ffn_kernel_set_param(ffn_kernel *kernel, const char *name,
                                const void *data, size_t bytes,
                                ffn_weight_layout layout) {
  if (!kernel)
    return FFN_ERROR_INVALID_ARGUMENT;
  ffn_context *ctx = kernel->ctx;
  const ffn_kernel_desc *d = kernel->desc;
  if (!name || !data)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_set_param: name and data must not be null");
  if (layout != FFN_LAYOUT_IN_OUT && layout != FFN_LAYOUT_OUT_IN)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_set_param: unknown layout " +
                    std::to_string(static_cast<int>(layout)));
  int64_t index = -1;
  for (int64_t i = 0; i < d->num_params; ++i)
    if (std::strcmp(d->params[i].name, name) == 0)
      index = i;
  if (index < 0) {
    std::string known;
    for (int64_t i = 0; i < d->num_params; ++i)
      known += (i ? ", " : "") + std::string(d->params[i].name);
    return fail(ctx, FFN_ERROR_NOT_FOUND,
                std::string("kernel '") + d->name + "' has no parameter '" +
                    name + "' (parameters: " + known + ")");
  }
  const ffn_param_desc &p = d->params[index];
  size_t elements = static_cast<size_t>(p.shape[0]) *
                    static_cast<size_t>(p.rank == 2 ? p.shape[1] : 1);
  size_t esize = dtypeSize(d->dtype);
  if (bytes != elements * esize)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                std::string("parameter '") + name + "' of kernel '" + d->name +
                    "' needs " + std::to_string(elements * esize) + " bytes (" +
                    std::to_string(elements) + " elements of " +
                    std::to_string(esize) + " bytes), got " +
                    std::to_string(bytes));
  // Bring the data to the logical [in, out] layout, then let the kernel's
  // own pack function put it into the blocked layout its loops read.
  const void *src = data;
  std::vector<unsigned char> transposed;
  if (p.rank == 2 && layout == FFN_LAYOUT_OUT_IN) {
    try {
      transposed.resize(bytes);
    } catch (const std::bad_alloc &) {
      return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                  std::string("out of memory transposing '") + name + "'");
    }
    // [out, in] -> [in, out]: element (o, i) of the source is (i, o) here.
    const auto *in = static_cast<const unsigned char *>(data);
    size_t rows = static_cast<size_t>(p.shape[0]);
    size_t cols = static_cast<size_t>(p.shape[1]);
    for (size_t o = 0; o < cols; ++o)
      for (size_t i = 0; i < rows; ++i)
        std::memcpy(&transposed[(i * cols + o) * esize],
                    &in[(o * rows + i) * esize], esize);
    src = transposed.data();
  }
  AlignedBuffer &dst = kernel->params[index];
  if (!dst.reserve(static_cast<size_t>(p.packed_bytes)))
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                std::string("out of memory for parameter '") + name + "'");
  d->pack(index, src, dst.data());
  kernel->paramSet[index] = true;
  kernel->paramPointers[index] = dst.data();
  return FFN_OK;
}

ffn_status ffn_kernel_run(ffn_kernel *kernel, int64_t m, const void *x,
                          void *y) {
  if (!kernel)
    return FFN_ERROR_INVALID_ARGUMENT;
  ffn_context *ctx = kernel->ctx;
  const ffn_kernel_desc *d = kernel->desc;
  if (!x || !y)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_run: x and y must not be null");
  if (m < 1)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_run: m must be at least 1, got " +
                    std::to_string(m));
  // m * d_model * size must fit in memory arithmetic.
  if (m > static_cast<int64_t>(INT64_MAX / 8 / d->d_model / d->d_ff))
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_run: m = " + std::to_string(m) + " is too large");
  for (int64_t i = 0; i < d->num_params; ++i)
    if (!kernel->paramSet[i])
      return fail(ctx, FFN_ERROR_NOT_READY,
                  std::string("kernel '") + d->name + "': parameter '" +
                      d->params[i].name + "' was not set");
  size_t bytes = static_cast<size_t>(m) * d->d_model * dtypeSize(d->dtype);
  auto xb = reinterpret_cast<uintptr_t>(x);
  auto yb = reinterpret_cast<uintptr_t>(y);
  if (xb < yb + bytes && yb < xb + bytes)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_run: y overlaps x; use separate buffers");
  if (d->workspace_per_row > 0 &&
      !kernel->workspace.reserve(static_cast<size_t>(m) *
                                 static_cast<size_t>(d->workspace_per_row)))
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                "ffn_kernel_run: out of memory for the workspace of m = " +
                    std::to_string(m) + " rows");
  // Phase by phase; within a phase the units are split over the context's
  // threads (rows for row phases, weight panels for the matmuls, so one
  // token still uses every core).
  const void *const *params = kernel->paramPointers.data();
  void *ws = kernel->workspace.data();
  // A phase hand-off costs well under a microsecond while the workers spin
  // and tens of microseconds when they have gone to sleep (ThreadPool.h):
  // below kMinFlopsPerThread of work per thread a run stays on the caller.
  double flops =
      2.0 * static_cast<double>(m) * d->d_model * d->d_ff * (d->gated ? 3 : 2);
  ffn_rt::ThreadPool *pool = flops >= kMinFlopsPerThread * ctx->threadCount()
                                 ? ctx->threadPool()
                                 : nullptr;
  for (int64_t p = 0; p < d->num_phases; ++p) {
    int64_t units = d->phase_units(p, m);
    if (units <= 0)
      continue;
    if (!pool) {
      d->phase(p, m, x, params, y, ws, 0, units);
      continue;
    }
    pool->parallelFor(units, [&](int64_t begin, int64_t end) {
      d->phase(p, m, x, params, y, ws, begin, end);
    });
  }
  return FFN_OK;
}

} // extern "C"
