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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define PCCL_COPY_PIECE 2048 /* below glibc's rep movsb threshold */

static inline void *pccl_copy(void *dst, const void *src, size_t n) {
  uintptr_t ahead = ((uintptr_t)dst - (uintptr_t)src) & 4095;
  if (n <= PCCL_COPY_PIECE || ahead == 0 || ahead >= 32) return memcpy(dst, src, n);
  for (size_t at = 0; at < n; at += PCCL_COPY_PIECE)
    memcpy((char *)dst + at, (const char *)src + at, n - at < PCCL_COPY_PIECE ? n - at : PCCL_COPY_PIECE);
  return dst;
}

/* A copy whose destination is not read again soon: on x86 the stores go
 * around the caches (non-temporal), so the destination's lines are not
 * first read from memory; elsewhere, and for a destination not 16-byte
 * aligned, pccl_copy. For outputs much larger than the caches, where
 * memory's bandwidth is what a copy waits on. */
static inline void *pccl_copy_stream(void *dst, const void *src, size_t n) {
#if defined(__SSE2__)
  char *d = (char *)dst;
  const char *s = (const char *)src;
  size_t at = 0;
  if (((uintptr_t)d & 15) == 0) {
    for (; at + 64 <= n; at += 64)
      for (int k = 0; k < 64; k += 16)
        _mm_stream_si128((__m128i *)(d + at + k), _mm_loadu_si128((const __m128i *)(s + at + k)));
    _mm_sfence();
  }
  pccl_copy(d + at, s + at, n - at);
  return dst;
#else
  return pccl_copy(dst, src, n);
#endif
}

#endif /* PCCL_COPY_H */
