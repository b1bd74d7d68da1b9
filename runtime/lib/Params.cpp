//===- Params.cpp - setting parameters, run preconditions -----------------===//

#include "Internal.h"

#include <cstring>
#include <new>
#include <shared_mutex>

using namespace ffn_rt;

ffn_status ffn_rt::checkNoOverlap(ffn_context *ctx, const char *caller,
                                  const ffn_kernel_desc *d, int64_t m,
                                  const void *x, const void *y) {
  size_t bytes = static_cast<size_t>(m) * d->d_model * dtypeSize(d->dtype);
  auto xb = reinterpret_cast<uintptr_t>(x);
  auto yb = reinterpret_cast<uintptr_t>(y);
  if (xb < yb + bytes && yb < xb + bytes)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                std::string(caller) + ": y overlaps x; use separate buffers");
  return FFN_OK;
}

ffn_status ffn_rt::checkParamsSet(ffn_kernel *kernel) {
  const ffn_kernel_desc *d = kernel->desc;
  for (int64_t i = 0; i < d->num_params; ++i)
    if (!kernel->paramPointers[i])
      return fail(kernel->ctx, FFN_ERROR_NOT_READY,
                  std::string("kernel '") + d->name + "': parameter '" +
                      d->params[i].name + "' was not set");
  return FFN_OK;
}

extern "C" {

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
  auto packed =
      std::unique_ptr<AlignedBuffer>(new (std::nothrow) AlignedBuffer);
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
      return fail(ctx, FFN_ERROR_DEVICE,
                  "kernel '" + std::string(d->name) + "': " + error);
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

} // extern "C"
