//===- CublasLt.h - the cuBLASLt baseline of ffn-gpu-bench ------*- C++ -*-===//
//
// cuBLASLt opened with dlopen (the toolkit's libcublasLt.so.13, or
// $FFN_CUBLASLT), and one GEMM of an FFN as cuBLASLt runs it: bf16/f16 in
// and out, f32 accumulate and scale, row-major activations times the
// spec's [in, out] weights, with the epilogues cuBLASLt has (bias, GELU
// (tanh form) + bias) and the residual through beta (D = A B + C). The
// algorithm is autotuned: up to 16 heuristic candidates, each timed, the
// fastest kept; the heuristic's first choice is kept too (what frameworks
// get without tuning).
//
//===----------------------------------------------------------------------===//

#ifndef FFN_GPU_BENCH_CUBLASLT_H
#define FFN_GPU_BENCH_CUBLASLT_H

#include "Device.h"

#include <cublasLt.h>

#include <string>
#include <vector>

namespace gpu_bench {

struct Lt {
  decltype(&cublasLtCreate) Create;
  decltype(&cublasLtGetVersion) GetVersion;
  decltype(&cublasLtMatmulDescCreate) MatmulDescCreate;
  decltype(&cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute;
  decltype(&cublasLtMatrixLayoutCreate) MatrixLayoutCreate;
  decltype(&cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate;
  decltype(&cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute;
  decltype(&cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic;
  decltype(&cublasLtMatmul) Matmul;
  cublasLtHandle_t handle = nullptr;
  std::string path;

  bool open(std::string &error);
};

/// What the GEMM's epilogue does (GELU is cuBLASLt's tanh form).
enum class LtEpilogue { None, Bias, Relu, ReluBias, Gelu, GeluBias };

/// One GEMM, rows x k times k x n, as its layouts and tuned algorithm.
class LtGemm {
public:
  /// `halfType`: CUDA_R_16BF or CUDA_R_16F. `residual`: D = A B (+ bias)
  /// + C with C given at run time.
  LtGemm(const Lt &lt, const Device &d, cudaDataType halfType, int64_t rows,
         int64_t k, int64_t n, LtEpilogue epilogue, bool residual);
  /// Chooses the algorithm on these buffers: the fastest of the heuristic's
  /// candidates over `reps` runs each.
  void tune(const void *x, const void *w, const void *bias, const void *c,
            void *y, int reps);
  void run(const void *x, const void *w, const void *bias, const void *c,
           void *y, bool heuristicFirst = false) const;
  int candidates() const { return static_cast<int>(algos.size()); }

private:
  const Lt &lt;
  const Device &d;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t aLayout = nullptr, bLayout = nullptr,
                         cLayout = nullptr;
  LtEpilogue epilogue;
  bool residual;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  int best = 0;
  Buffer workspace;
  bool hasBias() const {
    return epilogue == LtEpilogue::Bias || epilogue == LtEpilogue::ReluBias ||
           epilogue == LtEpilogue::GeluBias;
  }
  void setBias(const void *bias) const;
  void matmul(int algo, const void *x, const void *w, const void *bias,
              const void *c, void *y) const;
};

} // namespace gpu_bench

#endif // FFN_GPU_BENCH_CUBLASLT_H
