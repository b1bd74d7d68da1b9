//===- FfnSelectStrategy.cpp - choose the CPU schedule --------------------===//

#include "ffn/IR/FfnOps.h"
#include "ffn/Target/CPU/CostModel.h"
#include "ffn/Target/CPU/Passes.h"

#include <cmath>
#include <utility>

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNSELECTSTRATEGY
#include "ffn/Target/CPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;
using namespace mlir::ffn;

namespace {
struct FfnSelectStrategyPass
    : ffn::impl::FfnSelectStrategyBase<FfnSelectStrategyPass> {
  using FfnSelectStrategyBase::FfnSelectStrategyBase;

  void runOnOperation() override {
    MachineAssumptions machine;
    machine.threads = threads;
    for (auto [value, name] : {std::pair{double(peakGflops), "peak-gflops"},
                               std::pair{double(dramGBs), "dram-gbs"},
                               std::pair{double(cacheGBs), "cache-gbs"}})
      if (!(value >= 0) || !std::isfinite(value)) {
        getOperation().emitError("ffn-select-strategy: ")
            << name << " must be a non-negative number, got " << value;
        return signalPassFailure();
      }
    if (!(syncMicros >= 0 || syncMicros == -1) || !std::isfinite(syncMicros)) {
      getOperation().emitError("ffn-select-strategy: sync-us must be -1 or "
                               "a non-negative number, got ")
          << double(syncMicros);
      return signalPassFailure();
    }
    if (vectorBits != 256 && vectorBits != 512) {
      getOperation().emitError("ffn-select-strategy: vector-bits must be 256 "
                               "or 512, got ")
          << static_cast<int64_t>(vectorBits);
      return signalPassFailure();
    }
    if (peakGflops > 0)
      machine.peakGflops = peakGflops;
    if (dramGBs > 0)
      machine.dramGBs = dramGBs;
    if (cacheGBs > 0)
      machine.cacheGBs = cacheGBs;
    if (syncMicros >= 0)
      machine.syncSeconds = syncMicros * 1e-6;

    WalkResult result = getOperation().walk([&](FfnOp op) {
      if (op.getStrategy())
        return WalkResult::advance();
      if (threads < 1 || threads > 1024) {
        op.emitOpError("threads must be in [1, 1024], got ")
            << static_cast<int64_t>(threads);
        return WalkResult::interrupt();
      }
      FfnShape shape{op.getDModel(), op.getDFf(), op.getGated(),
                     op.getStorageType().getIntOrFloatBitWidth() / 8};
      StrategyOverrides o;
      o.mr = mr;
      o.nr = nr;
      o.mc = mc;
      o.prefetch = static_cast<int>(prefetch);
      o.fusedMaxM = fusedMaxM;
      o.chunk = chunk;
      o.groups = groups;
      if (batchInvariant)
        op.setBatchInvariant(true);
      if (op.getBatchInvariant()) {
        // The fused schedule sums d_ff in chunks for small m only: a row's
        // reduction order would then depend on m.
        if (o.fusedMaxM > 0) {
          op.emitOpError("is batch_invariant; it cannot take the fused "
                         "schedule (fused_max_m = ")
              << o.fusedMaxM << ")";
          return WalkResult::interrupt();
        }
        o.fusedMaxM = 0;
      }
      if (std::optional<OverrideError> bad = checkOverrides(vectorBits, o)) {
        op.emitOpError("strategy option ") << bad->key << " " << bad->message;
        return WalkResult::interrupt();
      }
      StrategyChoice c = chooseStrategy(vectorBits, shape, o, machine);
      if (failed(StrategyAttr::verify(
              [&] { return op.emitOpError(); }, c.vectorBits, c.mr, c.nr, c.mc,
              c.prefetch, c.fusedMaxM, c.chunk, c.groups)))
        return WalkResult::interrupt();
      op.setStrategyAttr(StrategyAttr::get(op.getContext(), c.vectorBits, c.mr,
                                           c.nr, c.mc, c.prefetch, c.fusedMaxM,
                                           c.chunk, c.groups));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
