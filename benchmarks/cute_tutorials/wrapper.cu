// One of CuTe's tutorial GEMMs as a shared library with C entry points, for
// benchmarks/gemm.py. The tutorial is not copied: this file #includes the .cu
// that the nvidia-cutlass wheel ships (prepare.py extracts it) and calls the
// tutorial's own host functions gemm_nt / gemm_tn, which launch its kernels.
//
// Built once per tutorial by build.py, which writes a two-line source that
// defines CUTE_TUTORIAL_SOURCE (the tutorial's path, a string) and the
// WRAP_<dtype>_<layout> macros, then includes this file, and compiles it with
//   nvcc -O3 -std=c++17 -arch=sm_90a --shared -Xcompiler -fPIC --expt-relaxed-constexpr
//        -I<cutlass>/include -I<cutlass>/tools/util/include
// WRAP_<dtype>_<layout> selects the entry points the library exports, since
// each tutorial implements a different set (sgemm_sm80's f16 NT is an
// assert(false) stub; its generic f32 path is SIMT with cp.async).
//
// Entry points (all return the first CUDA error of the call, 0 for none):
//   int cute_gemm_f32_nt(int m, int n, int k, float alpha, const float* A, int ldA,
//                        const float* B, int ldB, float beta, float* C, int ldC,
//                        cudaStream_t stream);
//   cute_gemm_f32_tn: same arguments.
//   cute_gemm_f16_nt / cute_gemm_f16_tn: pointers to f16 (cute::half_t); alpha and
//                        beta are passed as float and converted to half_t, as the
//                        tutorials' own main() uses half_t scalars.
// Conventions are the tutorials' (column-major BLAS): NT: A is (M,K) M-major
// (ldA >= M), B is (N,K) N-major (ldB >= N); TN: both K-major (ldA, ldB >= K);
// C is (M,N) M-major (ldC >= M). The tutorials do not predicate: M and N must
// be multiples of 128 and K of the tutorial's K tile (8, or 64 for f16).
#include <cstdio>
#include <cuda_runtime.h>

// The tutorials end a launch with CUTE_CHECK_LAST(), which also synchronises
// the device (that would add a host round trip to every timed launch), and
// exit() on a CUDA error (that would kill the benchmark). Both macros are
// #ifndef-guarded in cute/util/debug.hpp: record the first error instead and
// leave synchronisation to the caller. Nothing in the kernels changes.
static cudaError_t cute_wrapper_first_error = cudaSuccess;
#define CUTE_ERROR_EXIT(e)                                                        \
  do {                                                                            \
    cudaError_t cute_wrapper_code = (e);                                          \
    if (cute_wrapper_code != cudaSuccess && cute_wrapper_first_error == cudaSuccess) \
      cute_wrapper_first_error = cute_wrapper_code;                               \
  } while (0)
#define CUTE_CHECK_LAST() CUTE_ERROR_EXIT(cudaPeekAtLastError())

// Everything the tutorials include, before `main` is renamed, so that no
// header sees the macro (the Hopper tutorials include a few more headers of
// cutlass, none of which names `main`).
#include <cassert>
#include <cstdlib>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <cute/tensor.hpp>
#include "cutlass/util/GPU_Clock.hpp"
#include "cutlass/util/helper_cuda.hpp"
#include "cutlass/util/print_error.hpp"

#define main cute_tutorial_main
#include CUTE_TUTORIAL_SOURCE
#undef main

namespace {

template <class Launch>
int cute_wrapper_run(Launch launch) {
  cute_wrapper_first_error = cudaSuccess;
  launch();
  CUTE_ERROR_EXIT(cudaGetLastError());
  return static_cast<int>(cute_wrapper_first_error);
}

}  // namespace

#define CUTE_WRAP_F32(NAME, HOST)                                                  \
  extern "C" int NAME(int m, int n, int k, float alpha, const float* A, int ldA,   \
                      const float* B, int ldB, float beta, float* C, int ldC,      \
                      cudaStream_t stream) {                                       \
    return cute_wrapper_run(                                                       \
        [&] { HOST(m, n, k, alpha, A, ldA, B, ldB, beta, C, ldC, stream); });     \
  }

#define CUTE_WRAP_F16(NAME, HOST)                                                  \
  extern "C" int NAME(int m, int n, int k, float alpha, const void* A, int ldA,    \
                      const void* B, int ldB, float beta, void* C, int ldC,        \
                      cudaStream_t stream) {                                       \
    using T = cute::half_t;                                                        \
    return cute_wrapper_run([&] {                                                  \
      HOST(m, n, k, T(alpha), static_cast<const T*>(A), ldA,                      \
           static_cast<const T*>(B), ldB, T(beta), static_cast<T*>(C), ldC, stream); \
    });                                                                            \
  }

#ifdef WRAP_F32_NT
CUTE_WRAP_F32(cute_gemm_f32_nt, gemm_nt)
#endif
#ifdef WRAP_F32_TN
CUTE_WRAP_F32(cute_gemm_f32_tn, gemm_tn)
#endif
#ifdef WRAP_F16_NT
CUTE_WRAP_F16(cute_gemm_f16_nt, gemm_nt)
#endif
#ifdef WRAP_F16_TN
CUTE_WRAP_F16(cute_gemm_f16_tn, gemm_tn)
#endif
