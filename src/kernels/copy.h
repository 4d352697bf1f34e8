/* copy.h - memcpy for the node's bulk copies, without glibc's slow case.
 *
 * glibc (2.36 here) copies from a few KiB up with `rep movsb`, which on
 * some x86 cores runs at a tenth of its speed or less when the destination
 * lies just past the source modulo a page. malloc's large blocks start 16
 * bytes into a page, so copying out of a page-aligned shared buffer into one
 * hits it every time. Such copies go in 2 KiB pieces, which glibc moves with
 * vector loads and stores. build/bin/pccl-copybench 131072 on this project's
 * AMD EPYC VM (docs/results/cma/copy-128k.txt): memcpy 1.9-2.9 GB/s with the
 * destination 8-24 bytes past the source, pccl_copy 15.3-15.7; 35-46 GB/s
 * for both at 0 and from 32 bytes on. */
#ifndef PCCL_COPY_H
#define PCCL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PCCL_COPY_PIECE 2048 /* below glibc's rep movsb threshold */

static inline void *pccl_copy(void *dst, const void *src, size_t n) {
  uintptr_t ahead = ((uintptr_t)dst - (uintptr_t)src) & 4095;
  if (n <= PCCL_COPY_PIECE || ahead == 0 || ahead >= 32) return memcpy(dst, src, n);
  for (size_t at = 0; at < n; at += PCCL_COPY_PIECE)
    memcpy((char *)dst + at, (const char *)src + at, n - at < PCCL_COPY_PIECE ? n - at : PCCL_COPY_PIECE);
  return dst;
}

#endif /* PCCL_COPY_H */
