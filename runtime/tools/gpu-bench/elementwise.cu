// The elementwise kernels of the cuBLASLt baselines. act(g) * u: cuBLASLt
// has no SiLU or GLU epilogue, so a gated FFN's baseline is GEMM(s) for the
// gate and up projections, then h = act(g) * u here, then the down GEMM.
//
// Two layouts of g and u, one per baseline: separate [rows, d_ff] buffers
// (two GEMMs), or one [rows, 2 d_ff] buffer holding g | u per row (one GEMM
// over the concatenated weights). Each thread does 16 bytes of elements (8
// bf16/f16, 4 f32) with 16-byte loads and stores (the host checks that d_ff
// is a multiple of 8).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

enum Act { Silu, Gelu, GeluTanh, Relu };

template <Act A> __device__ float act(float x) {
  if (A == Silu)
    return x / (1.0f + __expf(-x));
  if (A == Gelu)
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  if (A == GeluTanh)
    return 0.5f * x *
           (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  return fmaxf(x, 0.0f);
}

__device__ float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ float toFloat(__half v) { return __half2float(v); }
__device__ float toFloat(float v) { return v; }
template <typename T> __device__ T fromFloat(float v);
template <> __device__ __nv_bfloat16 fromFloat(float v) {
  return __float2bfloat16(v);
}
template <> __device__ __half fromFloat(float v) { return __float2half(v); }
template <> __device__ float fromFloat(float v) { return v; }

/// h[r, j] = act(g[r, j]) * u[r, j]; g and u rows `stride` elements apart.
template <typename T, Act A>
__device__ void glu(const T *g, const T *u, T *h, long long rows, long long dff,
                    long long stride) {
  constexpr int V = 16 / sizeof(T);
  long long chunks = dff / V;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= rows * chunks)
    return;
  long long r = i / chunks, c = (i % chunks) * V;
  uint4 gv = *reinterpret_cast<const uint4 *>(g + r * stride + c);
  uint4 uv = *reinterpret_cast<const uint4 *>(u + r * stride + c);
  const T *ge = reinterpret_cast<const T *>(&gv);
  const T *ue = reinterpret_cast<const T *>(&uv);
  uint4 hv;
  T *he = reinterpret_cast<T *>(&hv);
#pragma unroll
  for (int e = 0; e < V; ++e)
    he[e] = fromFloat<T>(act<A>(toFloat(ge[e])) * toFloat(ue[e]));
  *reinterpret_cast<uint4 *>(h + r * dff + c) = hv;
}

} // namespace

#define FFN_BENCH_GLU(T, tname, A, aname)                                      \
  extern "C" __global__ void ffn_bench_glu_##aname##_##tname##_separate(       \
      const T *g, const T *u, T *h, long long rows, long long dff) {           \
    glu<T, A>(g, u, h, rows, dff, dff);                                        \
  }                                                                            \
  extern "C" __global__ void ffn_bench_glu_##aname##_##tname##_concat(         \
      const T *gu, T *h, long long rows, long long dff) {                      \
    glu<T, A>(gu, gu + dff, h, rows, dff, 2 * dff);                            \
  }

#define FFN_BENCH_GLU_TYPES(A, aname)                                          \
  FFN_BENCH_GLU(__nv_bfloat16, bf16, A, aname)                                 \
  FFN_BENCH_GLU(__half, f16, A, aname)                                         \
  FFN_BENCH_GLU(float, f32, A, aname)

FFN_BENCH_GLU_TYPES(Silu, silu)
FFN_BENCH_GLU_TYPES(Gelu, gelu)
FFN_BENCH_GLU_TYPES(GeluTanh, gelu_tanh)
FFN_BENCH_GLU_TYPES(Relu, relu)

// The mixture-of-experts baseline's data movement around its per-expert
// GEMMs: the rows each expert takes gathered into one contiguous block per
// expert, and each row's slots weighed and summed back (choices in order,
// then the shared experts, then the residual).
namespace {

/// out[p] = x[rows[p]] for p < n, rows of dm elements (dm a multiple of 8).
template <typename T>
__device__ void gatherRows(const T *x, const int *rows, T *out, long long n,
                           long long dm) {
  constexpr int V = 16 / sizeof(T);
  long long chunks = dm / V;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n * chunks)
    return;
  long long p = i / chunks, c = (i % chunks) * V;
  *reinterpret_cast<uint4 *>(out + p * dm + c) =
      *reinterpret_cast<const uint4 *>(x + (long long)rows[p] * dm + c);
}

/// y[r, c] = sum_j<k g[r, j] ys[pos[r, j], c] + sum_j>=k ys[pos[r, j], c]
/// [+ x[r, c]], slots positions a row.
template <typename T>
__device__ void combineSlots(const T *ys, const int *pos, const float *g,
                             const T *x, T *y, long long m, long long dm, int k,
                             int slots) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= m * dm)
    return;
  long long r = i / dm, c = i % dm;
  float f = 0.0f;
  for (int j = 0; j < slots; ++j) {
    float v = toFloat(ys[(long long)pos[r * slots + j] * dm + c]);
    f = j < k ? fmaf(g[r * k + j], v, f) : f + v;
  }
  if (x)
    f += toFloat(x[i]);
  y[i] = fromFloat<T>(f);
}

} // namespace

#define FFN_BENCH_MOE(T, tname)                                                \
  extern "C" __global__ void ffn_bench_gather_##tname(                         \
      const T *x, const int *rows, T *out, long long n, long long dm) {        \
    gatherRows<T>(x, rows, out, n, dm);                                        \
  }                                                                            \
  extern "C" __global__ void ffn_bench_combine_##tname(                        \
      const T *ys, const int *pos, const float *g, const T *x, T *y,           \
      long long m, long long dm, int k, int slots) {                           \
    combineSlots<T>(ys, pos, g, x, y, m, dm, k, slots);                        \
  }

FFN_BENCH_MOE(__nv_bfloat16, bf16)
FFN_BENCH_MOE(__half, f16)
FFN_BENCH_MOE(float, f32)

// The norm of a pre- or post-norm FFN's baseline (PyTorch's order: a
// post-norm reads GEMM 2's output in the dtype): one block of 256 threads
// a row; LayerNorm takes the mean, then the variance of the deviations;
// RMSNorm the mean of squares; f32 sums. out = (v - mean) rsqrt(var + eps)
// scale [+ shift].
namespace {

constexpr int kNormThreads = 256;

/// The block's sum of each thread's v (every thread gets it).
__device__ float blockSum(float v, float *partial) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads(); // partial may still be read from the last sum
  if ((threadIdx.x & 31) == 0)
    partial[threadIdx.x >> 5] = v;
  __syncthreads();
  float s = 0.0f;
  for (int w = 0; w < kNormThreads / 32; ++w)
    s += partial[w];
  return s;
}

template <typename T, bool Layer>
__device__ void normRow(const T *in, T *out, const T *scale, const T *shift,
                        long long width, float eps) {
  __shared__ float partial[kNormThreads / 32];
  const T *row = in + blockIdx.x * width;
  T *outRow = out + blockIdx.x * width;
  float mean = 0.0f;
  if (Layer) {
    float s = 0.0f;
    for (long long c = threadIdx.x; c < width; c += kNormThreads)
      s += toFloat(row[c]);
    mean = blockSum(s, partial) / width;
  }
  float q = 0.0f;
  for (long long c = threadIdx.x; c < width; c += kNormThreads) {
    float d = toFloat(row[c]) - mean;
    q = fmaf(d, d, q);
  }
  float rstd = rsqrtf(blockSum(q, partial) / width + eps);
  for (long long c = threadIdx.x; c < width; c += kNormThreads) {
    float v = (toFloat(row[c]) - mean) * rstd * toFloat(scale[c]);
    if (shift)
      v += toFloat(shift[c]);
    outRow[c] = fromFloat<T>(v);
  }
}

} // namespace

#define FFN_BENCH_NORM(T, tname)                                               \
  extern "C" __global__ void ffn_bench_layernorm_##tname(                      \
      const T *in, T *out, const T *scale, const T *shift, long long width,    \
      float eps) {                                                             \
    normRow<T, true>(in, out, scale, shift, width, eps);                       \
  }                                                                            \
  extern "C" __global__ void ffn_bench_rmsnorm_##tname(                        \
      const T *in, T *out, const T *scale, const T *shift, long long width,    \
      float eps) {                                                             \
    normRow<T, false>(in, out, scale, shift, width, eps);                      \
  }

FFN_BENCH_NORM(__nv_bfloat16, bf16)
FFN_BENCH_NORM(__half, f16)
FFN_BENCH_NORM(float, f32)
