//===- CublasLt.cpp - the cuBLASLt baseline of ffn-gpu-bench --------------===//
//
// Row-major Y[rows, n] = X[rows, k] W[k, n] is, in cuBLASLt's column-major
// terms, Y^T[n, rows] = W^T[n, k] X^T[k, rows] with no transposes: W as
// stored is the column-major n x k matrix (ld n), X the k x rows one (ld
// k), Y the n x rows one (ld n). A bias is then per row of D: per output
// feature, as the epilogue adds it.
//
//===----------------------------------------------------------------------===//

#include "CublasLt.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace gpu_bench;

namespace {

void checkLt(cublasStatus_t s, const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return;
  std::fprintf(stderr, "ffn-gpu-bench: %s: cuBLAS status %d\n", what,
               static_cast<int>(s));
  std::exit(3);
}

/// The 32 MiB cuBLAS recommends for Hopper's heuristics.
constexpr size_t kWorkspaceBytes = 32u << 20;
} // namespace

bool Lt::open(std::string &error) {
  std::vector<std::string> names;
  if (const char *env = std::getenv("FFN_CUBLASLT"))
    names.push_back(env);
  names.insert(names.end(),
               {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
  void *lib = nullptr;
  for (const std::string &n : names)
    if ((lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      path = n;
      break;
    }
  if (!lib) {
    error = "no cuBLASLt (libcublasLt.so.13 not found; set FFN_CUBLASLT to "
            "its path, e.g. the toolkit's lib64 or PyTorch's "
            "nvidia/cublas/lib)";
    return false;
  }
  bool ok =
      resolveSymbol(lib, Create, "cublasLtCreate") &&
      resolveSymbol(lib, GetVersion, "cublasLtGetVersion") &&
      resolveSymbol(lib, MatmulDescCreate, "cublasLtMatmulDescCreate") &&
      resolveSymbol(lib, MatmulDescSetAttribute,
                    "cublasLtMatmulDescSetAttribute") &&
      resolveSymbol(lib, MatrixLayoutCreate, "cublasLtMatrixLayoutCreate") &&
      resolveSymbol(lib, MatmulPreferenceCreate,
                    "cublasLtMatmulPreferenceCreate") &&
      resolveSymbol(lib, MatmulPreferenceSetAttribute,
                    "cublasLtMatmulPreferenceSetAttribute") &&
      resolveSymbol(lib, MatmulAlgoGetHeuristic,
                    "cublasLtMatmulAlgoGetHeuristic") &&
      resolveSymbol(lib, Matmul, "cublasLtMatmul");
  if (!ok) {
    error = path + " lacks an entry point ffn-gpu-bench needs";
    return false;
  }
  if (Create(&handle) != CUBLAS_STATUS_SUCCESS) {
    error = "cublasLtCreate failed";
    return false;
  }
  return true;
}

LtGemm::LtGemm(const Lt &lt, const Device &d, cudaDataType halfType,
               int64_t rows, int64_t k, int64_t n, LtEpilogue epilogue,
               bool residual)
    : lt(lt), d(d), epilogue(epilogue), residual(residual),
      workspace(d, kWorkspaceBytes) {
  checkLt(lt.MatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
  cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_DEFAULT;
  switch (epilogue) {
  case LtEpilogue::None:
    break;
  case LtEpilogue::Bias:
    e = CUBLASLT_EPILOGUE_BIAS;
    break;
  case LtEpilogue::Relu:
    e = CUBLASLT_EPILOGUE_RELU;
    break;
  case LtEpilogue::ReluBias:
    e = CUBLASLT_EPILOGUE_RELU_BIAS;
    break;
  case LtEpilogue::Gelu:
    e = CUBLASLT_EPILOGUE_GELU;
    break;
  case LtEpilogue::GeluBias:
    e = CUBLASLT_EPILOGUE_GELU_BIAS;
    break;
  }
  checkLt(lt.MatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e,
                                    sizeof(e)),
          "epilogue");
  if (hasBias())
    checkLt(lt.MatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                      &halfType, sizeof(halfType)),
            "bias type");
  checkLt(lt.MatrixLayoutCreate(&aLayout, halfType, n, k, n), "layout W");
  checkLt(lt.MatrixLayoutCreate(&bLayout, halfType, k, rows, k), "layout X");
  checkLt(lt.MatrixLayoutCreate(&cLayout, halfType, n, rows, n), "layout Y");
  cublasLtMatmulPreference_t pref = nullptr;
  checkLt(lt.MatmulPreferenceCreate(&pref), "preference");
  size_t bytes = kWorkspaceBytes;
  checkLt(lt.MatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes,
              sizeof(bytes)),
          "workspace preference");
  algos.resize(16);
  int returned = 0;
  checkLt(lt.MatmulAlgoGetHeuristic(
              lt.handle, desc, aLayout, bLayout, cLayout, cLayout, pref,
              static_cast<int>(algos.size()), algos.data(), &returned),
          "cublasLtMatmulAlgoGetHeuristic");
  algos.resize(returned);
  if (algos.empty()) {
    std::fprintf(stderr,
                 "ffn-gpu-bench: cuBLASLt has no algorithm for a "
                 "%lld x %lld x %lld GEMM\n",
                 static_cast<long long>(rows), static_cast<long long>(k),
                 static_cast<long long>(n));
    std::exit(3);
  }
}

void LtGemm::setBias(const void *bias) const {
  if (!hasBias())
    return;
  checkLt(lt.MatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                    &bias, sizeof(bias)),
          "bias pointer");
}

void LtGemm::matmul(int algo, const void *x, const void *w, const void *bias,
                    const void *c, void *y) const {
  setBias(bias);
  const float alpha = 1.0f, beta = residual ? 1.0f : 0.0f;
  checkLt(lt.Matmul(lt.handle, desc, &alpha, w, aLayout, x, bLayout, &beta,
                    residual ? c : y, cLayout, y, cLayout, &algos[algo].algo,
                    workspace.raw(), workspace.bytes(),
                    reinterpret_cast<cudaStream_t>(d.stream)),
          "cublasLtMatmul");
}

void LtGemm::tune(const void *x, const void *w, const void *bias, const void *c,
                  void *y, int reps) {
  CUevent start, stop;
  d.check(d.EventCreate(&start, 0), "cuEventCreate");
  d.check(d.EventCreate(&stop, 0), "cuEventCreate");
  float bestMs = 1e30f;
  for (int a = 0; a < candidates(); ++a) {
    matmul(a, x, w, bias, c, y); // warm-up
    d.check(d.EventRecord(start, d.stream), "cuEventRecord");
    for (int r = 0; r < reps; ++r)
      matmul(a, x, w, bias, c, y);
    d.check(d.EventRecord(stop, d.stream), "cuEventRecord");
    d.check(d.EventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    d.check(d.EventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    if (ms < bestMs) {
      bestMs = ms;
      best = a;
    }
  }
}

void LtGemm::run(const void *x, const void *w, const void *bias, const void *c,
                 void *y, bool heuristicFirst) const {
  matmul(heuristicFirst ? 0 : best, x, w, bias, c, y);
}
