/* hd.h - PCCL_HD marks small functions that CUDA code shares with the CPU
 * (element operations, 16-bit float conversions, the codec's block coding):
 * compiled by nvcc they run on the host and on the device, so a GPU kernel
 * computes bit for bit what the CPU kernel does, from the same source. */
#ifndef PCCL_HD_H
#define PCCL_HD_H

#if defined(__CUDACC__)
#define PCCL_HD static __host__ __device__ inline
#else
#define PCCL_HD static inline
#endif

#endif /* PCCL_HD_H */
