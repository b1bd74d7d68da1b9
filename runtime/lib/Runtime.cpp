//===- Runtime.cpp - the ffn runtime (C API over C++) ---------------------===//

#include "ffn/runtime.h"

#include "DeviceKernel.h"
#include "ThreadPool.h"

#include <dlfcn.h>
#include <pthread.h>
#include <elf.h>
#include <link.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex> // std::shared_lock
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

static_assert(sizeof(ffn_kernel_desc) == 28 * 8,
              "ffn_kernel_desc must have twenty-eight 8-byte fields");
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

/// A reader-writer lock that lets a waiting writer in: runs (readers) from
/// many threads overlap all the time, and with the default reader
/// preference (std::shared_mutex on glibc) ffn_kernel_set_param would wait
/// for ever. Usable with std::shared_lock / std::unique_lock.
class WriterFirstLock {
public:
  WriterFirstLock() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(
        &attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~WriterFirstLock() { pthread_rwlock_destroy(&lock_); }
  WriterFirstLock(const WriterFirstLock &) = delete;
  WriterFirstLock &operator=(const WriterFirstLock &) = delete;
  void lock() { pthread_rwlock_wrlock(&lock_); }
  void unlock() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() { pthread_rwlock_rdlock(&lock_); }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

private:
  pthread_rwlock_t lock_;
};
} // namespace

/// Work per thread (FLOP) below which a run does not use the pool.
constexpr double kMinFlopsPerThread = 1e6;

/// A context is shared by every kernel created on it and may be used from
/// many threads at once. It lives until ffn_context_destroy has been called
/// and its last kernel is destroyed (`refs` counts the application's own
/// reference plus one per kernel).
struct ffn_context {
  std::atomic<int64_t> refs{1};
  std::atomic<unsigned> threads{0}; // 0: all cores

  /// One run at a time uses the pool; a run that finds it busy runs on its
  /// caller's thread instead (ffn/runtime.h). Guards `pool`.
  std::mutex poolMutex;
  std::unique_ptr<ffn_rt::ThreadPool> pool;

  /// Each calling thread's last error: concurrent callers do not overwrite
  /// each other's messages. Nodes are stable, so a returned c_str() stays
  /// valid until that thread's next failing call.
  std::mutex errorMutex;
  std::unordered_map<std::thread::id, std::string> errors;

  unsigned threadCount() const {
    unsigned t = threads.load(std::memory_order_relaxed);
    return t ? t : std::max(1u, std::thread::hardware_concurrency());
  }
  /// The pool for `count` threads (caller included), built or rebuilt under
  /// poolMutex, which the caller holds. Throws what std::thread throws.
  ffn_rt::ThreadPool *poolFor(unsigned count) {
    if (count <= 1)
      return nullptr;
    if (!pool || pool->size() != count) {
      pool.reset();
      pool = std::make_unique<ffn_rt::ThreadPool>(count);
    }
    return pool.get();
  }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete this;
  }
};

struct ffn_kernel {
  ffn_context *ctx = nullptr;
  const ffn_kernel_desc *desc = nullptr;
  void *library = nullptr; // dlopen handle, or null for linked-in kernels

  /// Runs hold it shared for their whole duration; ffn_kernel_set_param
  /// packs into a new buffer first and swaps it in exclusively, so a run
  /// sees either the old or the new parameter, never a half-packed one.
  WriterFirstLock paramsMutex;
  std::vector<std::unique_ptr<AlignedBuffer>> params; // packed
  std::vector<const void *> paramPointers;            // null: not set

  /// Scratch for runs: each run takes a buffer of its own (so concurrent
  /// runs never share one) and gives it back; steady-state runs from one
  /// thread reuse a single buffer and allocate nothing.
  std::mutex workspaceMutex;
  std::vector<std::unique_ptr<AlignedBuffer>> idleWorkspaces;

  /// Device kernels: module, device parameters, launches.
  std::unique_ptr<ffn_rt::DeviceKernel> device;
};

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

ffn_status fail(ffn_context *ctx, ffn_status status, std::string message) {
  if (ctx) {
    std::lock_guard<std::mutex> lock(ctx->errorMutex);
    ctx->errors[std::this_thread::get_id()] = std::move(message);
  }
  return status;
}

size_t dtypeSize(int64_t dtype) { return dtype == FFN_DTYPE_F32 ? 4 : 2; }

/// Whether `p` points into a loaded object (the app or a kernel library),
/// where a descriptor's strings, tables and functions live. A corrupt or
/// foreign descriptor's garbage pointers fail here instead of crashing.
bool inLoadedImage(const void *p) {
  Dl_info info;
  return p && dladdr(p, &info) != 0;
}

bool validString(const char *s, size_t limit = 256) {
  return inLoadedImage(s) && strnlen(s, limit) < limit;
}

/// Limits no real kernel comes near; they keep every size computed from a
/// descriptor far from overflow.
constexpr int64_t kMaxDim = int64_t(1) << 20;
constexpr int64_t kMaxBytes = int64_t(1) << 40;

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
  if (!validString(d->name))
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "kernel descriptor has no valid name (a corrupt or foreign "
                "descriptor)");
  std::string name = d->name;
  auto bad = [&](const std::string &what) {
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "kernel '" + name + "' has an inconsistent descriptor: " +
                    what);
  };
  if (d->device != FFN_DEVICE_CPU && d->device != FFN_DEVICE_CUDA)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                "kernel '" + name + "' is for unknown device " +
                    std::to_string(d->device));
  if (d->device == FFN_DEVICE_CUDA) {
    if (!d->pack || !inLoadedImage(reinterpret_cast<const void *>(d->pack)))
      return bad("no pack function");
    // Every pointer of the plan must lie in loaded objects before anything
    // behind it is read.
    if (d->num_launches < 1 || d->num_launches > 64 ||
        d->device_image_size < 16 || d->device_image_size > (uint64_t(1) << 30))
      return bad("a device plan of " + std::to_string(d->num_launches) +
                 " launches and a " + std::to_string(d->device_image_size) +
                 "-byte image");
    const char *image = static_cast<const char *>(d->device_image);
    if (!inLoadedImage(image) || !inLoadedImage(image + d->device_image_size - 1) ||
        !inLoadedImage(d->launches) ||
        !inLoadedImage(d->launches + d->num_launches - 1))
      return bad("a device image or launch plan outside any loaded object");
    for (int64_t i = 0; i < d->num_launches; ++i) {
      const ffn_device_launch &l = d->launches[i];
      if (!validString(l.kernel) || l.num_args < 1 || l.num_args > 32 ||
          !inLoadedImage(l.args) || !inLoadedImage(l.args + l.num_args - 1))
        return bad("launch " + std::to_string(i) + " outside any loaded object");
    }
    std::string plan = ffn_rt::DeviceKernel::validate(*d);
    if (!plan.empty())
      return bad(plan);
  } else {
    if (!d->run || !d->pack || !d->phase || d->num_phases < 1 ||
        d->num_phases > 16 || !d->phase_units)
      return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  "kernel '" + name + "' has no CPU entry point");
    if (!inLoadedImage(reinterpret_cast<const void *>(d->run)) ||
        !inLoadedImage(reinterpret_cast<const void *>(d->pack)) ||
        !inLoadedImage(reinterpret_cast<const void *>(d->phase)) ||
        !inLoadedImage(reinterpret_cast<const void *>(d->phase_units)))
      return bad("an entry point outside any loaded code");
  }
  // A strategy text also carries the back end's notes: a longer limit.
  if (!validString(d->target) || !validString(d->strategy, 4096))
    return bad("target or strategy is not a string");
  if (d->dtype != FFN_DTYPE_F32 && d->dtype != FFN_DTYPE_BF16 &&
      d->dtype != FFN_DTYPE_F16)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                "kernel '" + name + "' has unknown dtype " +
                    std::to_string(d->dtype));
  if (d->d_model < 1 || d->d_model > kMaxDim || d->d_ff < 1 ||
      d->d_ff > kMaxDim)
    return bad("d_model " + std::to_string(d->d_model) + ", d_ff " +
               std::to_string(d->d_ff));
  if (d->workspace_per_row < 0 || d->workspace_per_row > kMaxBytes / kMaxDim)
    return bad("workspace_per_row " + std::to_string(d->workspace_per_row));
  if (d->num_params < 2 || d->num_params > 8)
    return bad("num_params " + std::to_string(d->num_params));
  if (!inLoadedImage(d->params) ||
      !inLoadedImage(d->params + d->num_params - 1))
    return bad("a parameter table outside any loaded object");
  for (int64_t i = 0; i < d->num_params; ++i) {
    const ffn_param_desc &p = d->params[i];
    if (!validString(p.name) || (p.rank != 1 && p.rank != 2) ||
        p.shape[0] < 1 || p.shape[0] > kMaxDim ||
        (p.rank == 2 && (p.shape[1] < 1 || p.shape[1] > kMaxDim)) ||
        p.packed_bytes < 1 || p.packed_bytes > kMaxBytes)
      return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  "kernel '" + name + "' has an invalid parameter " +
                      std::to_string(i));
  }
  return FFN_OK;
}

/// A shared library that dlopen would map must be a whole 64-bit ELF file:
/// mapping a truncated one faults (SIGBUS) when the loader touches the
/// missing pages. Checks that every header and loadable segment lies inside
/// the file; returns "" or what is wrong.
std::string checkElfFile(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::strerror(errno);
  struct stat st;
  std::string why;
  Elf64_Ehdr eh;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (pread(fd, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh) ||
             std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
             eh.e_ident[EI_CLASS] != ELFCLASS64) {
    why = "not a 64-bit ELF shared library";
  } else {
    uint64_t size = static_cast<uint64_t>(st.st_size);
    auto fits = [&](uint64_t offset, uint64_t bytes) {
      return offset <= size && bytes <= size - offset;
    };
    if (eh.e_phentsize != sizeof(Elf64_Phdr) ||
        !fits(eh.e_phoff, uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr)) ||
        (eh.e_shnum &&
         !fits(eh.e_shoff, uint64_t(eh.e_shnum) * eh.e_shentsize)))
      why = "truncated or corrupt (headers past the end of the file)";
    for (unsigned i = 0; why.empty() && i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      if (pread(fd, &ph, sizeof ph, eh.e_phoff + i * sizeof ph) !=
              static_cast<ssize_t>(sizeof ph) ||
          (ph.p_type == PT_LOAD && !fits(ph.p_offset, ph.p_filesz)))
        why = "truncated (a segment ends past the end of the file)";
    }
  }
  close(fd);
  return why;
}

/// Whether `p` lies in the object that dlopen handle `library` loaded.
bool definedIn(const void *p, void *library) {
  struct link_map *own = nullptr, *found = nullptr;
  Dl_info info;
  return dlinfo(library, RTLD_DI_LINKMAP, &own) == 0 &&
         dladdr1(p, &info, reinterpret_cast<void **>(&found),
                 RTLD_DL_LINKMAP) != 0 &&
         found == own;
}

/// `caller`'s x and y (m rows each) must not overlap.
ffn_status checkNoOverlap(ffn_context *ctx, const char *caller,
                          const ffn_kernel_desc *d, int64_t m, const void *x,
                          const void *y) {
  size_t bytes = static_cast<size_t>(m) * d->d_model * dtypeSize(d->dtype);
  auto xb = reinterpret_cast<uintptr_t>(x);
  auto yb = reinterpret_cast<uintptr_t>(y);
  if (xb < yb + bytes && yb < xb + bytes)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                std::string(caller) + ": y overlaps x; use separate buffers");
  return FFN_OK;
}

/// Every parameter was set (the caller holds the parameter lock).
ffn_status checkParamsSet(ffn_kernel *kernel) {
  const ffn_kernel_desc *d = kernel->desc;
  for (int64_t i = 0; i < d->num_params; ++i)
    if (!kernel->paramPointers[i])
      return fail(kernel->ctx, FFN_ERROR_NOT_READY,
                  std::string("kernel '") + d->name + "': parameter '" +
                      d->params[i].name + "' was not set");
  return FFN_OK;
}

ffn_status makeKernel(ffn_context *ctx, const ffn_kernel_desc *desc,
                      void *library, ffn_kernel **out) {
  if (ffn_status s = validateDescriptor(ctx, desc))
    return s;
  ffn_kernel *k = new (std::nothrow) ffn_kernel;
  if (!k)
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY, "out of memory");
  try {
    k->params.resize(desc->num_params);
    k->paramPointers.assign(desc->num_params, nullptr);
    if (desc->device == FFN_DEVICE_CUDA)
      k->device = std::make_unique<ffn_rt::DeviceKernel>(*desc);
  } catch (const std::bad_alloc &) {
    delete k;
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  k->ctx = ctx;
  k->desc = desc;
  k->library = library;
  ctx->refs.fetch_add(1, std::memory_order_relaxed);
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
  unsigned count =
      threads ? static_cast<unsigned>(threads)
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
                    std::to_string(count - 1) + " worker threads (" +
                    e.what() + "); the thread count is unchanged");
  }
  ctx->threads.store(static_cast<unsigned>(threads));
  return FFN_OK;
}

int ffn_context_threads(ffn_context *ctx) {
  return ctx ? static_cast<int>(ctx->threadCount()) : 0;
}

const char *ffn_context_last_error(const ffn_context *ctx) {
  if (!ctx)
    return "null context";
  auto *c = const_cast<ffn_context *>(ctx);
  std::lock_guard<std::mutex> lock(c->errorMutex);
  auto it = c->errors.find(std::this_thread::get_id());
  return it == c->errors.end() ? "" : it->second.c_str();
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
  if (!*path || !*name)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                std::string("ffn_kernel_load_library: ") +
                    (*path ? "the kernel name" : "the path") + " is empty");
  std::string why = checkElfFile(path);
  if (!why.empty())
    return fail(ctx, FFN_ERROR_LOAD_FAILED,
                std::string("cannot load '") + path + "': " + why);
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *err = dlerror();
    return fail(ctx, FFN_ERROR_LOAD_FAILED,
                std::string("cannot load '") + path +
                    "': " + (err ? err : "unknown error"));
  }
  std::string symbol = std::string("ffn_kernel_") + name;
  auto *desc =
      static_cast<const ffn_kernel_desc *>(dlsym(library, symbol.c_str()));
  // dlsym on a handle also searches the library's dependencies: the
  // descriptor must be this library's own, not a same-named one elsewhere.
  if (desc && !definedIn(desc, library))
    desc = nullptr;
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
  ffn_context *ctx = kernel->ctx;
  if (kernel->library)
    dlclose(kernel->library);
  delete kernel;
  ctx->release();
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
  // A C caller may pass any int; in C++ merely loading an enum object that
  // holds a value outside the enumerators' range is undefined, so read its
  // bytes as the int they are.
  int layoutValue;
  static_assert(sizeof layoutValue == sizeof layout, "enums are ints");
  std::memcpy(&layoutValue, &layout, sizeof layoutValue);
  if (layoutValue != FFN_LAYOUT_IN_OUT && layoutValue != FFN_LAYOUT_OUT_IN)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_set_param: unknown layout " +
                    std::to_string(layoutValue));
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
  // The descriptor's limits keep this product far from overflow.
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
  auto packed = std::unique_ptr<AlignedBuffer>(new (std::nothrow)
                                                   AlignedBuffer);
  try {
    if (p.rank == 2 && layoutValue == FFN_LAYOUT_OUT_IN)
      transposed.resize(bytes);
  } catch (const std::bad_alloc &) {
    packed.reset();
  }
  if (!packed || !packed->reserve(static_cast<size_t>(p.packed_bytes)))
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                std::string("out of memory for parameter '") + name + "'");
  if (!transposed.empty()) {
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
  d->pack(index, src, packed->data());
  if (kernel->device) {
    // The packed parameter lives in device memory; the host copy goes.
    std::unique_lock<WriterFirstLock> lock(kernel->paramsMutex);
    std::string error;
    if (!kernel->device->setParam(index, packed->data(),
                                  static_cast<size_t>(p.packed_bytes), error))
      return fail(ctx, FFN_ERROR_DEVICE, "kernel '" + std::string(d->name) +
                                             "': " + error);
    kernel->paramPointers[index] = kernel; // set (a marker, not a pointer)
    return FFN_OK;
  }
  // Swap it in once no run is using the old one (runs hold the lock shared).
  {
    std::unique_lock<WriterFirstLock> lock(kernel->paramsMutex);
    kernel->params[index].swap(packed);
    kernel->paramPointers[index] = kernel->params[index]->data();
  }
  return FFN_OK; // the old buffer, if any, is freed here
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
  if (!ws.get() || (d->workspace_per_row > 0 &&
                    !ws.get()->reserve(static_cast<size_t>(m) *
                                       static_cast<size_t>(d->workspace_per_row))))
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                "ffn_kernel_run: out of memory for the workspace of m = " +
                    std::to_string(m) + " rows");

  // Phase by phase; within a phase the units are split over the context's
  // threads (rows for row phases, weight panels for the matmuls, so one
  // token still uses every core). A phase hand-off costs well under a
  // microsecond while the workers spin and tens of microseconds when they
  // have gone to sleep (ThreadPool.h): below kMinFlopsPerThread of work per
  // thread a run stays on the caller, and so does a run that finds the pool
  // busy with another run (results do not depend on the thread count).
  const void *const *packed = kernel->paramPointers.data();
  void *scratch = ws.get()->data();
  unsigned threads = ctx->threadCount();
  double flops =
      2.0 * static_cast<double>(m) * d->d_model * d->d_ff * (d->gated ? 3 : 2);
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
  for (int64_t p = 0; p < d->num_phases; ++p) {
    int64_t units = d->phase_units(p, m);
    if (units <= 0)
      continue;
    if (!pool) {
      d->phase(p, m, x, packed, y, scratch, 0, units);
      continue;
    }
    pool->parallelFor(units, [&](int64_t begin, int64_t end) {
      d->phase(p, m, x, packed, y, scratch, begin, end);
    });
  }
  return FFN_OK;
}

ffn_status ffn_kernel_run_device(ffn_kernel *kernel, int64_t m,
                                 const void *x, void *y, void *stream) {
  if (!kernel)
    return FFN_ERROR_INVALID_ARGUMENT;
  ffn_context *ctx = kernel->ctx;
  const ffn_kernel_desc *d = kernel->desc;
  if (!kernel->device)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                std::string("ffn_kernel_run_device: kernel '") + d->name +
                    "' is a CPU kernel; use ffn_kernel_run");
  if (!x || !y)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_run_device: x and y must not be null");
  if (m < 1 || m > (int64_t(1) << 31))
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_run_device: m must be in [1, 2^31], got " +
                    std::to_string(m));
  if (ffn_status s =
          checkNoOverlap(ctx, "ffn_kernel_run_device", d, m, x, y))
    return s;
  std::shared_lock<WriterFirstLock> params(kernel->paramsMutex);
  if (ffn_status s = checkParamsSet(kernel))
    return s;
  std::string error;
  if (!kernel->device->run(m, x, y, stream, error))
    return fail(ctx, FFN_ERROR_DEVICE,
                "kernel '" + std::string(d->name) + "': " + error);
  return FFN_OK;
}

} // extern "C"
