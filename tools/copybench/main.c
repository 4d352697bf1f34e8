/* pccl-copybench - memcpy against pccl_copy (src/kernels/copy.h) by how far
 * the destination lies past the source modulo a page: the case that made
 * copies into malloc's blocks slow on some x86 cores. One process; prints a
 * table (GB/s, best of 5 blocks) and, with a file name, writes it as CSV.
 * Usage: pccl-copybench [BYTES] [CSV] (BYTES default 131072). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "copy.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* GB/s of the best of 5 blocks of copies of n bytes src -> dst. */
static double rate(int use_pccl, char *dst, const char *src, size_t n) {
  int iters = (int)(200e6 / (double)n) + 1;
  double best = 1e30;
  for (int b = 0; b < 5; b++) {
    double t = now();
    for (int i = 0; i < iters; i++) {
      if (use_pccl)
        pccl_copy(dst, src, n);
      else
        memcpy(dst, src, n);
      __asm__ __volatile__("" : : "r"(dst) : "memory"); /* keep every copy */
    }
    t = (now() - t) / iters;
    if (t < best) best = t;
  }
  return (double)n / best / 1e9;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 131072;
  if (n == 0 || n > ((size_t)1 << 30)) {
    fprintf(stderr, "usage: pccl-copybench [BYTES 1..1G] [CSV]\n");
    return 2;
  }
  FILE *csv = argc > 2 ? fopen(argv[2], "w") : NULL;
  if (argc > 2 && !csv) {
    fprintf(stderr, "pccl-copybench: cannot write %s\n", argv[2]);
    return 2;
  }
  void *s = NULL, *d = NULL;
  if (posix_memalign(&s, 4096, n + 4096) || posix_memalign(&d, 4096, n + 8192)) {
    fprintf(stderr, "pccl-copybench: out of memory\n");
    return 1;
  }
  char *src = s, *dst = d;
  memset(src, 1, n + 4096);
  memset(dst, 2, n + 8192);
  static const int ahead[] = {0, 8, 16, 24, 32, 48, 64, 2048, 4080};
  printf("# %zu bytes, page-aligned source, destination `ahead` bytes past it modulo a page\n", n);
  printf("%8s %12s %12s\n", "ahead", "memcpy_gbs", "pccl_gbs");
  if (csv) fprintf(csv, "bytes,ahead,memcpy_gbs,pccl_gbs\n");
  for (size_t i = 0; i < sizeof ahead / sizeof ahead[0]; i++) {
    double m = rate(0, dst + ahead[i], src, n), p = rate(1, dst + ahead[i], src, n);
    printf("%8d %12.1f %12.1f\n", ahead[i], m, p);
    if (csv) fprintf(csv, "%zu,%d,%.2f,%.2f\n", n, ahead[i], m, p);
  }
  if (csv) fclose(csv);
  free(src);
  free(dst);
  return 0;
}
