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

/// `rows` x `cols` elements of `esize` bytes, transposed into `out` (cols x
/// rows, sized by the caller: the per-expert loops reuse one buffer and
/// allocate nothing while they pack).
static void transpose(const void *data, size_t rows, size_t cols, size_t esize,
                      unsigned char *out) {
  const auto *in = static_cast<const unsigned char *>(data);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c)
      std::memcpy(&out[(c * rows + r) * esize], &in[(r * cols + c) * esize],
                  esize);
}

/// What a stacked parameter's tensors are, in messages: a grouped FFN's
/// blocks or a mixture's experts.
static const char *stackedTensors(const ffn_kernel_desc *d) {
  return d->kind == FFN_KIND_GROUPED ? "groups" : "experts";
}
static const char *stackedTensor(const ffn_kernel_desc *d) {
  return d->kind == FFN_KIND_GROUPED ? "block" : "expert";
}

/// "4 experts x " (or "4 groups x ") before one stacked tensor's size, else
/// "".
static std::string stackPrefix(const ffn_kernel_desc *d,
                               const ffn_param_desc &p) {
  if (p.experts <= 0)
    return "";
  return std::to_string(p.experts) + " " + stackedTensors(d) + " x ";
}

/// " (4 experts x 96)" after a stacked parameter's byte count, else "".
static std::string perExpert(const ffn_kernel_desc *d, const ffn_param_desc &p,
                             size_t each) {
  if (p.experts <= 0)
    return "";
  return " (" + stackPrefix(d, p) + std::to_string(each) + ")";
}

/// Packs parameter `index` into a new buffer, `packOne(e, dst)` writing
/// expert e's tensor (e = 0: the one tensor of an unstacked parameter) at
/// its place in the buffer, and swaps it in (uploads it, for a device
/// kernel).
static ffn_status
installPacked(ffn_kernel *kernel, int64_t index,
              const std::function<void(int64_t expert, void *dst)> &packOne) {
  ffn_context *ctx = kernel->ctx;
  const ffn_kernel_desc *d = kernel->desc;
  const ffn_param_desc &p = d->params[index];
  size_t stride = packedStride(p), total = packedSize(p);
  auto packed =
      std::unique_ptr<AlignedBuffer>(new (std::nothrow) AlignedBuffer);
  if (!packed || !packed->reserve(total))
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                std::string("out of memory for parameter '") + p.name + "'");
  auto *base = static_cast<unsigned char *>(packed->data());
  size_t used = static_cast<size_t>(p.packed_bytes);
  for (int64_t e = 0; e < paramTensors(p); ++e) {
    unsigned char *dst = base + static_cast<size_t>(e) * stride;
    packOne(e, dst);
    // No kernel reads the padding before the next expert; zeroed, the
    // packed buffer's bytes do not depend on the heap's.
    std::memset(dst + used, 0, stride - used);
  }
  if (kernel->device) {
    // The packed parameter lives in device memory; the host copy goes.
    std::unique_lock<WriterFirstLock> lock(kernel->paramsMutex);
    std::string error;
    if (!kernel->device->setParam(index, packed->data(), total, error))
      return fail(ctx, FFN_ERROR_DEVICE,
                  "kernel '" + std::string(d->name) + "': " + error);
    kernel->paramPointers[index] = kernel; // set (a marker, not a pointer)
    return FFN_OK;
  }
  // Swap it in once no run is using the old one (runs hold the lock shared).
  std::shared_ptr<AlignedBuffer> old;
  {
    std::unique_lock<WriterFirstLock> lock(kernel->paramsMutex);
    old = std::move(kernel->params[index]);
    kernel->params[index] = std::move(packed);
    kernel->paramPointers[index] = kernel->params[index]->data();
  }
  return FFN_OK; // the old buffer, unless another kernel shares it, goes here
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
  // One expert's tensor (or the one tensor), and all of them: the
  // descriptor's limits keep these products at most 2^58.
  size_t rows = static_cast<size_t>(p.shape[0]),
         cols = static_cast<size_t>(p.rank == 2 ? p.shape[1] : 1);
  size_t elements = rows * cols;
  size_t esize = dtypeSize(d->dtype);
  size_t each = elements * esize;
  size_t want = static_cast<size_t>(paramTensors(p)) * each;
  if (bytes != want)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                std::string("parameter '") + name + "' of kernel '" + d->name +
                    "' needs " + std::to_string(want) + " bytes (" +
                    stackPrefix(d, p) + std::to_string(elements) +
                    " elements of " + std::to_string(esize) + " bytes), got " +
                    std::to_string(bytes));
  // Bring each tensor to the logical [in, out] layout, then let the
  // kernel's own pack function put it into the blocked layout its loops
  // read. A stacked [E, out, in] buffer is transposed one expert at a time
  // through one expert-sized buffer: a copy of the whole stack would double
  // the memory a large mixture needs while it loads.
  bool outIn = p.rank == 2 && layoutValue == FFN_LAYOUT_OUT_IN;
  std::vector<unsigned char> transposed;
  try {
    if (outIn)
      transposed.resize(each);
  } catch (const std::bad_alloc &) {
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                std::string("out of memory for parameter '") + name + "'");
  }
  const auto *all = static_cast<const unsigned char *>(data);
  return installPacked(kernel, index, [&](int64_t e, void *dst) {
    const unsigned char *src = all + static_cast<size_t>(e) * each;
    if (outIn) {
      // [out, in] -> [in, out].
      transpose(src, cols, rows, esize, transposed.data());
      src = transposed.data();
    }
    d->pack(index, src, dst);
  });
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
  // The router's logits come from a plain matrix in the dtype (kernel_abi.h):
  // pack_quantized would leave it unpacked.
  if (p.rank != 2 ||
      (d->kind == FFN_KIND_MOE && std::strcmp(p.name, "w_router") == 0))
    return invalid(std::string("parameter '") + name +
                   "' is not a quantized weight matrix" +
                   (p.rank == 2 ? "; set the router's weights with "
                                  "ffn_kernel_set_param"
                                : ""));
  bool zp = d->weight_quant == FFN_WEIGHTS_INT4_ZP;
  if (zp != (zeroPoints != nullptr))
    return invalid(std::string("kernel '") + d->name + "' " +
                   (zp ? "has int4 zero points: zero_points must be given"
                       : "has no zero points: zero_points must be NULL"));
  // One expert's blocks (or the one matrix's), then all of them stacked,
  // [E, ...] of the same per-expert layout.
  size_t in = static_cast<size_t>(p.shape[0]),
         out = static_cast<size_t>(p.shape[1]);
  size_t groups = (in + d->quant_group - 1) / d->quant_group;
  size_t esize = dtypeSize(d->dtype);
  size_t tensors = static_cast<size_t>(paramTensors(p));
  size_t qEach = in * out, sEach = groups * out * esize, zEach = groups * out;
  auto sizeError = [&](const char *what, size_t each, size_t got) {
    return invalid(std::string(what) + " of parameter '" + name + "' need " +
                   std::to_string(tensors * each) + " bytes" +
                   perExpert(d, p, each) + ", got " + std::to_string(got));
  };
  if (qBytes != tensors * qEach)
    return sizeError("the integers", qEach, qBytes);
  if (scaleBytes != tensors * sEach)
    return sizeError("the scales", sEach, scaleBytes);
  if (zp && zeroPointBytes != tensors * zEach)
    return sizeError("the zero points", zEach, zeroPointBytes);
  // Values the format cannot hold would be truncated by the packing.
  int lo = -128, hi = 127;
  if (d->weight_quant == FFN_WEIGHTS_INT4)
    lo = -8, hi = 7;
  if (zp)
    lo = 0, hi = 15;
  // Checks every expert's block of `each` bytes; a value out of range is
  // named by its index in its expert's block.
  auto checkRange = [&](const void *data, size_t each, bool isSigned, int min,
                        int max, const char *what) -> bool {
    const auto *bytes = static_cast<const unsigned char *>(data);
    for (size_t e = 0; e < tensors; ++e)
      for (size_t i = 0; i < each; ++i) {
        unsigned char b = bytes[e * each + i];
        int v = isSigned ? static_cast<signed char>(b) : b;
        if (v >= min && v <= max)
          continue;
        invalid(std::string(what) + " " + std::to_string(i) +
                (p.experts > 0 ? std::string(" of ") + stackedTensor(d) + " " +
                                     std::to_string(e)
                               : std::string()) +
                " of parameter '" + name + "' is " + std::to_string(v) +
                ", outside [" + std::to_string(min) + ", " +
                std::to_string(max) + "]");
        return false;
      }
    return true;
  };
  if (!checkRange(q, qEach, !zp, lo, hi, "integer") ||
      (zp && !checkRange(zeroPoints, zEach, false, 0, 15, "zero point")))
    return FFN_ERROR_INVALID_ARGUMENT;
  // [out, in] -> [in, out] and [out, groups] -> [groups, out], one expert at
  // a time through expert-sized buffers (as in ffn_kernel_set_param).
  bool outIn = layoutValue == FFN_LAYOUT_OUT_IN;
  std::vector<unsigned char> qT, sT, zT;
  try {
    if (outIn) {
      qT.resize(qEach);
      sT.resize(sEach);
      if (zp)
        zT.resize(zEach);
    }
  } catch (const std::bad_alloc &) {
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                std::string("out of memory for parameter '") + name + "'");
  }
  const auto *qAll = static_cast<const unsigned char *>(q);
  const auto *sAll = static_cast<const unsigned char *>(scales);
  const auto *zAll = static_cast<const unsigned char *>(zeroPoints);
  return installPacked(kernel, index, [&](int64_t expert, void *dst) {
    size_t e = static_cast<size_t>(expert);
    const unsigned char *qSrc = qAll + e * qEach, *sSrc = sAll + e * sEach;
    const unsigned char *zSrc = zp ? zAll + e * zEach : nullptr;
    if (outIn) {
      transpose(qSrc, out, in, 1, qT.data());
      transpose(sSrc, out, groups, esize, sT.data());
      qSrc = qT.data();
      sSrc = sT.data();
      if (zp) {
        transpose(zSrc, out, groups, 1, zT.data());
        zSrc = zT.data();
      }
    }
    d->pack_quantized(index, qSrc, sSrc, zSrc, dst);
  });
}

ffn_status ffn_kernel_share_params(ffn_kernel *kernel,
                                   const ffn_kernel *owner) {
  if (!kernel)
    return FFN_ERROR_INVALID_ARGUMENT;
  ffn_context *ctx = kernel->ctx;
  auto invalid = [&](const std::string &message) {
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_kernel_share_params: " + message);
  };
  if (!owner)
    return invalid("owner must not be null");
  if (owner == kernel)
    return invalid("a kernel cannot share its own parameters");
  const ffn_kernel_desc *d = kernel->desc, *od = owner->desc;
  std::string pair = "kernel '" + std::string(d->name) + "' and kernel '" +
                     std::string(od->name) + "'";
  // Device parameters live in each kernel's own device allocations.
  if (kernel->device || owner->device)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                "ffn_kernel_share_params: " + pair +
                    ": sharing packed parameters is for CPU kernels");
  // The same packed bytes: the same parameters, packed the same way.
  if (std::strcmp(d->pack_signature, od->pack_signature) != 0 ||
      d->num_params != od->num_params)
    return invalid(pair + " pack their parameters differently (" +
                   d->pack_signature + " vs " + od->pack_signature + ")");
  for (int64_t i = 0; i < d->num_params; ++i)
    if (std::strcmp(d->params[i].name, od->params[i].name) != 0 ||
        d->params[i].packed_bytes != od->params[i].packed_bytes ||
        d->params[i].experts != od->params[i].experts)
      return invalid(pair + " differ in parameter " + std::to_string(i) +
                     " ('" + d->params[i].name + "')");
  // The owner's buffers as they are now, taken under its lock and then
  // installed under ours: never both locks at once, so two kernels sharing
  // in opposite directions cannot deadlock.
  std::vector<std::shared_ptr<AlignedBuffer>> buffers;
  {
    auto &ownerLock = const_cast<WriterFirstLock &>(owner->paramsMutex);
    std::shared_lock<WriterFirstLock> lock(ownerLock);
    for (int64_t i = 0; i < od->num_params; ++i)
      if (!owner->params[i])
        return invalid("parameter '" + std::string(od->params[i].name) +
                       "' of kernel '" + od->name +
                       "' is not set: set the owner's parameters first");
    buffers = owner->params;
  }
  std::vector<std::shared_ptr<AlignedBuffer>> old;
  {
    std::unique_lock<WriterFirstLock> lock(kernel->paramsMutex);
    old.swap(kernel->params);
    kernel->params = std::move(buffers);
    for (int64_t i = 0; i < d->num_params; ++i)
      kernel->paramPointers[i] = kernel->params[i]->data();
  }
  return FFN_OK; // the kernel's own buffers, if any, go here
}

const void *ffn_kernel_packed_param(const ffn_kernel *kernel,
                                    const char *name) {
  if (!kernel || !name || kernel->device)
    return nullptr;
  const ffn_kernel_desc *d = kernel->desc;
  auto &lockRef = const_cast<WriterFirstLock &>(kernel->paramsMutex);
  std::shared_lock<WriterFirstLock> lock(lockRef);
  for (int64_t i = 0; i < d->num_params; ++i)
    if (std::strcmp(d->params[i].name, name) == 0)
      return kernel->paramPointers[i];
  return nullptr;
}

} // extern "C"
