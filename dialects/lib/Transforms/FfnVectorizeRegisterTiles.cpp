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

#include "ffn/Transforms/Passes.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ffn {
#define GEN_PASS_DEF_FFNVECTORIZEREGISTERTILES
#include "ffn/Transforms/Passes.h.inc"
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
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
    // The accumulator tile's read and write are loop invariant: hoisting
    // them turns the accumulators into loop-carried vectors (registers),
    // out of the K loop and then out of the chunk loop around it.
    linalg::hoistRedundantVectorTransfers(func);

    // contract -> outer products -> broadcast + fma per accumulator row;
    // the remaining 2-D transfers (A's column, W's row, the hoisted tile)
    // become 1-D loads and stores.
    RewritePatternSet patterns(ctx);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    populateVectorToSCFConversionPatterns(
        patterns, VectorTransferToSCFOptions().enableFullUnroll());
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    addCanonicalizations(patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
