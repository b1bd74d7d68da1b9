//===- RuntimeFuzzer.cpp - libFuzzer entry point for the runtime ----------===//
//
// Drives the runtime's C API (ffn/runtime.h) with input-chosen descriptors
// and call sequences, under ASan and UBSan (runtime sources compiled in):
//  - a copy of a real kernel descriptor (api.ffn, linked in), sometimes made
//    a mixture of experts (stacked parameters, a router) or a grouped FFN
//    (each block's parameters stacked), with fields and
//    pointers replaced by input values goes through ffn_kernel_create: it
//    must be refused or accepted, never crash. Only unmodified descriptors
//    are run: a descriptor that lies about its own code cannot be caught;
//  - a sequence of set_param / run / set_threads / destroy calls with
//    input-chosen names, sizes, layouts, m, null pointers and orders on real
//    kernels: each returns a status, the outputs are finite;
//  - the rest of the input as a safetensors file (in a memfd): opened,
//    every tensor it lists read in full (ASan catches a range outside the
//    mapping), and a real kernel's parameters set from input-chosen tensors
//    and layout: each call returns a status.
//
//===----------------------------------------------------------------------===//

#include "fuzz_kernels.h"

#include <ffn/runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace {

class Input {
public:
  Input(const uint8_t *data, size_t size) : data(data), size(size) {}
  bool empty() const { return pos >= size; }
  uint8_t byte() { return pos < size ? data[pos++] : 0; }
  int64_t int64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= uint64_t(byte()) << (8 * i);
    return static_cast<int64_t>(v);
  }
  /// Mostly small and edge values, sometimes anything.
  int64_t value() {
    static const int64_t edges[] = {0, 1, -1, 2, 8, 16, 64, 1 << 20,
                                    INT64_MAX, INT64_MIN, 4, 5, 99};
    uint8_t b = byte();
    return b < 200 ? edges[b % 13] : int64();
  }

private:
  const uint8_t *data;
  size_t size, pos = 0;
};

const void *pointer(Input &in, const void *valid) {
  static const char text[] = "not a kernel";
  switch (in.byte() % 5) {
  case 0:
    return nullptr;
  case 1:
    return reinterpret_cast<const void *>(uintptr_t(0x10));
  case 2:
    return text; // in the image, but not what the field wants
  default:
    return valid;
  }
}

/// Makes `d` (a copy of a dense kernel's descriptor, its parameter table
/// `params`, room for one more) a consistent mixture of experts: input-chosen
/// counts, the weights and biases stacked, a w_router appended. The later
/// mutations then break one field at a time.
void makeMixture(Input &in, ffn_kernel_desc &d, ffn_param_desc *params) {
  d.kind = FFN_KIND_MOE;
  d.experts = 1 + in.byte() % 8;
  d.shared_experts = in.byte() % 3;
  d.top_k = 1 + in.byte() % d.experts;
  d.router = in.byte() & 1;
  d.router_normalize = in.byte() & 1;
  for (int64_t i = 0; i < d.num_params; ++i)
    if (std::strncmp(params[i].name, "norm_", 5) != 0)
      params[i].experts = d.experts + d.shared_experts;
  static const char routerName[] = "w_router";
  int64_t routerBytes = 4 * d.d_model * d.experts;
  params[d.num_params++] = {
      routerName, 2, {d.d_model, d.experts}, routerBytes, 0};
}

/// Makes `d` (a copy of a dense kernel's descriptor, its parameter table
/// `params`) a consistent grouped FFN: an input-chosen block count that
/// divides both api.ffn kernels' widths, every matrix and bias one block's
/// share, stacked, the norm's vectors left whole. The later mutations then
/// break one field at a time.
void makeGrouped(Input &in, ffn_kernel_desc &d, ffn_param_desc *params) {
  d.kind = FFN_KIND_GROUPED;
  d.groups = int64_t(2) << (in.byte() % 3); // 2, 4 or 8
  for (int64_t i = 0; i < d.num_params; ++i) {
    ffn_param_desc &p = params[i];
    if (std::strncmp(p.name, "norm_", 5) == 0)
      continue;
    // Every matrix dimension and bias length is d_model or d_ff.
    p.shape[0] /= d.groups;
    p.shape[1] /= d.groups;
    p.packed_bytes = std::max<int64_t>(1, p.packed_bytes / d.groups);
    p.experts = d.groups;
  }
}

void fuzzDescriptor(Input &in, ffn_context *ctx) {
  ffn_kernel_desc d = in.byte() & 1 ? ffn_kernel_small : ffn_kernel_wide;
  // As many as a descriptor may have: the dense kernels' and a router.
  static ffn_param_desc params[9];
  std::memset(params, 0, sizeof params); // nothing left from the last input
  std::memcpy(params, d.params, sizeof(ffn_param_desc) * d.num_params);
  d.params = params;
  static ffn_cpu_code code;
  code = *d.cpu;
  d.cpu = &code;
  // A quarter mixtures (as before grouped FFNs, so the corpus keeps its
  // meaning), an eighth grouped FFNs.
  uint8_t kind = in.byte();
  if (kind % 4 == 0)
    makeMixture(in, d, params);
  else if (kind % 8 == 1)
    makeGrouped(in, d, params);
  int64_t *fields[] = {reinterpret_cast<int64_t *>(&d.abi_version),
                       reinterpret_cast<int64_t *>(&d.struct_size),
                       &d.device,
                       &d.d_model,
                       &d.d_ff,
                       &d.dtype,
                       &d.activation,
                       &d.gated,
                       &d.num_params,
                       &d.workspace_per_row,
                       &code.num_phases,
                       &d.kind,
                       &d.experts,
                       &d.shared_experts,
                       &d.top_k,
                       &d.router,
                       &d.router_normalize,
                       &d.groups};
  constexpr uint8_t numFields = sizeof fields / sizeof *fields;
  for (int n = in.byte() % 4; n > 0; --n) {
    uint8_t which = in.byte() % (numFields + 5);
    if (which < numFields) {
      *fields[which] = in.value();
    } else if (which == numFields) {
      ffn_param_desc &p = params[in.byte() % 9];
      switch (in.byte() % 4) {
      case 0:
        p.packed_bytes = in.value();
        break;
      case 1:
        p.experts = in.value();
        break;
      default:
        p.shape[in.byte() & 1] = in.value();
      }
    } else if (which == numFields + 1) {
      d.name = static_cast<const char *>(pointer(in, d.name));
    } else if (which == numFields + 2) {
      d.params = static_cast<const ffn_param_desc *>(pointer(in, params));
    } else if (which == numFields + 3) {
      d.strategy = static_cast<const char *>(pointer(in, d.strategy));
    } else if (in.byte() & 1) {
      code.run = reinterpret_cast<ffn_cpu_entry>(
          const_cast<void *>(pointer(in, reinterpret_cast<void *>(code.run))));
    } else {
      d.cpu = static_cast<const ffn_cpu_code *>(pointer(in, &code));
    }
  }
  ffn_kernel *k = nullptr;
  if (ffn_kernel_create(ctx, &d, &k) == FFN_OK)
    ffn_kernel_destroy(k); // accepted: never run (see above)
}

void fuzzCalls(Input &in, ffn_context *ctx) {
  ffn_kernel *kernels[2] = {nullptr, nullptr};
  for (ffn_kernel *&k : kernels)
    ffn_kernel_create(ctx, in.byte() & 1 ? &ffn_kernel_small : &ffn_kernel_wide,
                      &k);
  bool contextAlive = true;
  std::vector<float> buffer;
  for (int step = 0; step < 24 && !in.empty(); ++step) {
    ffn_kernel *k = kernels[in.byte() & 1];
    if (!k)
      continue;
    const ffn_kernel_desc &d = *ffn_kernel_descriptor(k);
    switch (in.byte() % 6) {
    case 0:
    case 1: { // set_param
      int64_t i = in.byte() % (d.num_params + 1);
      const char *name = i < d.num_params ? d.params[i].name : "w_nope";
      size_t n = 4;
      if (i < d.num_params) {
        const ffn_param_desc &p = d.params[i];
        n = size_t(p.shape[0]) * (p.rank == 2 ? size_t(p.shape[1]) : 1) *
            size_t(p.experts > 0 ? p.experts : 1);
      }
      buffer.assign(n + 1, 0.03f * float(in.byte()) - 3.0f);
      size_t bytes = n * 4 - (in.byte() % 8 == 0 ? 4 : 0);
      ffn_kernel_set_param(k, in.byte() % 16 ? name : nullptr, buffer.data(),
                           bytes, static_cast<ffn_weight_layout>(in.byte() % 3));
      break;
    }
    case 2:
    case 3: { // run with buffers sized for m
      int64_t m = int64_t(in.byte() % 70) - 3;
      size_t n = size_t(m > 0 ? m : 1) * d.d_model;
      std::vector<float> x(n, 0.5f), y(n, 0.0f);
      uint8_t how = in.byte() % 8;
      ffn_status s = ffn_kernel_run(k, m, how == 0 ? nullptr : x.data(),
                                    how == 1 ? x.data() : y.data());
      if (s == FFN_OK)
        for (float v : y)
          if (!std::isfinite(v))
            std::abort();
      break;
    }
    case 4:
      if (contextAlive)
        ffn_context_set_threads(ctx, int(in.byte() % 6) - 1);
      break;
    default: { // destroy something
      uint8_t which = in.byte() % 3;
      if (which < 2 && kernels[which]) {
        ffn_kernel_destroy(kernels[which]);
        kernels[which] = nullptr;
      } else if (which == 2 && contextAlive) {
        ffn_context_destroy(ctx); // kernels keep it alive
        contextAlive = false;
      }
    }
    }
  }
  for (ffn_kernel *k : kernels)
    ffn_kernel_destroy(k);
  if (contextAlive)
    ffn_context_destroy(ctx);
}

void fuzzSafetensors(Input &in, ffn_context *ctx, const uint8_t *rest,
                     size_t restSize) {
  int fd = memfd_create("safetensors", MFD_CLOEXEC);
  if (fd < 0)
    return;
  if (restSize && write(fd, rest, restSize) != ssize_t(restSize)) {
    close(fd);
    return;
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  ffn_safetensors *file = nullptr;
  if (ffn_safetensors_open(ctx, path.c_str(), &file) == FFN_OK) {
    std::vector<const char *> names;
    int64_t n = ffn_safetensors_count(file);
    for (int64_t i = 0; i < n; ++i) {
      ffn_tensor_info t;
      if (ffn_safetensors_tensor_at(file, i, &t) != FFN_OK)
        std::abort(); // every listed index is valid
      // Every byte read (kept by the volatile sink): ASan checks the range.
      static volatile unsigned sink;
      for (size_t b = 0; b < t.bytes; ++b)
        sink = sink + static_cast<const unsigned char *>(t.data)[b];
      if (t.rank < 0 || t.rank > 8)
        std::abort();
      names.push_back(t.name);
      ffn_tensor_info again;
      if (ffn_safetensors_tensor(file, t.name, &again) != FFN_OK)
        std::abort(); // a listed name is found
    }
    ffn_kernel *k = nullptr;
    if (ffn_kernel_create(ctx, &ffn_kernel_small, &k) == FFN_OK) {
      const ffn_kernel_desc &d = *ffn_kernel_descriptor(k);
      std::vector<const char *> chosen(size_t(d.num_params), nullptr);
      for (const char *&c : chosen)
        if (!names.empty() && in.byte() & 1)
          c = names[in.byte() % names.size()];
      ffn_kernel_set_params_safetensors(
          k, file, in.byte() & 1 ? chosen.data() : nullptr,
          static_cast<ffn_weight_layout>(in.byte() % 3));
      ffn_kernel_destroy(k);
    }
    ffn_safetensors_close(file);
  }
  close(fd);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Input in(data, size);
  ffn_context *ctx = nullptr;
  if (ffn_context_create(&ctx) != FFN_OK)
    return 0;
  uint8_t mode = in.byte();
  if (mode & 1) {
    fuzzDescriptor(in, ctx);
    ffn_context_destroy(ctx);
  } else if (mode & 2) {
    // Four bytes of choices, then the file.
    size_t skip = std::min<size_t>(size, 5);
    Input choices(data + 1, skip - 1);
    fuzzSafetensors(choices, ctx, data + skip, size - skip);
    ffn_context_destroy(ctx);
  } else {
    fuzzCalls(in, ctx);
  }
  return 0;
}
