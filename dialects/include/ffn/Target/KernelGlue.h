//===- KernelGlue.h - LLVM-dialect glue every target shares ---*- C++ -*-===//
//
// What the targets' glue passes (ffn-cpu-kernel-glue, ffn-gpu-kernel-glue)
// share: reading a kernel's #ffn.kernel_abi after func-to-llvm and building,
// in the LLVM dialect, its pack entry point and its exported
// `ffn_kernel_desc` (ffn/kernel_abi.h). Each target adds its own code entry
// (`ffn_cpu_code`, `ffn_cuda_code`).
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_KERNELGLUE_H
#define FFN_TARGET_KERNELGLUE_H

#include "ffn/IR/FfnAttrs.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::ffn {

/// A kernel to glue: its name (the spec's) and its contract.
struct GluedKernel {
  std::string name;
  KernelAbiAttr abi;
  /// The kernel's function: the CPU's lowered code, or a device kernel's
  /// stub (a declaration: its code is a cubin).
  LLVM::LLVMFuncOp func;
};

/// The kernels of `module` in module order (spec order): every function
/// with an #ffn.kernel_abi, its attribute removed (the glue consumes it).
SmallVector<GluedKernel> takeKernels(ModuleOp module);

/// Builds glue at the end of a module. Exported symbols carry the names the
/// kernel ABI fixes (`ffn_<name>_run`, `ffn_kernel_<name>`, ...): a clash
/// with an existing symbol is an error. Private helpers are renamed on a
/// clash.
class GlueBuilder {
public:
  explicit GlueBuilder(ModuleOp module);

  ImplicitLocOpBuilder &builder() { return b; }
  Type i64Type() const { return i64; }
  Type ptrType() const { return ptr; }

  /// An i64 constant at the insertion point.
  Value constant(int64_t value);

  /// A new external function `name` with one entry block (the insertion
  /// point is left at its start); null after an error on a name clash.
  LLVM::LLVMFuncOp function(StringRef name, Type result,
                            ArrayRef<Type> arguments);

  /// A constant global, initialized by `init` (which builds the value in
  /// the initializer region and returns it); null after an error when an
  /// exported name clashes.
  LLVM::GlobalOp global(StringRef name, Type type, function_ref<Value()> init,
                        uint64_t alignment = 0,
                        LLVM::Linkage linkage = LLVM::Linkage::Private);
  /// A private NUL-terminated string.
  LLVM::GlobalOp string(StringRef name, StringRef value);
  /// Raw bytes, as they are (no NUL).
  LLVM::GlobalOp bytes(StringRef name, StringRef value, uint64_t alignment);
  /// The address of a global or function.
  Value address(Operation *symbol);
  /// A null pointer.
  Value null();
  /// `values` as an LLVM struct (or array, if they share `arrayElement`).
  Value aggregate(Type type, ArrayRef<Value> values);

  /// Appends the fields of the memref descriptor of a dense row-major
  /// buffer at `p` of `shape` (a negative extent is `rows`), as func-to-llvm
  /// expands a memref argument: allocated, aligned, offset, sizes, strides.
  void appendMemRef(SmallVectorImpl<Value> &args, Value p,
                    ArrayRef<int64_t> shape, Value rows);

  /// `ffn_<name>_pack(i64 index, ptr src, ptr dst)`: parameter `index`
  /// through its pack function, or copied as it is.
  LLVM::LLVMFuncOp buildPack(const GluedKernel &kernel);
  /// `ffn_<name>_pack_quantized(index, q, scales, zero_points, dst)`, which
  /// calls the pack_quantized function of each quantized matrix; null (and
  /// no function) where the kernel has none; failure when a named pack
  /// function is missing.
  FailureOr<LLVM::LLVMFuncOp> buildPackQuantized(const GluedKernel &kernel);
  /// The tail of both pack entry points: each case block branches to a
  /// return, and `entry` switches on the parameter index (argument 0) to
  /// the cases (other indices: nothing).
  void finishParamSwitch(LLVM::LLVMFuncOp fn, Block *entry,
                         ArrayRef<Block *> cases, ArrayRef<APInt> caseValues);

  /// The exported `ffn_kernel_<name>`: the model and parameters from the
  /// contract, `target` and `device` (FFN_DEVICE_*), the pack entry point
  /// and the device's code entry (`cpuCode` or `cudaCode`, the other null).
  LogicalResult buildDescriptor(const GluedKernel &kernel, StringRef target,
                                int64_t device, LLVM::LLVMFuncOp pack,
                                LLVM::GlobalOp cpuCode,
                                LLVM::GlobalOp cudaCode);

private:
  /// Inserts `op` (just built at the module's end) into the symbol table:
  /// an exported name that clashes is an error (and `op` is erased), a
  /// private one is renamed.
  LogicalResult insert(Operation *op, bool exported);

  ModuleOp module;
  SymbolTable symbols;
  ImplicitLocOpBuilder b;
  Type i64, ptr;
};

} // namespace mlir::ffn

#endif // FFN_TARGET_KERNELGLUE_H
