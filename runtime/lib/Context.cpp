//===- Context.cpp - contexts, status strings, errors ---------------------===//

#include "Internal.h"

#include <new>

using namespace ffn_rt;

ffn_status ffn_rt::fail(ffn_context *ctx, ffn_status status,
                        std::string message) {
  if (ctx) {
    std::lock_guard<std::mutex> lock(ctx->errorMutex);
    ctx->errors[std::this_thread::get_id()] = std::move(message);
  }
  return status;
}

size_t dtypeSize(int64_t dtype) { return dtype == FFN_DTYPE_F32 ? 4 : 2; }

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
  case FFN_ERROR_DEVICE:
    return "FFN_ERROR_DEVICE";
  }
  return "FFN_ERROR_UNKNOWN";
}

ffn_status ffn_context_create(ffn_context **out) {
  if (!out)
    return FFN_ERROR_INVALID_ARGUMENT;
  *out = new (std::nothrow) ffn_context;
  return *out ? FFN_OK : FFN_ERROR_OUT_OF_MEMORY;
}

void ffn_context_destroy(ffn_context *ctx) {
  // Deferred while kernels live: the last ffn_kernel_destroy frees it.
  if (ctx)
    ctx->release();
}

ffn_status ffn_context_set_threads(ffn_context *ctx, int threads) {
  if (!ctx)
    return FFN_ERROR_INVALID_ARGUMENT;
  if (threads < 0 || threads > 1024)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_context_set_threads: threads must be in [0, 1024], got " +
                    std::to_string(threads));
  unsigned count = threads ? static_cast<unsigned>(threads)
                           : std::max(1u, std::thread::hardware_concurrency());
  // Start the workers now, so that a machine that cannot start them says so
  // here rather than in every run. Waits for a run using the old pool.
  std::lock_guard<std::mutex> lock(ctx->poolMutex);
  try {
    ctx->poolFor(count);
  } catch (const std::exception &e) {
    ctx->pool.reset();
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                "ffn_context_set_threads: cannot start " +
                    std::to_string(count - 1) + " worker threads (" + e.what() +
                    "); the thread count is unchanged");
  }
  ctx->threads.store(static_cast<unsigned>(threads));
  return FFN_OK;
}

int ffn_context_threads(ffn_context *ctx) {
  return ctx ? static_cast<int>(ctx->threadCount()) : 0;
}

ffn_status ffn_context_set_error(ffn_context *ctx, ffn_status status,
                                 const char *message) {
  try {
    return fail(ctx, status, message ? message : "");
  } catch (const std::bad_alloc &) {
    return FFN_ERROR_OUT_OF_MEMORY;
  }
}

const char *ffn_context_last_error(const ffn_context *ctx) {
  if (!ctx)
    return "null context";
  auto *c = const_cast<ffn_context *>(ctx);
  std::lock_guard<std::mutex> lock(c->errorMutex);
  auto it = c->errors.find(std::this_thread::get_id());
  return it == c->errors.end() ? "" : it->second.c_str();
}

} // extern "C"
