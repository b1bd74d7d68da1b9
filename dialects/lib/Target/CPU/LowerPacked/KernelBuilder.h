//===- KernelBuilder.h - the body of one packed FFN kernel ------*- C++ -*-===//
//
// The kernel runs one phase over a range of work units per call (the
// runtime's threads split each phase): 0 rows (A = f32(pre-norm(x)); with
// integer dot products A quantized to int8), 1 up panels (GEMM 1), 2 rows
// (integer dot products only: H quantized to int8), 3 down panels (GEMM
// 2), 4 chunk groups (the fused small-m schedule), 5 rows (bias, residual,
// post-norm, storage type). The phase schedules are in Phases.cpp (a
// mixture of experts': MoePhases.cpp; a grouped FFN's: GroupedPhases.cpp),
// the outlined GEMM functions in
// GemmFunctions.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_CPU_LOWERPACKED_KERNELBUILDER_H
#define FFN_TARGET_CPU_LOWERPACKED_KERNELBUILDER_H

#include "GemmSignatures.h"
#include "PanelGemm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::ffn::cpu {

class KernelBuilder : public PanelGemmBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, FfnOp op, func::FuncOp kernel,
                const Layout &l, llvm::StringMap<func::FuncOp> &outlined)
      : PanelGemmBuilder(b, loc, op.getStorageType(), l), op(op),
        kernel(kernel), outlined(outlined) {}

  /// `args`: x, params (kernelParams order, by name), y, workspace, and the
  /// phase to run over units [begin, end) (see kernelPhaseUnits).
  void build(Value x, const llvm::StringMap<Value> &params, Value y, Value ws,
             Value phase, Value begin, Value end);

  /// A stacked parameter of a mixture of experts: one expert's packed type
  /// and the bytes from one expert's buffer to the next.
  struct ExpertParam {
    MemRefType packed;
    int64_t stride;
  };
  /// The same for a mixture of experts (MoePhases.cpp): stacked parameters
  /// are byte buffers, `stacked` says how to view each expert's slice.
  void buildMoe(Value x, const llvm::StringMap<Value> &params,
                const llvm::StringMap<ExpertParam> &stacked, Value y, Value ws,
                Value phase, Value begin, Value end);

  /// The same for a grouped FFN (GroupedPhases.cpp): stacked parameters
  /// hold one slice per block.
  void buildGrouped(Value x, const llvm::StringMap<Value> &params,
                    const llvm::StringMap<ExpertParam> &stacked, Value y,
                    Value ws, Value phase, Value begin, Value end);

private:
  /// Expert (or block) e's slice of the stacked parameter `name`, as its
  /// packed type (null where the FFN has no such parameter).
  Value stackedSlice(const llvm::StringMap<Value> &params,
                     const llvm::StringMap<ExpertParam> &stacked,
                     StringRef name, Value e);
  /// A row's router (MoePhases.cpp): startRoute clears `taken`,
  /// routerLogits sums its logits over the routed experts from the row's
  /// f32 matmul input `in` [d_model]; then routeRow writes its top k and
  /// their weights into ids/weights [m, experts per row], then the shared
  /// experts (weight 1). `logits` and `taken` are scratch of one entry per
  /// routed expert.
  void startRoute(Value taken);
  void routerLogits(Value router, Value in, Value logits);
  void routeRow(Value r, Value logits, Value taken, Value ids, Value weights);
  void normRow(function_ref<Value(Value)> load,
               function_ref<void(Value, Value)> store, Value scale,
               Value shift);
  /// A row phase's loop over n columns as vectors: body(j, w) for columns
  /// [j, j + w), w the f32 lanes, then w = 1 for the last ones (as scalar
  /// loops they stayed scalar: a load and a store per element).
  void columns(int64_t n, function_ref<void(Value, int64_t)> body);
  /// w elements of `from` at `at` (the last index the first column), in
  /// `element` (f32 or `from`'s own type).
  Value loadColumns(Value from, ValueRange at, int64_t w, Type element);
  /// Row r's matmul input as f32, x[r, j] or its pre-norm, one column at a
  /// time into `sink(j, v)`.
  void inputRow(Value x, Value r, function_ref<void(Value, Value)> sink);
  /// The rows phase's output row r: y[r, :] = T(post-norm(value(j) [+
  /// x[r, j]])). A post-norm reads the pre-norm row back from row `preRow`
  /// of `pre` (f32), where it is written first.
  void outputRow(Value x, Value y, Value r, function_ref<Value(Value)> value,
                 Value pre, Value preRow);
  /// Row r of `src` (k columns, f32 or the storage type) quantized to int8
  /// per group into q [.., >= k rounded up to 16] (zero past k), with each
  /// group's f32 scale and i32 sum of values into scales and sums
  /// (InputQuant.cpp).
  void quantizeRow(Value src, Value r, int64_t k, Value q, Value scales,
                   Value sums);
  /// Fused schedule, group g's section: its chunk buffer Hc [rows, chunk],
  /// or (`output`) its partial output Og [rows, oWidth] right after it.
  Value groupView(Value ws, Value rows, Value g, bool output);
  /// Group g's [rows, width] section of `element`s from 32-bit column
  /// `column` of its part of each workspace row (after A).
  Value groupSection(Value ws, Value rows, Value g, int64_t column,
                     int64_t width, Type element);
  /// Fused schedule with a sparse bucket: group g's list section, i32
  /// [rows, chunk], whose row 0 holds a chunk's needed rows of W_down.
  Value listView(Value ws, Value rows, Value g);
  /// Writes into row 0 of `list` the rows k < len of W_down (of a chunk, or
  /// of all d_ff; pair rows for pair tiles) whose activation hc[:, k] is
  /// nonzero in some of the m rows, ascending, and returns their count.
  Value listNeededRows(Value hc, Value m, Value len, Value list);

  /// Calls the private GEMM function `<kernel>.<suffix>`(args), which
  /// `body` builds from its arguments on the first call with this suffix
  /// and `key`. The key names everything the body's code depends on, so
  /// kernels of the same shape in one module (the layers of a model, a
  /// gallery of activations sharing GEMM 2) share one function.
  void callOutlined(StringRef suffix, StringRef key, ValueRange args,
                    function_ref<void(ValueRange)> body);
  void callUpGemm(const UpGemmArgs &args);
  void callDownGemm(const DownGemmArgs &args);
  /// What GEMM 2's code depends on: the storage type and the layout.
  std::string layoutKey();
  /// GEMM 2's also on how it finishes the output.
  std::string downKey();
  /// GEMM 1's code also depends on its epilogue.
  std::string upKey();
  /// The bodies of the two GEMM functions.
  void buildUpGemm(const UpGemmArgs &in);
  void buildDownGemm(const DownGemmArgs &in);

  FfnOp op;
  func::FuncOp kernel;
  // The norm's parameters (null where absent), set by build / buildMoe.
  Value normScale, normShift;
  // The module's GEMM functions by what their code depends on (see
  // callOutlined).
  llvm::StringMap<func::FuncOp> &outlined;
};

} // namespace mlir::ffn::cpu

#endif // FFN_TARGET_CPU_LOWERPACKED_KERNELBUILDER_H
