//===- Executor.cpp - running CPU kernels on the context's threads --------===//

#include "Internal.h"

#include <algorithm>
#include <new>
#include <shared_mutex>

using namespace ffn_rt;

/// Work per thread (FLOP) below which a run does not use the pool.
static constexpr double kMinFlopsPerThread = 1e6;

namespace {

/// Takes a workspace from the kernel's free list (or a new, empty one) and
/// puts it back when the run ends, on every path.
class WorkspaceLease {
public:
  explicit WorkspaceLease(ffn_kernel &kernel) : kernel(kernel) {
    {
      std::lock_guard<std::mutex> lock(kernel.workspaceMutex);
      if (!kernel.idleWorkspaces.empty()) {
        buffer = std::move(kernel.idleWorkspaces.back());
        kernel.idleWorkspaces.pop_back();
      }
    }
    if (!buffer)
      buffer.reset(new (std::nothrow) AlignedBuffer);
  }
  ~WorkspaceLease() {
    if (!buffer)
      return;
    std::lock_guard<std::mutex> lock(kernel.workspaceMutex);
    kernel.idleWorkspaces.push_back(std::move(buffer));
  }
  WorkspaceLease(const WorkspaceLease &) = delete;
  WorkspaceLease &operator=(const WorkspaceLease &) = delete;
  /// Null only if even the empty buffer could not be allocated.
  AlignedBuffer *get() const { return buffer.get(); }

private:
  ffn_kernel &kernel;
  std::unique_ptr<AlignedBuffer> buffer;
};

} // namespace

extern "C" {

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
  // Everything a run computes from m must fit in 64-bit arithmetic: x and y
  // (m * d_model elements), the activations (m * d_ff each, 8 bytes bound
  // any dtype), once per expert FFN of a mixture, the workspace
  // (m * workspace_per_row) and the phases' units, which for a mixture may
  // be n * m for n up to experts + shared_experts (phase_units). A grouped
  // FFN's blocks together are no larger than one dense FFN, which the bound
  // already covers. The descriptor's limits keep this bound itself below
  // 2^60.
  int64_t expertFfns =
      d->kind == FFN_KIND_MOE
          ? std::max<int64_t>(1, d->experts + d->shared_experts)
          : 1;
  int64_t perRow =
      std::max(8 * d->d_model * d->d_ff * expertFfns, d->workspace_per_row);
  if (m > INT64_MAX / perRow)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_run: m = " + std::to_string(m) + " is too large");
  if (ffn_status s = checkNoOverlap(ctx, "ffn_kernel_run", d, m, x, y))
    return s;

  // The parameters stay as they are for the whole run.
  std::shared_lock<WriterFirstLock> params(kernel->paramsMutex);
  if (ffn_status s = checkParamsSet(kernel))
    return s;

  if (kernel->device) {
    std::string error;
    if (!kernel->device->runHost(m, x, y, error))
      return fail(ctx, FFN_ERROR_DEVICE,
                  "kernel '" + std::string(d->name) + "': " + error);
    return FFN_OK;
  }

  // A workspace of this run's own, back on the kernel's free list however
  // the run ends.
  WorkspaceLease ws(*kernel);
  if (!ws.get() ||
      (d->workspace_per_row > 0 &&
       !ws.get()->reserve(static_cast<size_t>(m) *
                          static_cast<size_t>(d->workspace_per_row))))
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                "ffn_kernel_run: out of memory for the workspace of m = " +
                    std::to_string(m) + " rows");

  // Phase by phase; within a phase the units are split over the context's
  // threads (rows for row phases, weight panels for the matmuls, so one
  // token still uses every core; a mixture's phases may have several units
  // per row, up to (experts + shared_experts) * m). A phase hand-off costs
  // well under a microsecond while the workers spin and tens of microseconds
  // when they have gone to sleep (ThreadPool.h): below kMinFlopsPerThread of
  // work per thread a run stays on the caller, and so does a run that finds the
  // pool busy with another run (results do not depend on the thread count).
  const void *const *packed = kernel->paramPointers.data();
  void *scratch = ws.get()->data();
  unsigned threads = ctx->threadCount();
  // A mixture of experts does the work of the experts each token runs
  // (top_k routed and every shared one) and the router's logits, not that
  // of all its experts. A grouped FFN multiplies only the diagonal blocks
  // of d_model x d_ff matrices: 1 / groups of a dense FFN's work.
  double rows = static_cast<double>(m);
  double ffnFlops = 2.0 * rows * d->d_model * d->d_ff * (d->gated ? 3 : 2);
  double flops = ffnFlops;
  if (d->kind == FFN_KIND_MOE)
    flops = ffnFlops * static_cast<double>(d->top_k + d->shared_experts) +
            2.0 * rows * d->d_model * d->experts;
  else if (d->kind == FFN_KIND_GROUPED)
    flops = ffnFlops / static_cast<double>(d->groups);
  std::unique_lock<std::mutex> poolLock;
  ffn_rt::ThreadPool *pool = nullptr;
  if (threads > 1 && flops >= kMinFlopsPerThread * threads) {
    poolLock = std::unique_lock<std::mutex>(ctx->poolMutex, std::try_to_lock);
    if (poolLock.owns_lock()) {
      try {
        pool = ctx->poolFor(threads);
      } catch (const std::exception &e) {
        ctx->pool.reset();
        return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                    "ffn_kernel_run: cannot start " +
                        std::to_string(threads - 1) + " worker threads (" +
                        e.what() + ")");
      }
    }
  }
  const ffn_cpu_code &code = *d->cpu;
  for (int64_t p = 0; p < code.num_phases; ++p) {
    int64_t units = code.phase_units(p, m);
    if (units <= 0)
      continue;
    if (!pool) {
      code.phase(p, m, x, packed, y, scratch, 0, units);
      continue;
    }
    pool->parallelFor(units, [&](int64_t begin, int64_t end) {
      code.phase(p, m, x, packed, y, scratch, begin, end);
    });
  }
  return FFN_OK;
}

} // extern "C"
