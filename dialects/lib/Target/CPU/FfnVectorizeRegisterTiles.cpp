//===- FfnVectorizeRegisterTiles.cpp - register tiles to FMAs -------------===//
//
// ffn-lower-packed leaves each register tile as a K loop (made by
// TilingInterface) around a one-k-step contraction on memrefs:
//
//   scf.for %k {
//     linalg.generic {ffn.register_tile} ins(A[rows x 1], W[1 x nr]...)
//                                        outs(acc[rows x nr]...)
//   }
//
// This pass vectorizes those with the upstream vectorizer and cleans the
// result up into the code the probes showed is fast: the accumulator reads
// and writes hoisted out of the loops (loop-carried vector values in
// registers), the contraction lowered through outer products to one
// broadcast of A per row and one vector.fma per accumulator row and k.
// The iteration order (row, k, column) keeps W's row in its natural layout,
// so no transposes appear; only A's element is broadcast.
//
//===----------------------------------------------------------------------===//

#include "ffn/Target/CPU/Passes.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNVECTORIZEREGISTERTILES
#include "ffn/Target/CPU/Passes.h.inc"
} // namespace mlir::ffn

using namespace mlir;

namespace {

/// Canonicalization patterns of the ops the vectorized tiles consist of
/// (not the whole context's: this runs on every packed kernel and must
/// stay cheap).
void addCanonicalizations(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
  vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
  vector::BroadcastOp::getCanonicalizationPatterns(patterns, ctx);
  vector::ExtractOp::getCanonicalizationPatterns(patterns, ctx);
  vector::InsertOp::getCanonicalizationPatterns(patterns, ctx);
  vector::ShapeCastOp::getCanonicalizationPatterns(patterns, ctx);
  vector::TransposeOp::getCanonicalizationPatterns(patterns, ctx);
  vector::ContractionOp::getCanonicalizationPatterns(patterns, ctx);
  vector::MultiDimReductionOp::getCanonicalizationPatterns(patterns, ctx);
  memref::SubViewOp::getCanonicalizationPatterns(patterns, ctx);
}

struct FfnVectorizeRegisterTiles
    : ffn::impl::FfnVectorizeRegisterTilesBase<FfnVectorizeRegisterTiles> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<linalg::LinalgOp> tiles;
    func.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(ffn::kRegisterTileAttr))
        tiles.push_back(op);
    });
    if (tiles.empty())
      return;

    // Patterns and hoisting run on the tiles' scopes only: the tile-height
    // switch around each tile (ffn-lower-packed's), else the function. The
    // epilogues' large polynomial code need not be walked again and again.
    llvm::SetVector<Operation *> scopes;
    for (linalg::LinalgOp op : tiles) {
      Operation *scope = op->getParentOfType<scf::IndexSwitchOp>();
      scopes.insert(scope ? scope : func.getOperation());
    }
    auto apply = [&](const FrozenRewritePatternSet &patterns) {
      for (Operation *scope : scopes)
        if (failed(applyPatternsGreedily(scope, patterns)))
          return failure();
      return success();
    };

    IRRewriter rewriter(ctx);
    for (linalg::LinalgOp op : tiles) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::vectorize(rewriter, op))) {
        op->emitOpError("register tile does not vectorize (no scalar "
                        "fallback for packed kernels)");
        return signalPassFailure();
      }
      // On memrefs the vectorized op writes through transfer_write and has
      // no results to replace.
      rewriter.eraseOp(op);
    }

    // The vectorizer writes the k-step as an elementwise product and a
    // reduction over the unit k dimension; fold that into vector.contract.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorReductionToContractPatterns(patterns);
      // A's element is read as a broadcast transfer; as an explicit
      // broadcast it folds into the contraction's indexing maps.
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      addCanonicalizations(patterns);
      if (failed(apply(std::move(patterns))))
        return signalPassFailure();
    }
    // contract -> outer products -> broadcast + fma per accumulator row;
    // the 2-D transfers (A's column, W's row, the accumulator tile) become
    // 1-D loads and stores, one per row, so that after hoisting each
    // accumulator row is a loop-carried vector of its own (2-D values
    // would reach LLVM as arrays rebuilt element by element).
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorOuterProductLoweringPatterns(patterns);
      populateVectorToSCFConversionPatterns(
          patterns, VectorTransferToSCFOptions().enableFullUnroll());
      // A's elements as scalar loads, not one-lane vectors.
      vector::populateScalarVectorTransferLoweringPatterns(
          patterns, /*benefit=*/1, /*allowMultipleUses=*/true);
      addCanonicalizations(patterns);
      if (failed(apply(std::move(patterns))))
        return signalPassFailure();
    }
    // Each accumulator row's read and write are loop invariant: hoisting
    // them turns the accumulators into loop-carried vectors (registers),
    // out of the K loop and then out of the chunk loop around it.
    for (Operation *scope : scopes)
      linalg::hoistRedundantVectorTransfers(scope);

    // Loads straight from A, W and the buffers: the k-step's subviews fold
    // into the load indices (fewer ops for every later pass to lower).
    RewritePatternSet patterns(ctx);
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    memref::populateFoldMemRefAliasOpPatterns(patterns);
    addCanonicalizations(patterns);
    if (failed(apply(std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
