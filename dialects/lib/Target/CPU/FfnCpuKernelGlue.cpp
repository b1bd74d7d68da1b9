//===- FfnCpuKernelGlue.cpp - CPU entry points and descriptors ------------===//
//
// The kernel functions keep the memref calling convention func-to-llvm gives
// them; the runtime and embedding apps call plain pointers. The entry points
// built here rebuild each memref's fields from the contract (every buffer is
// dense and row-major, only the row count is dynamic), so the contract alone
// decides the convention and nothing is inferred from argument counts.
//
//===----------------------------------------------------------------------===//

#include "ffn/IR/FfnAttrs.h"
#include "ffn/Target/CPU/Passes.h"
#include "ffn/Target/KernelGlue.h"

#include "ffn/kernel_abi.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNCPUKERNELGLUE
#include "ffn/Target/CPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;

static_assert(sizeof(ffn_cpu_code) == 4 * 8, "ffn_cpu_code layout");

namespace {

/// The phase table of a kernel: units per phase, per token-count bucket
/// (-1 = m rows). The baseline kernel is one phase of one unit.
struct PhaseTable {
  SmallVector<SmallVector<int64_t>> units;
  SmallVector<int64_t> bounds; ///< the largest m of each bucket but the last
  bool phased = false;         ///< the kernel takes (phase, begin, end)

  explicit PhaseTable(KernelAbiAttr abi) {
    ArrayAttr rows = abi.getPhaseUnits();
    if (!rows) {
      units.push_back({1});
      return;
    }
    phased = true;
    for (Attribute row : rows)
      units.emplace_back(cast<DenseI64ArrayAttr>(row).asArrayRef());
    ArrayRef<int64_t> maxM = abi.getBucketMaxM().asArrayRef();
    bounds.assign(maxM.begin(), maxM.end() - 1);
  }
  int64_t numPhases() const { return units.front().size(); }
};

class CpuGlue {
public:
  CpuGlue(GlueBuilder &g, const GluedKernel &kernel)
      : g(g), b(g.builder()), kernel(kernel), table(kernel.abi),
        i64(g.i64Type()), ptr(g.ptrType()),
        voidType(LLVM::LLVMVoidType::get(b.getContext())) {}

  /// The entry points and the `ffn_cpu_code` entry.
  LLVM::GlobalOp build();

private:
  LLVM::LLVMFuncOp buildPhase();
  LLVM::LLVMFuncOp buildUnits();
  LLVM::LLVMFuncOp buildRun(LLVM::LLVMFuncOp phase, LLVM::LLVMFuncOp units);
  Value icmp(LLVM::ICmpPredicate p, Value l, Value r) {
    return LLVM::ICmpOp::create(b, p, l, r);
  }

  GlueBuilder &g;
  ImplicitLocOpBuilder &b;
  const GluedKernel &kernel;
  PhaseTable table;
  Type i64, ptr, voidType;
};

} // namespace

LLVM::LLVMFuncOp CpuGlue::buildPhase() {
  // void phase(i64 phase, i64 m, ptr x, ptr params, ptr y, ptr ws,
  //            i64 begin, i64 end)
  LLVM::LLVMFuncOp fn = g.function("ffn_" + kernel.name + "_phase", voidType,
                                   {i64, i64, ptr, ptr, ptr, ptr, i64, i64});
  if (!fn)
    return nullptr;
  Block *call = &fn.getBody().emplaceBlock();
  Block *done = &fn.getBody().emplaceBlock();
  // An empty range does nothing (other buckets' phases cost a call each).
  LLVM::CondBrOp::create(
      b, icmp(LLVM::ICmpPredicate::slt, fn.getArgument(6), fn.getArgument(7)),
      call, done);
  b.setInsertionPointToStart(call);
  KernelAbiAttr abi = kernel.abi;
  Value rows = fn.getArgument(1);
  SmallVector<Value> args;
  int64_t dModel = abi.getDModel();
  g.appendMemRef(args, fn.getArgument(2), {-1, dModel}, rows);
  for (auto [i, attr] : llvm::enumerate(abi.getParams())) {
    Value slot =
        LLVM::GEPOp::create(b, ptr, ptr, fn.getArgument(3),
                            ArrayRef<LLVM::GEPArg>{Value(g.constant(i))},
                            LLVM::GEPNoWrapFlags::inbounds);
    g.appendMemRef(args, LLVM::LoadOp::create(b, ptr, slot),
                   cast<KernelParamAttr>(attr).kernelType().getShape(), rows);
  }
  g.appendMemRef(args, fn.getArgument(4), {-1, dModel}, rows);
  if (std::optional<int64_t> perRow = abi.getWorkspacePerRow()) {
    Value size = LLVM::MulOp::create(b, rows, g.constant(*perRow));
    g.appendMemRef(args, fn.getArgument(5), {-1}, size);
  }
  if (table.phased)
    args.append({fn.getArgument(0), fn.getArgument(6), fn.getArgument(7)});
  LLVM::CallOp::create(b, kernel.func, args);
  LLVM::BrOp::create(b, done);
  b.setInsertionPointToStart(done);
  LLVM::ReturnOp::create(b, ValueRange());
  return fn;
}

LLVM::LLVMFuncOp CpuGlue::buildUnits() {
  // i64 units(i64 phase, i64 m): the bucket is the number of bounds below
  // m; a table entry of -n means n * m.
  SmallVector<int64_t> flat;
  for (const SmallVector<int64_t> &row : table.units)
    flat.append(row);
  auto tableType = LLVM::LLVMArrayType::get(i64, flat.size());
  LLVM::GlobalOp tableGlobal =
      g.global("ffn_" + kernel.name + "_phase_table", tableType, [&] {
        return LLVM::ConstantOp::create(
            b, tableType,
            DenseElementsAttr::get(
                RankedTensorType::get({int64_t(flat.size())}, i64),
                ArrayRef<int64_t>(flat)));
      });
  LLVM::LLVMFuncOp fn =
      g.function("ffn_" + kernel.name + "_phase_units", i64, {i64, i64});
  if (!fn)
    return nullptr;
  Block *valid = &fn.getBody().emplaceBlock();
  Block *none = &fn.getBody().emplaceBlock();
  Value phase = fn.getArgument(0), rows = fn.getArgument(1);
  int64_t phases = table.numPhases();
  LLVM::CondBrOp::create(
      b, icmp(LLVM::ICmpPredicate::ult, phase, g.constant(phases)), valid,
      none);
  b.setInsertionPointToStart(valid);
  Value bucket = g.constant(0);
  for (int64_t bound : table.bounds)
    bucket = LLVM::AddOp::create(
        b, bucket,
        LLVM::ZExtOp::create(
            b, i64, icmp(LLVM::ICmpPredicate::sgt, rows, g.constant(bound))));
  Value index = LLVM::AddOp::create(
      b, LLVM::MulOp::create(b, bucket, g.constant(phases)), phase);
  Value slot =
      LLVM::GEPOp::create(b, ptr, tableType, g.address(tableGlobal),
                          ArrayRef<LLVM::GEPArg>{Value(g.constant(0)), index},
                          LLVM::GEPNoWrapFlags::inbounds);
  Value units = LLVM::LoadOp::create(b, i64, slot);
  Value perRow = LLVM::MulOp::create(
      b, rows, LLVM::SubOp::create(b, g.constant(0), units));
  LLVM::ReturnOp::create(
      b, LLVM::SelectOp::create(
             b, icmp(LLVM::ICmpPredicate::slt, units, g.constant(0)), perRow,
             units));
  b.setInsertionPointToStart(none);
  LLVM::ReturnOp::create(b, g.constant(0));
  return fn;
}

LLVM::LLVMFuncOp CpuGlue::buildRun(LLVM::LLVMFuncOp phase,
                                   LLVM::LLVMFuncOp units) {
  // Every phase over all its units, in order, on the calling thread.
  LLVM::LLVMFuncOp run = g.function("ffn_" + kernel.name + "_run", voidType,
                                    {i64, ptr, ptr, ptr, ptr});
  if (!run)
    return nullptr;
  Value rows = run.getArgument(0);
  for (int64_t p = 0; p < table.numPhases(); ++p) {
    Value end = LLVM::CallOp::create(b, units, ValueRange{g.constant(p), rows})
                    .getResult();
    LLVM::CallOp::create(b, phase,
                         ValueRange{g.constant(p), rows, run.getArgument(1),
                                    run.getArgument(2), run.getArgument(3),
                                    run.getArgument(4), g.constant(0), end});
  }
  LLVM::ReturnOp::create(b, ValueRange());
  return run;
}

LLVM::GlobalOp CpuGlue::build() {
  LLVM::LLVMFuncOp phase = buildPhase();
  LLVM::LLVMFuncOp units = phase ? buildUnits() : nullptr;
  LLVM::LLVMFuncOp run = units ? buildRun(phase, units) : nullptr;
  if (!run)
    return nullptr;
  // ffn_cpu_code { run, num_phases, phase_units, phase }
  auto codeType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {ptr, i64, ptr, ptr});
  return g.global("ffn_" + kernel.name + "_cpu", codeType, [&] {
    return g.aggregate(codeType, {g.address(run), g.constant(table.numPhases()),
                                  g.address(units), g.address(phase)});
  });
}

namespace {
struct FfnCpuKernelGluePass
    : ffn::impl::FfnCpuKernelGlueBase<FfnCpuKernelGluePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto target = module->getAttrOfType<TargetAttr>(TargetAttr::kAttrName);
    if (!target || !target.isCpu()) {
      module.emitError("ffn-cpu-kernel-glue: the module needs a CPU "
                       "#ffn.target (ffn-attach-target)");
      return signalPassFailure();
    }
    SmallVector<GluedKernel> kernels = takeKernels(module);
    for (GluedKernel &kernel : kernels) {
      if (kernel.func.isExternal()) {
        module.emitError("ffn-cpu-kernel-glue: kernel '")
            << kernel.name << "' has no CPU code"
            << (kernel.abi.getDeviceModule()
                    ? " (a device kernel: use ffn-gpu-kernel-glue)"
                    : "");
        return signalPassFailure();
      }
      // The kernel is reached through its entry points only (nothing else
      // calls it, so no use needs the old name).
      SymbolTable::setSymbolName(kernel.func, "__ffn_" + kernel.name + "_impl");
      kernel.func.setLinkage(LLVM::Linkage::Internal);
    }
    GlueBuilder g(module);
    for (GluedKernel &kernel : kernels) {
      LLVM::GlobalOp code = CpuGlue(g, kernel).build();
      LLVM::LLVMFuncOp pack = code ? g.buildPack(kernel) : nullptr;
      if (!pack ||
          failed(g.buildDescriptor(kernel, target.getIsa(), FFN_DEVICE_CPU,
                                   pack, code, nullptr)))
        return signalPassFailure();
    }
    module->removeAttr(TargetAttr::kAttrName);
  }
};
} // namespace
