/* permute.c - in-place permutation of equal-size blocks by cycles (PICCL's
 * reorder after permuted recursive multiplying). A permutation is turned into
 * its cycles once, when the schedule is built; running it then rotates each
 * cycle once through one block of scratch, so no second full-size buffer is
 * needed and every block is read and written once. */
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

size_t pccl_perm_cycles(const uint32_t *src_of, uint32_t n, uint32_t *out) {
  unsigned char *seen = calloc((size_t)n / 8 + 1, 1);
  if (!seen) return SIZE_MAX;
  size_t w = 0;
  for (uint32_t start = 0; start < n; start++) {
    if (seen[start / 8] & (1u << (start % 8)) || src_of[start] == start) continue;
    size_t len_at = w++;
    uint32_t len = 0;
    for (uint32_t i = start; !(seen[i / 8] & (1u << (i % 8))); i = src_of[i]) {
      seen[i / 8] |= (unsigned char)(1u << (i % 8));
      out[w++] = i;
      len++;
    }
    out[len_at] = len;
  }
  free(seen);
  return w;
}

void pccl_permute_cycles(void *base, size_t block_bytes, const uint32_t *cycles, size_t nwords,
                         void *tmp) {
  char *b = base;
  for (size_t w = 0; w < nwords; w += 1 + cycles[w]) {
    const uint32_t *c = &cycles[w + 1];
    uint32_t len = cycles[w];
    memcpy(tmp, b + (size_t)c[0] * block_bytes, block_bytes);
    for (uint32_t j = 0; j + 1 < len; j++)
      memcpy(b + (size_t)c[j] * block_bytes, b + (size_t)c[j + 1] * block_bytes, block_bytes);
    memcpy(b + (size_t)c[len - 1] * block_bytes, tmp, block_bytes);
  }
}
