//===- StrategyFuzzer.cpp - libFuzzer entry point for --strategy ----------===//
//
// Feeds arbitrary `--strategy=` text, for an FFN shape, target and thread
// count taken from the input's first bytes, through the option parser and,
// when it accepts, through strategy selection and the schedule cost model,
// as ffnc does before lowering. Besides the sanitizers (a division by zero
// is UBSan's), it checks the parser's promise: accepted overrides yield a
// strategy that #ffn.cpu_strategy's verifier accepts, with finite, positive
// prices, and an error names a part of the text.
//
//===----------------------------------------------------------------------===//

#include "ffnc/CodeGen/StrategyOptions.h"

#include "ffn/IR/FfnAttrs.h"
#include "ffn/IR/FfnDialect.h"
#include "ffn/Target/CPU/CostModel.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>

using namespace ffnc;

static mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    auto *c = new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
    c->getOrLoadDialect<mlir::ffn::FfnDialect>();
    return c;
  }();
  return *ctx;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 9)
    return 0;
  auto u24 = [&](size_t i) {
    return int64_t(data[i]) | int64_t(data[i + 1]) << 8 |
           int64_t(data[i + 2]) << 16;
  };
  // The largest dimensions the front end accepts are 262144.
  int64_t vectorBits = data[0] & 1 ? 512 : 256;
  mlir::ffn::FfnShape shape{1 + u24(1) % 262144, 1 + u24(4) % 262144,
                            (data[7] & 1) != 0, data[7] & 2 ? 2 : 4};
  // ReLU FFNs, with or without a profiled share of nonzero activations.
  shape.zeroActivations = (data[7] & 4) != 0;
  if (data[7] & 8)
    shape.nonzeroShare = double(data[7] >> 4) / 15.0;
  // A grouped FFN's blocks (the widths are one block's).
  if (data[0] & 2)
    shape.blocks = 2 + (data[0] >> 2) % 63;
  mlir::ffn::MachineAssumptions machine;
  machine.threads = 1 + data[8] % 64;
  llvm::StringRef text(reinterpret_cast<const char *>(data) + 9, size - 9);

  ScheduleOptions options;
  options.vectorBits = vectorBits;
  if (std::optional<StrategyError> error = parseStrategyOptions(text, options)) {
    if (error->offset > text.size() ||
        error->length > text.size() - error->offset || error->message.empty())
      std::abort(); // the caret would point outside the option
    return 0;
  }
  if (options.baseline)
    return 0;
  mlir::ffn::CpuStrategy c =
      mlir::ffn::chooseStrategy(vectorBits, shape, options.overrides, machine);
  mlir::ScopedDiagnosticHandler quiet(
      &context(), [](mlir::Diagnostic &) { return mlir::success(); });
  auto loc = mlir::UnknownLoc::get(&context());
  if (!c.isComplete() ||
      failed(mlir::ffn::CpuStrategyAttr::verify(
          [&] { return mlir::emitError(loc); }, c)) ||
      mlir::ffn::checkStrategy(c, vectorBits))
    std::abort(); // the parser accepted what the verifier rejects
  // Blocks have neither a fused nor a sparse schedule.
  if (shape.blocks > 1 && (*c.fusedMaxM > 0 || (!options.overrides.sparseMaxM &&
                                                c.sparseMaxM.value_or(0) > 0)))
    std::abort();
  for (int64_t m : {int64_t(1), int64_t(7), int64_t(16), int64_t(4096)}) {
    mlir::ffn::SchedulePrices p = priceSchedules(shape, c, m, machine);
    if (!(p.twoPass > 0) || !std::isfinite(p.twoPass) ||
        (*c.fusedMaxM > 0 && (!(p.fused > 0) || !std::isfinite(p.fused))) ||
        !(p.twoPassSparse > 0) || !std::isfinite(p.twoPassSparse) ||
        (*c.fusedMaxM > 0 && (!(p.sparse > 0) || !std::isfinite(p.sparse))))
      std::abort();
  }
  if (mlir::ffn::describeStrategy(c, shape.gated, shape.dFf).empty())
    std::abort();
  return 0;
}
