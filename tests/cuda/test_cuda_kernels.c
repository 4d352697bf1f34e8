/* test_cuda_kernels.c - the device kernels against the CPU kernels, which
 * unit_kernels checks against independent references: every datatype x op
 * of the reduction (vector path, tails, misaligned and in-place buffers,
 * NaN/Inf/-0/subnormal values), the AVG division, copies, and the in-place
 * block permutation against a naive gather. Results must be identical bit
 * for bit. Without a usable device it says why and exits 77 (skipped). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "half.h"
#include "kernels.h"

static int passed, failed;

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void expect(int ok, const char *what) {
  if (ok) {
    passed++;
    return;
  }
  if (++failed < 30) printf("FAIL %s\n", what);
}

static void check(pccl_status_t st, const char *what) {
  if (st == PCCL_OK) return;
  printf("FATAL %s: %s (%s)\n", what, pccl_status_string(st), pccl__gpu_last_error());
  exit(1);
}

/* Random elements, a few of them special: for float types NaN, +-Inf, -0
 * and subnormals appear, for integers the extremes; pairs get small values
 * and indices, so MAXLOC/MINLOC meet ties. */
static void fill(void *buf, size_t n, pccl_dtype_t t) {
  size_t es = pccl_dtype_size(t);
  uint8_t *b = buf;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = rng(), v = rng();
    if (t == PCCL_FLOAT32) {
      float f = (float)((int64_t)(v % 2001) - 1000) / 7.0f;
      uint32_t sp[] = {0x7FC00000u, 0x7F800000u, 0xFF800000u, 0x80000000u, 0x00000123u};
      uint32_t u = r % 16 == 0 ? sp[r / 16 % 5] : pccl_f32_bits(f);
      memcpy(b + i * es, &u, es);
    } else if (t == PCCL_FLOAT64) {
      double d = (double)((int64_t)(v % 2001) - 1000) / 7.0;
      uint64_t sp[] = {0x7FF8000000000000ull, 0x7FF0000000000000ull, 0x8000000000000000ull, 1ull};
      uint64_t u;
      memcpy(&u, &d, 8);
      if (r % 16 == 0) u = sp[r / 16 % 4];
      memcpy(b + i * es, &u, es);
    } else if (t == PCCL_FLOAT16 || t == PCCL_BFLOAT16) {
      float f = (float)((int64_t)(v % 201) - 100) / 3.0f;
      uint16_t h = t == PCCL_FLOAT16 ? pccl_f32_to_f16(f) : pccl_f32_to_bf16(f);
      uint16_t sp16[] = {0x7E00u, 0x7C00u, 0x8000u, 0x0001u}, spb[] = {0x7FC0u, 0x7F80u, 0x8000u, 0x0001u};
      if (r % 16 == 0) h = t == PCCL_FLOAT16 ? sp16[r / 16 % 4] : spb[r / 16 % 4];
      memcpy(b + i * es, &h, 2);
    } else if (t >= PCCL_FLOAT_INT) { /* pairs: small values, so equal ones meet */
      int64_t value = (int64_t)(v % 7) - 3;
      int32_t index = (int32_t)(r % 9) - 4;
      float f = (float)value;
      double d = (double)value;
      memset(b + i * es, 0, es);
      if (t == PCCL_FLOAT_INT) memcpy(b + i * es, &f, 4);
      else if (t == PCCL_DOUBLE_INT) memcpy(b + i * es, &d, 8);
      else memcpy(b + i * es, &value, t == PCCL_INT64_INT ? 8 : t == PCCL_INT32_INT ? 4 : 2);
      memcpy(b + i * es + es / 2, &index, 4); /* every pair's index sits at half its size */
    } else {
      memcpy(b + i * es, &v, es); /* any bits: wrap-around and extremes */
    }
  }
}

static void *dev_alloc(size_t bytes) {
  void *p = NULL;
  check(pccl__gpu_alloc(&p, bytes), "cudaMalloc");
  return p;
}

/* Zeroes the padding of n elements of a pair type (C leaves it unspecified:
 * a device struct copy need not write it), so whole elements compare. */
static void clear_padding(pccl_dtype_t t, uint8_t *buf, size_t n) {
  size_t vsize, at;
  switch (t) {
    case PCCL_DOUBLE_INT: vsize = sizeof(double), at = offsetof(pccl_double_int_t, index); break;
    case PCCL_INT64_INT: vsize = sizeof(int64_t), at = offsetof(pccl_int64_int_t, index); break;
    case PCCL_INT16_INT: vsize = sizeof(int16_t), at = offsetof(pccl_int16_int_t, index); break;
    default: return; /* no padding, or not a pair */
  }
  size_t es = pccl_dtype_size(t);
  for (size_t i = 0; i < n; i++) {
    memset(buf + i * es + vsize, 0, at - vsize);
    memset(buf + i * es + at + 4, 0, es - at - 4);
  }
}

/* One reduction on the device against the CPU kernel: n elements at
 * element offset `shift` (misaligned for the vector path when nonzero). */
static void reduce_case(pccl_dtype_t t, pccl_op_t op, size_t n, size_t shift, int inplace) {
  size_t es = pccl_dtype_size(t), bytes = (n + shift) * es;
  uint8_t *a = malloc(bytes + 1), *b = malloc(bytes + 1), *want = malloc(bytes + 1), *got = malloc(bytes + 1);
  fill(a, n + shift, t);
  fill(b, n + shift, t);
  pccl_kernel_reduce(t, op)(want + shift * es, a + shift * es, b + shift * es, n);
  uint8_t *da = dev_alloc(bytes), *db = dev_alloc(bytes), *dd = inplace ? da : dev_alloc(bytes);
  check(pccl__gpu_copy(da, a, bytes, NULL), "copy a");
  check(pccl__gpu_copy(db, b, bytes, NULL), "copy b");
  check(pccl__gpu_reduce(dd + shift * es, da + shift * es, db + shift * es, n, t, op, NULL), "reduce");
  check(pccl__gpu_copy(got, dd, bytes, NULL), "copy back");
  check(pccl__gpu_sync(NULL), "sync");
  clear_padding(t, want, n + shift);
  clear_padding(t, got, n + shift);
  char what[160];
  snprintf(what, sizeof what, "reduce %s %s n=%zu shift=%zu%s", pccl_dtype_name(t), pccl_op_name(op), n,
           shift, inplace ? " in place" : "");
  expect(memcmp(want + shift * es, got + shift * es, n * es) == 0, what);
  pccl__gpu_free(da), pccl__gpu_free(db);
  if (!inplace) pccl__gpu_free(dd);
  free(a), free(b), free(want), free(got);
}

static void divide_case(pccl_dtype_t t, size_t n, int divisor) {
  size_t es = pccl_dtype_size(t), bytes = n * es;
  uint8_t *a = malloc(bytes + 1), *got = malloc(bytes + 1);
  fill(a, n, t);
  uint8_t *d = dev_alloc(bytes);
  check(pccl__gpu_copy(d, a, bytes, NULL), "copy");
  check(pccl__gpu_divide(d, n, t, divisor, NULL), "divide");
  check(pccl__gpu_copy(got, d, bytes, NULL), "copy back");
  check(pccl__gpu_sync(NULL), "sync");
  pccl_kernel_divide(t)(a, n, divisor);
  char what[120];
  snprintf(what, sizeof what, "divide %s n=%zu by %d", pccl_dtype_name(t), n, divisor);
  expect(memcmp(a, got, bytes) == 0, what);
  pccl__gpu_free(d);
  free(a), free(got);
}

/* A random permutation of nblocks blocks, applied on the device in place,
 * against gathering the blocks into a second buffer on the host. */
static void permute_case(uint32_t nblocks, size_t block_bytes, size_t shift) {
  uint32_t *src_of = malloc(nblocks * sizeof(uint32_t));
  for (uint32_t i = 0; i < nblocks; i++) src_of[i] = i;
  for (uint32_t i = nblocks; i > 1; i--) {
    uint32_t j = (uint32_t)(rng() % i), x = src_of[i - 1];
    src_of[i - 1] = src_of[j], src_of[j] = x;
  }
  uint32_t *cyc = malloc((nblocks + nblocks / 2 + 1) * sizeof(uint32_t));
  size_t nw = pccl_perm_cycles(src_of, nblocks, cyc);
  size_t bytes = nblocks * block_bytes + shift;
  uint8_t *in = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
  for (size_t i = 0; i < bytes; i++) in[i] = (uint8_t)rng();
  memcpy(want, in, shift);
  for (uint32_t x = 0; x < nblocks; x++)
    memcpy(want + shift + x * block_bytes, in + shift + src_of[x] * block_bytes, block_bytes);
  uint8_t *d = dev_alloc(bytes);
  uint32_t *dc = dev_alloc((nw ? nw : 1) * sizeof(uint32_t));
  check(pccl__gpu_copy(d, in, bytes, NULL), "copy");
  check(pccl__gpu_copy(dc, cyc, nw * sizeof(uint32_t), NULL), "copy cycles");
  check(pccl__gpu_permute(d + shift, block_bytes, dc, nw, NULL), "permute");
  check(pccl__gpu_copy(got, d, bytes, NULL), "copy back");
  check(pccl__gpu_sync(NULL), "sync");
  char what[120];
  snprintf(what, sizeof what, "permute %u blocks of %zu bytes at +%zu", nblocks, block_bytes, shift);
  expect(memcmp(want, got, bytes) == 0, what);
  pccl__gpu_free(d), pccl__gpu_free(dc);
  free(src_of), free(cyc), free(in), free(want), free(got);
}

int main(void) {
  if (pccl__gpu_devices() <= 0) {
    printf("SKIP: %s\n", pccl__gpu_why_none());
    return 77;
  }
  const size_t sizes[] = {1, 7, 8, 33, 1000, 4099, (1u << 20) + 3};
  for (int t = 0; t < PCCL_DTYPE_COUNT; t++)
    for (int op = 0; op < PCCL_OP_COUNT; op++) {
      if (!pccl_op_supported((pccl_dtype_t)t, (pccl_op_t)op)) { /* refused, as on the host */
        expect(pccl__gpu_reduce(NULL, NULL, NULL, 1, (pccl_dtype_t)t, (pccl_op_t)op, NULL) ==
                   PCCL_ERR_INVALID_ARGUMENT, "an op not defined on the type is refused");
        continue;
      }
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t shift = 0; shift < 2; shift++)
          reduce_case((pccl_dtype_t)t, (pccl_op_t)op, sizes[s], shift, (int)((s + shift) % 2));
    }
  const int divisors[] = {1, 3, 7, 128, 1000};
  for (int t = 0; t < PCCL_DTYPE_COUNT; t++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0] && pccl_kernel_divide((pccl_dtype_t)t); s++)
      divide_case((pccl_dtype_t)t, sizes[s], divisors[s % 5]);
  const size_t block_bytes[] = {1, 4, 12, 16, 48, 1000, 4096};
  for (uint32_t nb = 1; nb <= 300; nb += nb < 20 ? 1 : 37)
    for (size_t k = 0; k < sizeof block_bytes / sizeof block_bytes[0]; k++)
      permute_case(nb, block_bytes[k], nb % 3 == 0 ? 4 : 0);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
