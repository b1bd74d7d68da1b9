//===- Params.cpp - setting parameters, run preconditions -----------------===//

#include "Internal.h"

#include <cstring>
#include <functional>
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

/// The layout argument of a C caller, validated: in C++ merely loading an
/// enum object that holds a value outside the enumerators' range is
/// undefined, so its bytes are read as the int they are.
/// It takes the parameter's address: passing it by value would load it.
static bool readLayout(const ffn_weight_layout *layout, int &value) {
  static_assert(sizeof value == sizeof *layout, "enums are ints");
  std::memcpy(&value, layout, sizeof value);
  return value == FFN_LAYOUT_IN_OUT || value == FFN_LAYOUT_OUT_IN;
}

/// The index of parameter `name`, or -1 after reporting the names it has.
static int64_t findParam(ffn_kernel *kernel, const char *name) {
  const ffn_kernel_desc *d = kernel->desc;
  for (int64_t i = 0; i < d->num_params; ++i)
    if (std::strcmp(d->params[i].name, name) == 0)
      return i;
  std::string known;
  for (int64_t i = 0; i < d->num_params; ++i)
    known += (i ? ", " : "") + std::string(d->params[i].name);
  fail(kernel->ctx, FFN_ERROR_NOT_FOUND,
       std::string("kernel '") + d->name + "' has no parameter '" + name +
           "' (parameters: " + known + ")");
  return -1;
}

/// `rows` x `cols` elements of `esize` bytes, transposed.
static void transpose(const void *data, size_t rows, size_t cols, size_t esize,
                      std::vector<unsigned char> &out) {
  const auto *in = static_cast<const unsigned char *>(data);
  out.resize(rows * cols * esize);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c)
      std::memcpy(&out[(c * rows + r) * esize], &in[(r * cols + c) * esize],
                  esize);
}

/// Packs parameter `index` into a new buffer with `pack` and swaps it in
/// (uploads it, for a device kernel).
static ffn_status installPacked(ffn_kernel *kernel, int64_t index,
                                const std::function<void(void *dst)> &pack) {
  ffn_context *ctx = kernel->ctx;
  const ffn_kernel_desc *d = kernel->desc;
  const ffn_param_desc &p = d->params[index];
  auto packed =
      std::unique_ptr<AlignedBuffer>(new (std::nothrow) AlignedBuffer);
  if (!packed || !packed->reserve(static_cast<size_t>(p.packed_bytes)))
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                std::string("out of memory for parameter '") + p.name + "'");
  pack(packed->data());
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
  int layoutValue;
  if (!readLayout(&layout, layoutValue))
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_set_param: unknown layout " +
                    std::to_string(layoutValue));
  int64_t index = findParam(kernel, name);
  if (index < 0)
    return FFN_ERROR_NOT_FOUND;
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
  try {
    if (p.rank == 2 && layoutValue == FFN_LAYOUT_OUT_IN) {
      // [out, in] -> [in, out].
      transpose(data, static_cast<size_t>(p.shape[1]),
                static_cast<size_t>(p.shape[0]), esize, transposed);
      src = transposed.data();
    }
  } catch (const std::bad_alloc &) {
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                std::string("out of memory for parameter '") + name + "'");
  }
  return installPacked(kernel, index,
                       [&](void *dst) { d->pack(index, src, dst); });
}

ffn_status ffn_kernel_set_quantized_param(ffn_kernel *kernel, const char *name,
                                          const void *q, size_t qBytes,
                                          const void *scales, size_t scaleBytes,
                                          const void *zeroPoints,
                                          size_t zeroPointBytes,
                                          ffn_weight_layout layout) {
  if (!kernel)
    return FFN_ERROR_INVALID_ARGUMENT;
  ffn_context *ctx = kernel->ctx;
  const ffn_kernel_desc *d = kernel->desc;
  const char *caller = "ffn_kernel_set_quantized_param";
  auto invalid = [&](const std::string &why) {
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                std::string(caller) + ": " + why);
  };
  if (!name || !q || !scales)
    return invalid("name, q and scales must not be null");
  int layoutValue;
  if (!readLayout(&layout, layoutValue))
    return invalid("unknown layout " + std::to_string(layoutValue));
  if (d->weight_quant == FFN_WEIGHTS_DTYPE || !d->pack_quantized)
    return invalid(std::string("kernel '") + d->name +
                   "' has unquantized weights; set them with "
                   "ffn_kernel_set_param");
  int64_t index = findParam(kernel, name);
  if (index < 0)
    return FFN_ERROR_NOT_FOUND;
  const ffn_param_desc &p = d->params[index];
  if (p.rank != 2)
    return invalid(std::string("parameter '") + name +
                   "' is not a quantized weight matrix");
  bool zp = d->weight_quant == FFN_WEIGHTS_INT4_ZP;
  if (zp != (zeroPoints != nullptr))
    return invalid(std::string("kernel '") + d->name + "' " +
                   (zp ? "has int4 zero points: zero_points must be given"
                       : "has no zero points: zero_points must be NULL"));
  size_t in = static_cast<size_t>(p.shape[0]),
         out = static_cast<size_t>(p.shape[1]);
  size_t groups = (in + d->quant_group - 1) / d->quant_group;
  size_t esize = dtypeSize(d->dtype);
  auto sizeError = [&](const char *what, size_t want, size_t got) {
    return invalid(std::string(what) + " of parameter '" + name + "' need " +
                   std::to_string(want) + " bytes, got " + std::to_string(got));
  };
  if (qBytes != in * out)
    return sizeError("the integers", in * out, qBytes);
  if (scaleBytes != groups * out * esize)
    return sizeError("the scales", groups * out * esize, scaleBytes);
  if (zp && zeroPointBytes != groups * out)
    return sizeError("the zero points", groups * out, zeroPointBytes);
  // Values the format cannot hold would be truncated by the packing.
  int lo = -128, hi = 127;
  if (d->weight_quant == FFN_WEIGHTS_INT4)
    lo = -8, hi = 7;
  if (zp)
    lo = 0, hi = 15;
  auto checkRange = [&](const void *data, size_t n, bool isSigned, int min,
                        int max, const char *what) -> bool {
    const auto *bytes = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < n; ++i) {
      int v = isSigned ? static_cast<signed char>(bytes[i]) : bytes[i];
      if (v < min || v > max) {
        invalid(std::string(what) + " " + std::to_string(i) +
                " of parameter '" + name + "' is " + std::to_string(v) +
                ", outside [" + std::to_string(min) + ", " +
                std::to_string(max) + "]");
        return false;
      }
    }
    return true;
  };
  if (!checkRange(q, qBytes, !zp, lo, hi, "integer") ||
      (zp &&
       !checkRange(zeroPoints, zeroPointBytes, false, 0, 15, "zero point")))
    return FFN_ERROR_INVALID_ARGUMENT;
  std::vector<unsigned char> qT, sT, zT;
  const void *qSrc = q, *sSrc = scales, *zSrc = zeroPoints;
  try {
    if (layoutValue == FFN_LAYOUT_OUT_IN) {
      // [out, in] -> [in, out]; [out, groups] -> [groups, out].
      transpose(q, out, in, 1, qT);
      transpose(scales, out, groups, esize, sT);
      qSrc = qT.data();
      sSrc = sT.data();
      if (zp) {
        transpose(zeroPoints, out, groups, 1, zT);
        zSrc = zT.data();
      }
    }
  } catch (const std::bad_alloc &) {
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                std::string("out of memory for parameter '") + name + "'");
  }
  return installPacked(kernel, index, [&](void *dst) {
    d->pack_quantized(index, qSrc, sSrc, zSrc, dst);
  });
}

} // extern "C"
