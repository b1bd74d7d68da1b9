//===- DeviceKernel.cpp - running a CUDA kernel's launch plan -------------===//

#include "DeviceKernel.h"

#include "CudaDriver.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

using namespace ffn_rt;
using namespace ffn_rt::cuda;

static size_t dtypeBytes(int64_t dtype) {
  return dtype == FFN_DTYPE_F32 ? 4 : 2;
}

/// Tensor maps one launch may take.
constexpr int64_t kMaxMaps = 8;

/// Encodes `map` over the buffer at `base` for a run of m rows into `out`
/// (128 bytes, 64-byte aligned); an error message, or empty.
static std::string encodeTensorMap(const Driver &d, const ffn_tensor_map &map,
                                   int64_t dtype, CUdeviceptr base, int64_t m,
                                   void *out) {
  if (!d.TensorMapEncodeTiled)
    return "the CUDA driver lacks cuTensorMapEncodeTiled, which the TMA "
           "loads of sm_90a kernels need (drivers of CUDA 12 and later have "
           "it)";
  if (base % 16)
    return "TMA reads 16-byte aligned buffers; one starts " +
           std::to_string(base % 16) + " bytes past a 16-byte boundary";
  uint64_t dims[3], strides[2];
  unsigned box[3], ones[3] = {1, 1, 1};
  for (int64_t i = 0; i < map.rank; ++i) {
    dims[i] = static_cast<uint64_t>(map.dims[i] ? map.dims[i] : m);
    box[i] = static_cast<unsigned>(map.box[i]);
    if (i > 0)
      strides[i - 1] = static_cast<uint64_t>(map.strides[i - 1]);
  }
  int type = dtype == FFN_DTYPE_BF16  ? kTensorMapBfloat16
             : dtype == FFN_DTYPE_F16 ? kTensorMapFloat16
                                      : kTensorMapFloat32;
  int swizzle = map.swizzle == 128  ? 3
                : map.swizzle == 64 ? 2
                : map.swizzle == 32 ? 1
                                    : 0;
  CUresult r = d.TensorMapEncodeTiled(
      out, type, static_cast<unsigned>(map.rank),
      reinterpret_cast<void *>(base), dims, strides, box, ones,
      /*interleave=*/0, swizzle, kTensorMapL2Promotion128B, /*oobFill=*/0);
  return r ? "cannot encode a TMA tensor map: " + describe(d, r)
           : std::string();
}

std::string DeviceKernel::validate(const ffn_kernel_desc &d,
                                   bool (*inImage)(const void *)) {
  // A field is read only once the memory holding it is known to be mapped:
  // a foreign pointer may lead to fewer bytes than the entry has.
  if (!d.cuda || !inImage(d.cuda))
    return "no CUDA code in a loaded object";
  const ffn_cuda_code &c = *d.cuda;
  if (c.num_launches < 1 || c.num_launches > 64 || c.image_size < 16 ||
      c.image_size > (uint64_t(1) << 30))
    return "a device plan of " + std::to_string(c.num_launches) +
           " launches and a " + std::to_string(c.image_size) + "-byte image";
  const char *image = static_cast<const char *>(c.image);
  if (!inImage(image) || !inImage(image + c.image_size - 1) ||
      !inImage(c.launches) || !inImage(c.launches + c.num_launches - 1))
    return "a device image or launch plan outside any loaded object";
  for (int64_t i = 0; i < c.num_launches; ++i) {
    const ffn_device_launch &l = c.launches[i];
    std::string at = "launch " + std::to_string(i) + ": ";
    size_t nameLength = inImage(l.kernel) ? strnlen(l.kernel, 257) : 0;
    if (nameLength == 0 || nameLength > 256)
      return at + "no kernel name";
    if (l.min_m < 1 || l.max_m < l.min_m || l.rows_per_block < 1 ||
        l.grid_m_scale < 1 || l.grid_m_scale > 1024 || l.grid_rows_extra < 0 ||
        l.grid_rows_extra > (int64_t(1) << 30) || l.grid_y < 1 ||
        l.grid_y > 65535 || l.grid_z < 1 || l.grid_z > 65535 ||
        l.block_threads < 1 || l.block_threads > 1024 || l.shared_bytes < 0 ||
        l.shared_bytes > 256 * 1024 || l.max_blocks < 0 ||
        l.max_blocks > 0x7FFFFFFF)
      return at + "invalid geometry";
    if (l.workspace_per_row < 0 || l.workspace_per_row > d.workspace_per_row)
      return at + "workspace_per_row " + std::to_string(l.workspace_per_row) +
             " outside [0, " + std::to_string(d.workspace_per_row) + "]";
    if (l.num_args < 1 || l.num_args > 32 || !inImage(l.args) ||
        !inImage(l.args + l.num_args - 1))
      return at + "an argument table of " + std::to_string(l.num_args) +
             " outside any loaded object";
    if (l.num_maps < 0 || l.num_maps > kMaxMaps ||
        (l.num_maps > 0 &&
         (!inImage(l.maps) || !inImage(l.maps + l.num_maps - 1))))
      return at + "a tensor-map table of " + std::to_string(l.num_maps) +
             " outside any loaded object";
    auto bufferOk = [&](int64_t kind, int64_t index) {
      return kind == FFN_DEVICE_ARG_INPUT || kind == FFN_DEVICE_ARG_OUTPUT ||
             (kind == FFN_DEVICE_ARG_PARAM && index >= 0 &&
              index < d.num_params) ||
             (kind == FFN_DEVICE_ARG_WORKSPACE && index >= 0 &&
              index < l.workspace_per_row);
    };
    for (int64_t a = 0; a < l.num_args; ++a) {
      int64_t kind = l.args[a].kind, index = l.args[a].index;
      bool ok = kind == FFN_DEVICE_ARG_M || bufferOk(kind, index) ||
                (kind == FFN_DEVICE_ARG_TENSOR_MAP && index >= 0 &&
                 index < l.num_maps) ||
                (kind == FFN_DEVICE_ARG_COUNTERS && index == 0);
      if (!ok)
        return at + "argument " + std::to_string(a) + " is invalid";
    }
    for (int64_t t = 0; t < l.num_maps; ++t) {
      const ffn_tensor_map &map = l.maps[t];
      bool ok = bufferOk(map.source, map.index) && map.rank >= 1 &&
                map.rank <= 3 &&
                (map.swizzle == 0 || map.swizzle == 32 || map.swizzle == 64 ||
                 map.swizzle == 128);
      for (int64_t i = 0; ok && i < map.rank; ++i)
        ok = map.dims[i] >= 0 && map.dims[i] <= (int64_t(1) << 32) &&
             map.box[i] >= 1 && map.box[i] <= 256 &&
             (i == 0 ||
              (map.strides[i - 1] > 0 && map.strides[i - 1] % 16 == 0 &&
               map.strides[i - 1] < (int64_t(1) << 40)));
      if (!ok)
        return at + "tensor map " + std::to_string(t) + " is invalid";
    }
  }
  // Every m >= 1 is covered by some launch: a gap would leave the output
  // unwritten for those m.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t i = 0; i < c.num_launches; ++i)
    ranges.push_back({c.launches[i].min_m, c.launches[i].max_m});
  std::sort(ranges.begin(), ranges.end());
  int64_t next = 1; // the smallest m not yet covered
  for (auto [lo, hi] : ranges) {
    if (lo > next)
      break;
    if (hi == INT64_MAX)
      return "";
    next = std::max(next, hi + 1);
  }
  return "the plan launches nothing for m = " + std::to_string(next);
}

DeviceKernel::~DeviceKernel() {
  // Nothing reached the device: do not open the driver just to close.
  if (!loaded)
    return;
  std::string error;
  const Driver *d = driver(error);
  if (!d)
    return;
  ScopedContext scope(*d);
  // Runs the application left in flight may still read the parameters.
  d->CtxSynchronize();
  for (unsigned long long p : params)
    if (p)
      d->MemFree(p);
  if (keptBuffer)
    d->MemFree(keptBuffer);
  if (module)
    d->ModuleUnload(static_cast<CUmodule>(module));
}

bool DeviceKernel::ensureLoaded(std::string &error) {
  std::lock_guard<std::mutex> lock(loadMutex);
  if (loaded)
    return true;
  const Driver *d = driver(error);
  if (!d)
    return false;
  ScopedContext scope(*d);
  CUmodule mod = nullptr;
  if (CUresult r = d->ModuleLoadData(&mod, desc.cuda->image)) {
    error = std::string("cannot load the device code of kernel '") +
            desc.name + "' (" + desc.target + ") on this GPU (sm_" +
            std::to_string(d->smMajor) + std::to_string(d->smMinor) +
            "): " + describe(*d, r);
    return false;
  }
  std::vector<void *> fns;
  for (int64_t i = 0; i < desc.cuda->num_launches; ++i) {
    const ffn_device_launch &l = desc.cuda->launches[i];
    CUfunction f = nullptr;
    CUresult r = d->ModuleGetFunction(&f, mod, l.kernel);
    // More than 48 KiB of dynamic shared memory is an explicit opt-in.
    if (r == 0 && l.shared_bytes > 48 * 1024)
      r = d->FuncSetAttribute(f, kFuncAttrMaxDynamicShared,
                              static_cast<int>(l.shared_bytes));
    if (r) {
      error = std::string("kernel '") + desc.name + "': entry '" + l.kernel +
              "': " + describe(*d, r);
      d->ModuleUnload(mod);
      return false;
    }
    fns.push_back(f);
  }
  module = mod;
  functions = std::move(fns);
  // sm_90 targets' kernels wait for the grid before them (ABI 14).
  std::string target = desc.target;
  dependent = target == "nvptx-sm90" || target == "nvptx-sm90a";
  params.assign(desc.num_params, 0);
  loaded = true;
  return true;
}

bool DeviceKernel::setParam(int64_t index, const void *packed, size_t bytes,
                            std::string &error) {
  if (!ensureLoaded(error))
    return false;
  const Driver *d = driver(error);
  ScopedContext scope(*d);
  CUdeviceptr p = 0;
  CUresult r = d->MemAlloc(&p, bytes);
  if (r == 0)
    r = d->MemcpyHtoD(p, packed, bytes);
  if (r) {
    if (p)
      d->MemFree(p);
    error = std::string("parameter '") + desc.params[index].name +
            "': cannot copy it to the GPU: " + describe(*d, r);
    return false;
  }
  if (params[index]) {
    // A run on some stream may still be reading the old buffer.
    d->CtxSynchronize();
    d->MemFree(params[index]);
  }
  params[index] = p;
  return true;
}

bool DeviceKernel::run(int64_t m, const void *x, void *y, void *stream,
                       std::string &error, bool reuse) {
  if (!ensureLoaded(error))
    return false;
  const Driver *d = driver(error);
  ScopedContext scope(*d);
  CUstream s = static_cast<CUstream>(stream);
  CUdeviceptr ws = 0;
  // Only this m's launches' regions: a decode bucket's split-K partials are
  // not allocated for a prefill run.
  // grid.x of launch l (in 128 bits: m is bounded only by the caller's
  // memory); INT64_MAX past what a launch can have.
  auto gridXOf = [&](const ffn_device_launch &l) -> int64_t {
    __int128 rows = static_cast<__int128>(m) * l.grid_m_scale +
                    l.grid_rows_extra + l.rows_per_block - 1;
    __int128 blocks = rows / l.rows_per_block;
    return blocks > 0x7FFFFFFF ? INT64_MAX : static_cast<int64_t>(blocks);
  };
  // The launches' tile counters share one region after the rows' (each
  // launch leaves them zero for the next); it is zeroed once per run.
  int64_t perRow = 0, counters = 0;
  for (int64_t i = 0; i < desc.cuda->num_launches; ++i) {
    const ffn_device_launch &l = desc.cuda->launches[i];
    if (m < l.min_m || m > l.max_m)
      continue;
    perRow = std::max(perRow, l.workspace_per_row);
    for (int64_t a = 0; a < l.num_args; ++a)
      if (l.args[a].kind == FFN_DEVICE_ARG_COUNTERS) {
        int64_t gridX = gridXOf(l);
        if (gridX <= 0x7FFFFFFF)
          counters = std::max(counters, gridX * (l.grid_y + 1));
      }
  }
  size_t rowBytes = static_cast<size_t>(m) * static_cast<size_t>(perRow);
  size_t countersAt = (rowBytes + 255) / 256 * 256;
  size_t wsBytes =
      counters ? countersAt + static_cast<size_t>(counters) * 4 : rowBytes;
  // The kept workspace, when this run may take it: held until its launches
  // are enqueued, so two threads' runs on one stream do not interleave
  // their kernels over one buffer.
  std::unique_lock<std::mutex> keptLock(keptMutex, std::defer_lock);
  bool kept = wsBytes && reuse &&
              reinterpret_cast<uintptr_t>(s) != kPerThreadStreamHandle &&
              keptLock.try_lock() && (!keptClaimed || keptStream == s);
  if (kept && keptBytes < wsBytes) {
    // Grown in powers of two (few syncs as m rises); the old buffer may
    // still be read by this stream's runs in flight.
    size_t bytes = 4096;
    while (bytes < wsBytes)
      bytes *= 2;
    if (keptBuffer) {
      d->StreamSynchronize(s);
      d->MemFree(keptBuffer);
      keptBuffer = 0;
      keptBytes = 0;
    }
    if (d->MemAlloc(&keptBuffer, bytes) == 0)
      keptBytes = bytes;
    else
      keptBuffer = 0;
    kept = keptBuffer != 0;
  }
  if (kept) {
    keptClaimed = true;
    keptStream = s;
    ws = keptBuffer;
  } else {
    if (keptLock.owns_lock())
      keptLock.unlock();
    if (wsBytes) {
      if (CUresult r = d->MemAllocAsync(&ws, wsBytes, s)) {
        error = "cannot allocate " + std::to_string(wsBytes) +
                " bytes of GPU workspace: " + describe(*d, r);
        return false;
      }
    }
  }
  if (counters) {
    if (CUresult r =
            d->MemsetD32Async(ws + countersAt, 0, size_t(counters), s)) {
      error =
          "cannot zero the GPU workspace's tile counters: " + describe(*d, r);
      if (!kept)
        d->MemFreeAsync(ws, s);
      return false;
    }
  }
  size_t rowElems = static_cast<size_t>(m) * desc.d_model;
  bool ok = true;
  for (int64_t i = 0; i < desc.cuda->num_launches && ok; ++i) {
    const ffn_device_launch &l = desc.cuda->launches[i];
    if (m < l.min_m || m > l.max_m)
      continue;
    // Each buffer is a rank-1 memref descriptor: five parameters; a tensor
    // map one 128-byte parameter.
    uint64_t slots[32 * 5];
    void *argv[32 * 5];
    alignas(64) unsigned char maps[kMaxMaps][kTensorMapBytes];
    int n = 0;
    auto bufferAddress = [&](int64_t kind, int64_t index) -> CUdeviceptr {
      switch (kind) {
      case FFN_DEVICE_ARG_INPUT:
        return reinterpret_cast<CUdeviceptr>(x);
      case FFN_DEVICE_ARG_OUTPUT:
        return reinterpret_cast<CUdeviceptr>(y);
      case FFN_DEVICE_ARG_PARAM:
        return params[index];
      case FFN_DEVICE_ARG_COUNTERS:
        return ws + countersAt;
      default: // FFN_DEVICE_ARG_WORKSPACE
        return ws + static_cast<uint64_t>(m) * index;
      }
    };
    auto memref = [&](uint64_t ptr, uint64_t size) {
      uint64_t fields[5] = {ptr, ptr, 0, size, 1};
      for (uint64_t f : fields) {
        slots[n] = f;
        argv[n] = &slots[n];
        ++n;
      }
    };
    for (int64_t a = 0; a < l.num_args; ++a) {
      const ffn_device_arg &arg = l.args[a];
      switch (arg.kind) {
      case FFN_DEVICE_ARG_M:
        slots[n] = static_cast<uint64_t>(m);
        argv[n] = &slots[n];
        ++n;
        break;
      case FFN_DEVICE_ARG_TENSOR_MAP: {
        const ffn_tensor_map &map = l.maps[arg.index];
        std::string why = encodeTensorMap(*d, map, desc.dtype,
                                          bufferAddress(map.source, map.index),
                                          m, maps[arg.index]);
        if (!why.empty()) {
          error = std::string("launching '") + l.kernel + "': " + why;
          ok = false;
        }
        argv[n++] = maps[arg.index];
        break;
      }
      default: {
        // A buffer, at the address its tensor maps take too, with its
        // elements (a workspace region's size is not read).
        uint64_t elements = 0;
        if (arg.kind == FFN_DEVICE_ARG_INPUT ||
            arg.kind == FFN_DEVICE_ARG_OUTPUT)
          elements = rowElems;
        else if (arg.kind == FFN_DEVICE_ARG_COUNTERS)
          elements = static_cast<uint64_t>(counters);
        else if (arg.kind == FFN_DEVICE_ARG_PARAM)
          elements =
              static_cast<uint64_t>(desc.params[arg.index].packed_bytes) /
              dtypeBytes(desc.dtype);
        memref(bufferAddress(arg.kind, arg.index), elements);
        break;
      }
      }
    }
    if (!ok)
      break;
    int64_t gridX = gridXOf(l);
    if (gridX > 0x7FFFFFFF) {
      error = "m = " + std::to_string(m) + " needs too many blocks";
      ok = false;
      break;
    }
    int64_t gridY = l.grid_y, gridZ = l.grid_z;
    if (l.max_blocks > 0) {
      // A persistent launch: its blocks walk the grid's tiles themselves.
      int64_t tiles = gridX * gridY * gridZ; // < 2^63: each < 2^31, 2^16
      gridX = std::min(tiles, l.max_blocks);
      gridY = gridZ = 1;
    }
    CUresult r;
    if (dependent && d->LaunchKernelEx) {
      // Programmatic: the blocks may be placed while the grid before them
      // finishes; each waits for it first (kernel_abi.h, ABI 14).
      LaunchAttribute attr{};
      attr.id = kLaunchAttrProgrammaticSerialization;
      attr.value.programmaticStreamSerializationAllowed = 1;
      LaunchConfig config{static_cast<unsigned>(gridX),
                          static_cast<unsigned>(gridY),
                          static_cast<unsigned>(gridZ),
                          static_cast<unsigned>(l.block_threads),
                          1,
                          1,
                          static_cast<unsigned>(l.shared_bytes),
                          s,
                          &attr,
                          1};
      r = d->LaunchKernelEx(&config, static_cast<CUfunction>(functions[i]),
                            argv, nullptr);
    } else {
      r = d->LaunchKernel(
          static_cast<CUfunction>(functions[i]), static_cast<unsigned>(gridX),
          static_cast<unsigned>(gridY), static_cast<unsigned>(gridZ),
          static_cast<unsigned>(l.block_threads), 1, 1,
          static_cast<unsigned>(l.shared_bytes), s, argv, nullptr);
    }
    if (r) {
      error = std::string("launching '") + l.kernel + "': " + describe(*d, r);
      ok = false;
    }
  }
  if (ws && !kept)
    d->MemFreeAsync(ws, s);
  return ok;
}

bool DeviceKernel::runHost(int64_t m, const void *x, void *y,
                           std::string &error) {
  if (!ensureLoaded(error))
    return false;
  const Driver *d = driver(error);
  ScopedContext scope(*d);
  size_t bytes = static_cast<size_t>(m) * desc.d_model * dtypeBytes(desc.dtype);
  CUstream s = nullptr;
  if (CUresult r = d->StreamCreate(&s, kStreamNonBlocking)) {
    error = "cannot create a CUDA stream: " + describe(*d, r);
    return false;
  }
  CUdeviceptr dx = 0, dy = 0;
  CUresult r = d->MemAllocAsync(&dx, bytes, s);
  if (r == 0)
    r = d->MemAllocAsync(&dy, bytes, s);
  if (r == 0)
    r = d->MemcpyHtoDAsync(dx, x, bytes, s);
  bool ok = r == 0;
  if (!ok)
    error = "cannot stage " + std::to_string(bytes) +
            " bytes on the GPU: " + describe(*d, r);
  if (ok)
    ok = run(m, reinterpret_cast<void *>(dx), reinterpret_cast<void *>(dy), s,
             error, /*reuse=*/false);
  if (ok && (r = d->MemcpyDtoHAsync(y, dy, bytes, s))) {
    error = "cannot copy the result back: " + describe(*d, r);
    ok = false;
  }
  if (dx)
    d->MemFreeAsync(dx, s);
  if (dy)
    d->MemFreeAsync(dy, s);
  if ((r = d->StreamSynchronize(s)) && ok) {
    error = "the GPU run failed: " + describe(*d, r);
    ok = false;
  }
  d->StreamDestroy(s);
  return ok;
}
