//===- KernelLoading.cpp - descriptors and kernel libraries ---------------===//
//
// Nothing behind a descriptor is trusted before it is checked: versions and
// sizes, every pointer inside a loaded object, every dimension within
// limits, a library file whole before dlopen maps it.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"
#include "cpu/CpuSupport.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

using namespace ffn_rt;

static_assert(sizeof(ffn_kernel_desc) == 33 * 8,
              "ffn_kernel_desc must have thirty-three 8-byte fields");
static_assert(sizeof(ffn_cpu_code) == 4 * 8 && sizeof(ffn_cuda_code) == 4 * 8,
              "the code entries must have four 8-byte fields");
static_assert(sizeof(ffn_param_desc) == 6 * 8,
              "ffn_param_desc must have six 8-byte fields");

namespace {

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
/// Routed plus shared experts, or a grouped FFN's blocks: a stacked
/// parameter's bytes, given (at most kMaxExperts x kMaxDim^2 elements of 4
/// bytes, 2^58) or packed, and ffn_kernel_run's per-row bound stay far from
/// overflow.
constexpr int64_t kMaxExperts = int64_t(1) << 16;

/// "kind 0 (ffn)", for messages about fields a kind must leave 0.
std::string kindName(int64_t kind) {
  const char *name = kind == FFN_KIND_FFN   ? "ffn"
                     : kind == FFN_KIND_MOE ? "moe"
                                            : "grouped";
  return "kind " + std::to_string(kind) + " (" + name + ")";
}

bool isNormParam(const ffn_param_desc &p) {
  return std::strcmp(p.name, "norm_scale") == 0 ||
         std::strcmp(p.name, "norm_shift") == 0;
}

/// The fields that stack parameters (a mixture's experts, a grouped FFN's
/// blocks) of a descriptor whose kind, dimensions and parameter table have
/// been checked: "" or what is wrong. The runtime sizes, transposes and
/// packs a stacked parameter by its count alone, so each count must be the
/// one the kernel reads.
std::string checkStacking(const ffn_kernel_desc *d) {
  bool moe = d->kind == FFN_KIND_MOE, grouped = d->kind == FFN_KIND_GROUPED;
  if (!moe) {
    if (d->experts || d->shared_experts || d->top_k || d->router ||
        d->router_normalize)
      return "experts " + std::to_string(d->experts) + ", shared_experts " +
             std::to_string(d->shared_experts) + ", top_k " +
             std::to_string(d->top_k) + ", router " +
             std::to_string(d->router) + ", router_normalize " +
             std::to_string(d->router_normalize) + " in a kernel of " +
             kindName(d->kind) + ", where they must be 0";
  } else {
    if (d->experts < 1 || d->experts > kMaxExperts)
      return "experts " + std::to_string(d->experts) +
             " (a mixture of experts has 1 to " + std::to_string(kMaxExperts) +
             ")";
    if (d->shared_experts < 0 || d->shared_experts > kMaxExperts - d->experts)
      return "shared_experts " + std::to_string(d->shared_experts) +
             " beside " + std::to_string(d->experts) + " experts (at most " +
             std::to_string(kMaxExperts) + " in all)";
    if (d->top_k < 1 || d->top_k > d->experts)
      return "top_k " + std::to_string(d->top_k) + " for " +
             std::to_string(d->experts) + " experts (1 to experts)";
    if (d->router_normalize != 0 && d->router_normalize != 1)
      return "router_normalize " + std::to_string(d->router_normalize) +
             " (0 or 1)";
  }
  if (!grouped) {
    if (d->groups != 0)
      return "groups " + std::to_string(d->groups) + " in a kernel of " +
             kindName(d->kind) + ", where it must be 0";
  } else {
    // One block would be a dense FFN, which kind 0 describes.
    if (d->groups < 2 || d->groups > kMaxExperts)
      return "groups " + std::to_string(d->groups) +
             " (a grouped FFN has 2 to " + std::to_string(kMaxExperts) +
             " blocks)";
    // Every block has the same widths, which the stacked shapes give.
    if (d->d_model % d->groups != 0 || d->d_ff % d->groups != 0)
      return "groups " + std::to_string(d->groups) +
             " does not divide both d_model " + std::to_string(d->d_model) +
             " and d_ff " + std::to_string(d->d_ff) +
             " (each block has d_model / groups and d_ff / groups columns)";
  }
  // Every stacked parameter holds each expert's tensor, routed and shared,
  // or each block's.
  int64_t stack = moe ? d->experts + d->shared_experts : d->groups;
  const char *unit = grouped ? " blocks" : " experts";
  int64_t stacked = 0;
  const ffn_param_desc *router = nullptr, *up = nullptr;
  for (int64_t i = 0; i < d->num_params; ++i) {
    const ffn_param_desc &p = d->params[i];
    std::string which =
        "parameter " + std::to_string(i) + " ('" + p.name + "') ";
    if (p.experts < 0 || (!moe && !grouped && p.experts != 0))
      return which + "stacks " + std::to_string(p.experts) + unit +
             " in a kernel of kind " + std::to_string(d->kind);
    if (p.experts > 0 && p.experts != stack)
      return which + "stacks " + std::to_string(p.experts) + unit +
             (grouped ? ", not groups = "
                      : ", not experts + shared_experts = ") +
             std::to_string(stack);
    // The norm acts on the whole d_model row, outside the experts and
    // blocks: the kernel reads one tensor.
    if (p.experts > 0 && isNormParam(p))
      return which + "is stacked, but the norm acts on the whole row";
    stacked += p.experts > 0;
    if (moe && std::strcmp(p.name, "w_router") == 0)
      router = &p;
    if (std::strcmp(p.name, "w_up") == 0)
      up = &p;
  }
  if (!moe && !grouped)
    return "";
  if (!stacked)
    return grouped ? "a grouped FFN without stacked block parameters"
                   : "a mixture of experts without stacked expert parameters";
  if (grouped) {
    // d_model and d_ff are the whole row's: a block's w_up must be their
    // share, or the runtime's sizes and the kernel's would disagree.
    int64_t bd = d->d_model / d->groups, bf = d->d_ff / d->groups;
    if (!up || up->rank != 2 || up->experts != d->groups ||
        up->shape[0] != bd || up->shape[1] != bf)
      return "no parameter 'w_up' of shape [d_model / groups, d_ff / "
             "groups] = [" +
             std::to_string(bd) + ", " + std::to_string(bf) +
             "], stacked groups = " + std::to_string(d->groups) + " times";
    return "";
  }
  // The router's logits come from one plain [d_model, experts] matrix.
  if (!router || router->rank != 2 || router->experts != 0 ||
      router->shape[0] != d->d_model || router->shape[1] != d->experts)
    return "no parameter 'w_router' of shape [d_model, experts] = [" +
           std::to_string(d->d_model) + ", " + std::to_string(d->experts) +
           "], unstacked";
  return "";
}

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
                "kernel '" + name +
                    "' has an inconsistent descriptor: " + what);
  };
  if (d->kind != FFN_KIND_FFN && d->kind != FFN_KIND_MOE &&
      d->kind != FFN_KIND_GROUPED)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                "kernel '" + name + "' is of kind " + std::to_string(d->kind) +
                    ", which this runtime does not run");
  if (d->device != FFN_DEVICE_CPU && d->device != FFN_DEVICE_CUDA)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                "kernel '" + name + "' is for unknown device " +
                    std::to_string(d->device));
  // (A grouped FFN's blocks and a mixture's experts are stacked
  // parameters, packed and uploaded like any other; the router is one more
  // parameter; the launch plan does the rest.)
  if (!d->pack || !inLoadedImage(reinterpret_cast<const void *>(d->pack)))
    return bad("no pack function");
  if (d->pack_quantized &&
      !inLoadedImage(reinterpret_cast<const void *>(d->pack_quantized)))
    return bad("pack_quantized outside the kernel's image");
  // Exactly the device's own code entry is set, and it lies in a loaded
  // object before anything behind it is read.
  if ((d->device == FFN_DEVICE_CPU) != (d->cpu != nullptr) ||
      (d->device == FFN_DEVICE_CUDA) != (d->cuda != nullptr))
    return bad("the code entries do not match device " +
               std::to_string(d->device));
  if (!inLoadedImage(d->device == FFN_DEVICE_CPU
                         ? static_cast<const void *>(d->cpu)
                         : static_cast<const void *>(d->cuda)))
    return bad("a code entry outside any loaded object");
  // Each field of an entry is checked before the next is read: a foreign
  // pointer may lead to fewer bytes than the entry has.
  if (d->device == FFN_DEVICE_CUDA) {
    std::string plan = ffn_rt::DeviceKernel::validate(*d, inLoadedImage);
    if (!plan.empty())
      return bad(plan);
  } else {
    const ffn_cpu_code &c = *d->cpu;
    auto noEntry = [&] {
      return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  "kernel '" + name + "' has no CPU entry point");
    };
    if (!c.run)
      return noEntry();
    if (!inLoadedImage(reinterpret_cast<const void *>(c.run)))
      return bad("an entry point outside any loaded code");
    if (c.num_phases < 1 || c.num_phases > 16 || !c.phase_units || !c.phase)
      return noEntry();
    if (!inLoadedImage(reinterpret_cast<const void *>(c.phase)) ||
        !inLoadedImage(reinterpret_cast<const void *>(c.phase_units)))
      return bad("an entry point outside any loaded code");
  }
  // A strategy text also carries the back end's notes: a longer limit.
  if (!validString(d->target) || !validString(d->strategy, 4096))
    return bad("target or strategy is not a string");
  // One entry of the signature per parameter, each well under 256 bytes.
  if (!validString(d->pack_signature, 256 * 16))
    return bad("pack_signature is not a string");
  // Code for features this CPU lacks would die of SIGILL in its first run.
  if (d->device == FFN_DEVICE_CPU) {
    std::string why = ffn_rt::cpuCannotRun(d->target);
    if (!why.empty())
      return fail(ctx, FFN_ERROR_UNSUPPORTED,
                  "kernel '" + name + "' is compiled for '" + d->target +
                      "', which this runtime cannot run: " + why);
  }
  if (d->dtype != FFN_DTYPE_F32 && d->dtype != FFN_DTYPE_BF16 &&
      d->dtype != FFN_DTYPE_F16)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                "kernel '" + name + "' has unknown dtype " +
                    std::to_string(d->dtype));
  if (d->weight_quant != FFN_WEIGHTS_DTYPE &&
      d->weight_quant != FFN_WEIGHTS_INT8 &&
      d->weight_quant != FFN_WEIGHTS_INT4 &&
      d->weight_quant != FFN_WEIGHTS_INT4_ZP)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                "kernel '" + name + "' has unknown weight format " +
                    std::to_string(d->weight_quant));
  if (d->kind == FFN_KIND_MOE && d->router != FFN_ROUTER_SOFTMAX_TOPK &&
      d->router != FFN_ROUTER_TOPK_SOFTMAX)
    return fail(ctx, FFN_ERROR_UNSUPPORTED,
                "kernel '" + name + "' has unknown router " +
                    std::to_string(d->router));
  if ((d->weight_quant == FFN_WEIGHTS_DTYPE) != (d->quant_group == 0) ||
      d->quant_group < 0 || d->quant_group > 65536 || d->quant_group % 2 != 0)
    return bad("quant_group " + std::to_string(d->quant_group) +
               " for weight format " + std::to_string(d->weight_quant));
  if ((d->weight_quant == FFN_WEIGHTS_DTYPE) != !d->pack_quantized)
    return bad("pack_quantized goes with quantized weights");
  // The matmuls' inputs: kept (f32), rounded to the dtype, or quantized to
  // int8 (with quantized weights, in whole 16-wide groups).
  if (d->operand_rounding != FFN_DTYPE_F32 &&
      d->operand_rounding != d->dtype &&
      !(d->operand_rounding == FFN_DTYPE_INT8 &&
        d->weight_quant != FFN_WEIGHTS_DTYPE && d->quant_group % 16 == 0))
    return bad("operand_rounding " + std::to_string(d->operand_rounding) +
               " for dtype " + std::to_string(d->dtype) + " and weight format " +
               std::to_string(d->weight_quant));
  if (d->d_model < 1 || d->d_model > kMaxDim || d->d_ff < 1 ||
      d->d_ff > kMaxDim)
    return bad("d_model " + std::to_string(d->d_model) + ", d_ff " +
               std::to_string(d->d_ff));
  if (d->workspace_per_row < 0 || d->workspace_per_row > kMaxBytes / kMaxDim)
    return bad("workspace_per_row " + std::to_string(d->workspace_per_row));
  // Up to eight FFN parameters (a grouped FFN's too), and a mixture's
  // router.
  if (d->num_params < 2 || d->num_params > (d->kind == FFN_KIND_MOE ? 9 : 8))
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
  std::string stacking = checkStacking(d);
  if (!stacking.empty())
    return bad(stacking);
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

} // extern "C"
