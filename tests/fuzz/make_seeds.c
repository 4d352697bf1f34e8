/* make_seeds.c - seed corpora for the codec's fuzz targets: szp streams of
 * small generated arrays, and szi streams of the float32 and float64 ones
 * as 3-D arrays (fuzz_decompress), and the same arrays as fuzz_roundtrip
 * inputs. Usage: make_seeds DECOMPRESS_DIR ROUNDTRIP_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datagen.h"
#include "pccl.h"

static int write_file(const char *dir, const char *name, int i, const void *p, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s-%03d", dir, name, i);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "make_seeds: cannot write %s\n", path);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: make_seeds DECOMPRESS_DIR ROUNDTRIP_DIR\n");
    return 2;
  }
  static const pccl_dtype_t dtypes[4] = {PCCL_FLOAT32, PCCL_FLOAT64, PCCL_FLOAT16, PCCL_BFLOAT16};
  static const size_t counts[] = {0, 1, 33, 100};
  enum { MAXN = 100 };
  double x[MAXN];
  uint8_t elems[MAXN * 8], z[24 + 25 + MAXN * 8 + 8], in[3 + MAXN * 8];
  int id = 0, bad = 0;
  for (int kind = 0; kind < PCCL_DATA_COUNT; kind++)
    for (int ti = 0; ti < 4; ti++)
      for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++, id++) {
        size_t n = counts[ci], es = pccl_dtype_size(dtypes[ti]);
        double bound = ti % 2 ? 1e-2 : 1e-4;
        pccl_data_fill(kind, x, n, 1, 1, bound, (uint64_t)id);
        for (size_t i = 0; i < n; i++) { /* the native conversions are fine for seeds */
          float f = (float)x[i];
          uint32_t u;
          memcpy(&u, &f, 4);
          if (es == 8) memcpy(elems + 8 * i, &x[i], 8);
          if (es == 4) memcpy(elems + 4 * i, &f, 4);
          if (es == 2) {
            uint16_t h = dtypes[ti] == PCCL_BFLOAT16 ? (uint16_t)(u >> 16) : (uint16_t)0x3C00u + (uint16_t)(i % 64);
            memcpy(elems + 2 * i, &h, 2);
          }
        }
        size_t size = 0;
        if (pccl_compress(PCCL_CODEC_SZP, elems, n, dtypes[ti], bound, z, sizeof z, &size) != PCCL_OK) {
          fprintf(stderr, "make_seeds: compress %s failed\n", pccl_data_name(kind));
          return 1;
        }
        bad |= write_file(argv[1], pccl_data_name(kind), id, z, size);
        in[0] = (uint8_t)ti;
        in[1] = (uint8_t)(128 + (ti % 2 ? -7 : -14)); /* 2^-7, 2^-14 */
        in[2] = 0;
        memcpy(in + 3, elems, n * es);
        bad |= write_file(argv[2], pccl_data_name(kind), id, in, 3 + n * es);
        if (es < 4) continue;
        /* szi: 100 elements as 5 x 4 x 5 (fuzz_roundtrip: ny = 4, nz = 2 of 96) */
        size_t nx = n == 100 ? 5 : n, ny = n == 100 ? 4 : 1, nz = n == 100 ? 5 : 1;
        if (pccl_compress_3d(PCCL_CODEC_SZI, elems, nx, ny, nz, dtypes[ti], bound, z, sizeof z, &size) !=
            PCCL_OK) {
          fprintf(stderr, "make_seeds: szi compress %s failed\n", pccl_data_name(kind));
          return 1;
        }
        bad |= write_file(argv[1], "szi", id, z, size);
        in[0] = (uint8_t)(ti | 8 | (n == 100 ? 3 << 4 | 1 << 6 : 0));
        bad |= write_file(argv[2], "szi", id, in, 3 + n * es);
      }
  /* A zfp header (this build may lack zfp) and a bare header. */
  size_t size = 0;
  float one = 1;
  if (pccl_compress(PCCL_CODEC_SZP, &one, 1, PCCL_FLOAT32, 1.0, z, sizeof z, &size) == PCCL_OK) {
    z[3] = PCCL_CODEC_ZFP;
    bad |= write_file(argv[1], "zfp-header", id++, z, size);
    bad |= write_file(argv[1], "header", id++, z, 24);
  }
  return bad;
}
