/* kernels.h - CPU kernels: element-wise ones by (datatype, op), reduction and
 * the AVG op's final division, from one table filled by macro instantiation;
 * and the in-place block permutation. */
#ifndef PCCL_KERNELS_H
#define PCCL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "pccl.h"

/* dst[i] = a[i] op b[i]; dst may be a or b (same index), no other overlap. */
typedef void (*pccl_reduce_fn)(void *dst, const void *a, const void *b, size_t n);
/* dst[i] = dst[i] / divisor, in the type's own arithmetic. */
typedef void (*pccl_divide_fn)(void *dst, size_t n, int divisor);

/* Kernel for (dtype, op); AVG maps to SUM. NULL for out-of-range values and
 * for an op not defined on the type. */
pccl_reduce_fn pccl_kernel_reduce(pccl_dtype_t dtype, pccl_op_t op);
/* NULL for types without AVG (bool, pairs) and out-of-range values. */
pccl_divide_fn pccl_kernel_divide(pccl_dtype_t dtype);


/* The cycles of the permutation that brings the block at src_of[x] to x, for
 * pccl_permute_cycles: each nontrivial cycle as its length L, then positions
 * c0 .. c(L-1) (the block at c(j+1) moves to cj, the one at c0 to c(L-1)).
 * `out` needs room for n + n/2 words. Returns the words written, SIZE_MAX when
 * out of memory. */
size_t pccl_perm_cycles(const uint32_t *src_of, uint32_t n, uint32_t *out);

/* Applies cycles (from pccl_perm_cycles) in place to blocks of block_bytes at
 * base, through tmp (one block). */
void pccl_permute_cycles(void *base, size_t block_bytes, const uint32_t *cycles, size_t nwords,
                         void *tmp);

#endif /* PCCL_KERNELS_H */
