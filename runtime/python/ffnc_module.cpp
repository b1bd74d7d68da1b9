//===- ffnc_module.cpp - the _ffnc Python extension (pybind11)
//-------------===//
//
// A thin layer over the C API: ffn_kernel_compile (ffn/jit.h) and the
// runtime's kernels (ffn/runtime.h), taking any buffer-protocol array
// (numpy, and PyTorch CPU tensors through their numpy views, bf16 as
// 16-bit integers) without copying. Argument checks that need the
// descriptor are the runtime's; this layer checks what only Python knows
// (contiguity, element size, the output's size) and turns every failed
// status into an exception carrying the runtime's message. The Python
// package (ffnc/__init__.py) adds the PyTorch conveniences.
//
//===----------------------------------------------------------------------===//

#include "ffn/jit.h"
#include "ffn/runtime.h"

#include "ffnc/Analysis/FfnInfo.h"
#include "ffnc/Frontend/Diagnostics.h"
#include "ffnc/Frontend/Sema.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace {

/// A spec that does not compile (its diagnostics are the message).
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char *dtypeName(int64_t dtype) {
  return dtype == FFN_DTYPE_F32    ? "f32"
         : dtype == FFN_DTYPE_BF16 ? "bf16"
                                   : "f16";
}

/// One context per kernel: its threads setting and errors are the kernel's.
class Kernel {
public:
  Kernel(const std::string &spec, const std::string &name,
         const std::string &options) {
    if (ffn_context_create(&ctx) != FFN_OK)
      throw std::bad_alloc();
    ffn_status s = ffn_kernel_compile(ctx, spec.c_str(), name.c_str(),
                                      options.c_str(), &kernel);
    if (s != FFN_OK) {
      std::string message = ffn_context_last_error(ctx);
      ffn_context_destroy(ctx);
      if (s == FFN_ERROR_INVALID_ARGUMENT)
        throw CompileError(message);
      if (s == FFN_ERROR_NOT_FOUND)
        throw py::key_error(message);
      throw std::runtime_error(message);
    }
  }
  ~Kernel() {
    ffn_kernel_destroy(kernel);
    ffn_context_destroy(ctx);
  }
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

  const ffn_kernel_desc &desc() const { return *ffn_kernel_descriptor(kernel); }

  py::dict descriptor() const {
    const ffn_kernel_desc &d = desc();
    py::list params;
    for (int64_t i = 0; i < d.num_params; ++i) {
      const ffn_param_desc &p = d.params[i];
      py::list shape;
      if (p.experts > 0)
        shape.append(p.experts);
      shape.append(p.shape[0]);
      if (p.rank == 2)
        shape.append(p.shape[1]);
      params.append(py::make_tuple(p.name, py::tuple(shape)));
    }
    py::dict out;
    out["name"] = d.name;
    out["target"] = d.target;
    out["d_model"] = d.d_model;
    out["d_ff"] = d.d_ff;
    out["dtype"] = dtypeName(d.dtype);
    out["kind"] = d.kind == FFN_KIND_MOE       ? "moe"
                  : d.kind == FFN_KIND_GROUPED ? "grouped"
                                               : "ffn";
    out["params"] = params;
    out["strategy"] = d.strategy;
    return out;
  }

  void setThreads(int threads) { check(ffn_context_set_threads(ctx, threads)); }

  /// Parameter `name` from a C-contiguous buffer of the kernel's element
  /// size (logical [in, out], or with outIn [out, in]).
  void setParam(const std::string &name, const py::buffer &data, bool outIn) {
    py::buffer_info b = contiguous(data, "parameter '" + name + "'");
    ffn_status s;
    {
      py::gil_scoped_release release;
      s = ffn_kernel_set_param(kernel, name.c_str(), b.ptr,
                               static_cast<size_t>(b.size * b.itemsize),
                               outIn ? FFN_LAYOUT_OUT_IN : FFN_LAYOUT_IN_OUT);
    }
    check(s);
  }

  /// Every parameter from a safetensors file (ffn/runtime.h's
  /// ffn_kernel_set_params_safetensors): `names` maps parameters to tensor
  /// names (unmapped: the parameter's own name).
  void loadSafetensors(const std::string &path,
                       const std::map<std::string, std::string> &names,
                       bool outIn) {
    const ffn_kernel_desc &d = desc();
    for (const auto &entry : names) {
      bool known = false;
      for (int64_t i = 0; i < d.num_params; ++i)
        known |= entry.first == d.params[i].name;
      if (!known)
        throw py::value_error("names: the kernel has no parameter '" +
                              entry.first + "'");
    }
    std::vector<const char *> tensors;
    for (int64_t i = 0; i < d.num_params; ++i) {
      auto it = names.find(d.params[i].name);
      tensors.push_back(it == names.end() ? nullptr : it->second.c_str());
    }
    ffn_safetensors *file = nullptr;
    check(ffn_safetensors_open(ctx, path.c_str(), &file));
    ffn_status s;
    {
      py::gil_scoped_release release;
      s = ffn_kernel_set_params_safetensors(kernel, file, tensors.data(),
                                            outIn ? FFN_LAYOUT_OUT_IN
                                                  : FFN_LAYOUT_IN_OUT);
    }
    ffn_safetensors_close(file);
    check(s);
  }

  /// y = FFN(x) for m rows: both C-contiguous, m * d_model elements.
  void run(const py::buffer &x, const py::buffer &y) {
    py::buffer_info bx = contiguous(x, "the input");
    py::buffer_info by = contiguous(y, "the output");
    if (by.readonly)
      throw py::value_error("the output must be writable");
    int64_t d = desc().d_model;
    if (bx.size % d != 0 || bx.size == 0)
      throw py::value_error("the input has " + std::to_string(bx.size) +
                            " elements, not a positive multiple of d_model = " +
                            std::to_string(d));
    if (by.size != bx.size)
      throw py::value_error("the output has " + std::to_string(by.size) +
                            " elements, the input " + std::to_string(bx.size));
    ffn_status s;
    {
      py::gil_scoped_release release;
      s = ffn_kernel_run(kernel, bx.size / d, bx.ptr, by.ptr);
    }
    check(s);
  }

private:
  void check(ffn_status s) const {
    if (s == FFN_OK)
      return;
    std::string message = ffn_context_last_error(ctx);
    if (s == FFN_ERROR_INVALID_ARGUMENT || s == FFN_ERROR_NOT_FOUND ||
        s == FFN_ERROR_NOT_READY)
      throw py::value_error(message);
    throw std::runtime_error(message);
  }

  py::buffer_info contiguous(const py::buffer &data,
                             const std::string &what) const {
    py::buffer_info b = data.request();
    size_t element = desc().dtype == FFN_DTYPE_F32 ? 4 : 2;
    if (static_cast<size_t>(b.itemsize) != element)
      throw py::value_error(what + " has " + std::to_string(b.itemsize) +
                            "-byte elements; this kernel's dtype " +
                            dtypeName(desc().dtype) + " has " +
                            std::to_string(element));
    py::ssize_t stride = b.itemsize;
    for (py::ssize_t i = b.ndim - 1; i >= 0; --i) {
      if (b.shape[i] > 1 && b.strides[i] != stride)
        throw py::value_error(what + " must be C-contiguous");
      stride *= b.shape[i];
    }
    return b;
  }

  ffn_context *ctx = nullptr;
  ffn_kernel *kernel = nullptr;
};

/// `ffnc info`'s counts for each block of `spec`.
py::list info(const std::string &spec) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(spec, "<spec>"), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ffnc::DiagnosticEngine diags(sourceMgr, os);
  std::vector<ffnc::FfnSpec> specs = ffnc::compileSpecBuffer(
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer(), diags);
  if (diags.hadError())
    throw CompileError(diagnostics);
  py::list out;
  for (const ffnc::FfnSpec &s : specs) {
    ffnc::FfnCounts c = ffnc::countParameters(s);
    py::dict d;
    d["name"] = s.name;
    d["d_model"] = s.dModel;
    d["d_ff"] = s.dFF;
    d["total_parameters"] = c.totalParams();
    d["weight_bytes"] = ffnc::weightBytes(s);
    d["flops_per_token"] = ffnc::flopsPerToken(s);
    out.append(d);
  }
  return out;
}

} // namespace

PYBIND11_MODULE(_ffnc, m) {
  m.doc() = "ffnc's compiler and runtime (see the ffnc package)";
  static py::exception<CompileError> compileError(m, "CompileError",
                                                  PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const CompileError &e) {
      compileError(e.what());
    }
  });
  py::class_<Kernel>(m, "Kernel")
      .def(py::init<const std::string &, const std::string &,
                    const std::string &>(),
           py::arg("spec"), py::arg("name"), py::arg("options") = "")
      .def_property_readonly("descriptor", &Kernel::descriptor)
      .def("set_threads", &Kernel::setThreads)
      .def("set_param", &Kernel::setParam, py::arg("name"), py::arg("data"),
           py::arg("out_in") = false)
      .def("load_safetensors", &Kernel::loadSafetensors, py::arg("path"),
           py::arg("names"), py::arg("out_in") = true)
      .def("run", &Kernel::run, py::arg("x"), py::arg("y"));
  m.def("info", &info, py::arg("spec"));
  m.def("cache_stats", [] {
    int64_t hits = 0, builds = 0;
    ffn_jit_cache_stats(&hits, &builds);
    return py::make_tuple(hits, builds);
  });
}
