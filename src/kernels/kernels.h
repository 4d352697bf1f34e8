/* kernels.h - element-wise CPU kernels by (datatype, op): reduction and the
 * AVG op's final division. One table, filled by macro instantiation. */
#ifndef PCCL_KERNELS_H
#define PCCL_KERNELS_H

#include <stddef.h>

#include "pccl.h"

/* dst[i] = a[i] op b[i]; dst may be a or b (same index), no other overlap. */
typedef void (*pccl_reduce_fn)(void *dst, const void *a, const void *b, size_t n);
/* dst[i] = dst[i] / divisor, in the type's own arithmetic. */
typedef void (*pccl_divide_fn)(void *dst, size_t n, int divisor);

/* Kernel for (dtype, op); AVG maps to SUM. NULL for out-of-range values. */
pccl_reduce_fn pccl_kernel_reduce(pccl_dtype_t dtype, pccl_op_t op);
pccl_divide_fn pccl_kernel_divide(pccl_dtype_t dtype);

#endif /* PCCL_KERNELS_H */
