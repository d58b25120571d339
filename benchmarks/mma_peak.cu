// mma_peak.cu — the mma.sync instruction's own throughput on this GPU: each warp
// runs CHAINS independent accumulators through ITERS rounds of mma.sync, with no
// memory traffic in the loop, so the tensor pipe is the only limit. The ceiling a
// GEMM built on mma.sync can approach (docs/performance.md, "The mma.sync ceiling").
//
//   nvcc -O3 -arch=sm_90a benchmarks/mma_peak.cu -o /tmp/mma_peak && /tmp/mma_peak
#include <cstdio>
#include <cuda_runtime.h>

// One m16n8k16 (f16 or bf16 inputs) or m16n8k8 (tf32) mma.sync per chain per round.
#define MMA_KERNEL(NAME, ACC_T, ACC_N, ASM, CONSTRAINT)                                   \
  template <int CHAINS>                                                                   \
  __global__ void NAME(float *out, int iters, unsigned a0, unsigned b0) {                 \
    ACC_T c[CHAINS][ACC_N] = {};                                                          \
    unsigned a[4] = {a0, a0 ^ 1, a0 ^ 2, a0 ^ 3}, b[2] = {b0, b0 ^ 5};                    \
    for (int it = 0; it < iters; ++it) {                                                  \
      _Pragma("unroll") for (int i = 0; i < CHAINS; ++i) ASM;                             \
    }                                                                                     \
    float s = 0;                                                                          \
    for (int i = 0; i < CHAINS; ++i)                                                      \
      for (int j = 0; j < ACC_N; ++j) s += (float)c[i][j];                                \
    out[blockIdx.x * blockDim.x + threadIdx.x] = s; /* keeps the chains live */           \
  }

MMA_KERNEL(f16_acc_f16, unsigned, 2,
           asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, "
                        "{%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                        : "+r"(c[i][0]), "+r"(c[i][1])
                        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])), )

// The f32-accumulating forms differ only in the instruction's name.
#define F32_MMA_KERNEL(NAME, INSTRUCTION)                                                 \
  MMA_KERNEL(NAME, float, 4,                                                              \
             asm volatile(INSTRUCTION " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
                          : "+f"(c[i][0]), "+f"(c[i][1]), "+f"(c[i][2]), "+f"(c[i][3])    \
                          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),        \
                            "r"(b[1])), )

F32_MMA_KERNEL(f32_acc_f16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
F32_MMA_KERNEL(f32_acc_bf16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")
F32_MMA_KERNEL(f32_acc_tf32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")

template <typename Kernel>
void run(const char *name, Kernel kernel, double flop_per_mma, int chains, int warps_per_sm) {
  int device;
  cudaGetDevice(&device);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, device);
  const int iters = 4096, blocks = prop.multiProcessorCount, threads = 32 * warps_per_sm;
  float *out;
  cudaMalloc(&out, sizeof(float) * blocks * threads);
  const unsigned one = 0x3c003c00u;  // two f16 ones; any bits do for timing
  for (int w = 0; w < 3; ++w) kernel<<<blocks, threads>>>(out, iters, one, one);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float best = 1e30f;
  for (int r = 0; r < 10; ++r) {  // best of 10: the instruction's peak, not a typical run
    cudaEventRecord(start);
    kernel<<<blocks, threads>>>(out, iters, one, one);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms;
    cudaEventElapsedTime(&ms, start, stop);
    best = ms < best ? ms : best;
  }
  double flop = (double)blocks * warps_per_sm * iters * chains * flop_per_mma;
  printf("%-14s %2d chains, %2d warps/SM: %7.1f TFLOP/s  (%s)\n", name, chains, warps_per_sm,
         flop / best / 1e9, cudaGetErrorString(cudaGetLastError()));
  cudaFree(out);
}

int main() {
  const double k16 = 2.0 * 16 * 8 * 16, k8 = 2.0 * 16 * 8 * 8;  // FLOP per mma.sync
  for (int warps : {4, 8, 16}) {
    run("f16 += f16", f16_acc_f16<8>, k16, 8, warps);
    run("f32 += f16", f32_acc_f16<8>, k16, 8, warps);
    run("f32 += bf16", f32_acc_bf16<8>, k16, 8, warps);
    run("f32 += tf32", f32_acc_tf32<8>, k8, 8, warps);
  }
  return 0;
}
