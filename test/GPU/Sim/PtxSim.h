//===- PtxSim.h - a PTX interpreter behind the stand-in driver --*- C -*-===//
//
// The stand-in libcuda.so.1 (fake_cuda.c) runs kernels through this
// interpreter when FFN_FAKE_CUDA_PTX names the PTX of the module it loads
// (ffnc --emit=ptx of the same spec and target), so the GPU kernels'
// numerics are checked on machines without a GPU. It models what the
// kernels rely on: independent thread scheduling with warp-collective
// instructions (mma.sync, ldmatrix, shfl.sync, vote) executed once every
// live lane of a warp has reached them, block barriers, cp.async groups that
// land only at their wait (a read before the wait sees stale shared memory),
// and bounds on every global access (only allocated ranges may be touched).
// On sm_90a it also runs warpgroup MMAs (wgmma) and TMA tile loads
// (cp.async.bulk.tensor) completing on mbarriers, whose copies land only
// when a thread waits on the barrier (see PtxAsync.cpp).
// It does not model timing, caches or the memory model beyond that.
//
//===----------------------------------------------------------------------===//

#ifndef FFNC_TEST_GPU_SIM_PTXSIM_H
#define FFNC_TEST_GPU_SIM_PTXSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The stand-in driver's tensor map: cuTensorMapEncodeTiled (fake_cuda.c)
/// writes it into the caller's 128-byte CUtensorMap, which reaches the
/// kernel as a by-value parameter; cp.async.bulk.tensor reads it back and
/// refuses 128 bytes that do not start with the magic number.
#define PTXSIM_TENSOR_MAP_MAGIC 0x50544d6170536d31ull /* "1mSpaMTP" */
typedef struct PtxsimTensorMap {
  uint64_t magic;
  uint64_t globalAddress;
  uint64_t globalDim[5];     /* elements */
  uint64_t globalStrides[4]; /* bytes, of dimensions 1 .. rank - 1 */
  uint32_t boxDim[5];        /* elements */
  uint8_t elementStrides[5];
  uint8_t rank;
  uint8_t dataType; /* CUtensorMapDataType */
  uint8_t elementBytes;
  uint8_t swizzle; /* the span in bytes: 0 (none), 32, 64 or 128 */
  uint8_t interleave, l2Promotion, oobFill;
  uint8_t reserved[8];
} PtxsimTensorMap;
#ifdef __cplusplus
static_assert(sizeof(PtxsimTensorMap) == 128, "a CUtensorMap is 128 bytes");
#else
_Static_assert(sizeof(PtxsimTensorMap) == 128, "a CUtensorMap is 128 bytes");
#endif

/// Parses the PTX files of the colon-separated list `paths`. Returns NULL on
/// success, otherwise a message (owned by the simulator).
const char *ptxsim_load(const char *paths);

/// Whether a loaded module defines the kernel `name`.
int ptxsim_has_kernel(const char *name);

/// Records [base, base + bytes) as device memory a kernel may touch.
void ptxsim_track(uint64_t base, size_t bytes);
void ptxsim_untrack(uint64_t base);

/// Runs `name` to completion. `params` holds one pointer per kernel
/// parameter, as cuLaunchKernel takes them. Returns NULL on success,
/// otherwise a message naming the kernel, the block, the thread and the
/// PTX line.
const char *ptxsim_launch(const char *name, const unsigned grid[3],
                          const unsigned block[3], unsigned dynamicShared,
                          void **params);

#ifdef __cplusplus
}
#endif

#endif
