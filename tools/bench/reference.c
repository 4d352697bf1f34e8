/* reference.c - pccl-bench's deterministic inputs and the independent
 * computation of what pccl should output: every rank's input is a short
 * repeating pattern of small integers (so float sums are exact), each rank
 * recomputes every rank's input and reduces it itself in plain C, and builds
 * the expected element bytes of any datatype, with its own float16 and
 * bfloat16 rounding. The avg of a 16-bit float may be one unit in the last
 * place off; everything else must match bit for bit. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "reference.h"

enum { PATTERN_PERIOD = 5 }; /* inputs repeat every 5 elements */

/* One element of any datatype, in memory order. */
typedef struct {
  unsigned char bytes[8];
} element_t;

/* ---- datatypes ---------------------------------------------------------- */

static bool dtype_is_float(pccl_dtype_t dtype) {
  return dtype == PCCL_FLOAT16 || dtype == PCCL_BFLOAT16 || dtype == PCCL_FLOAT32 ||
         dtype == PCCL_FLOAT64;
}

static bool dtype_is_unsigned(pccl_dtype_t dtype) {
  return dtype == PCCL_UINT8 || dtype == PCCL_UINT32 || dtype == PCCL_UINT64;
}

/* IEEE binary16 bits nearest to the finite `value` (ties to even). */
static uint16_t half_from_float(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t mantissa = bits & 0x7fffffu;
  int exponent = (int)((bits >> 23) & 0xffu) - 127 + 15;
  if (exponent >= 31) return (uint16_t)(sign | 0x7c00u); /* overflows to inf */
  if (exponent < -10) return (uint16_t)sign;             /* underflows to zero */
  uint32_t shift = 13;
  if (exponent <= 0) { /* subnormal: the implicit bit becomes explicit */
    mantissa |= 0x800000u;
    shift = (uint32_t)(14 - exponent);
    exponent = 0;
  }
  uint32_t kept = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1u);
  if (rest > halfway || (rest == halfway && (kept & 1u))) kept++; /* may carry into exponent */
  return (uint16_t)(sign | (((uint32_t)exponent << 10) + kept));
}

/* bfloat16 bits nearest to the finite `value` (ties to even). */
static uint16_t bfloat16_from_float(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

/* A 16-bit float's bits as an integer that steps by one per unit in the last place. */
static long ulp_index(uint16_t bits) {
  return (bits & 0x8000u) ? -(long)(bits & 0x7fffu) : (long)bits;
}

/* Integer element holding `bits` truncated to the type's width. */
static element_t integer_element(pccl_dtype_t dtype, uint64_t bits) {
  element_t element = {{0}};
  switch (dtype) {
  case PCCL_INT8:
  case PCCL_UINT8: {
    uint8_t narrow = (uint8_t)bits;
    memcpy(element.bytes, &narrow, sizeof narrow);
    break;
  }
  case PCCL_INT32:
  case PCCL_UINT32: {
    uint32_t narrow = (uint32_t)bits;
    memcpy(element.bytes, &narrow, sizeof narrow);
    break;
  }
  default: memcpy(element.bytes, &bits, sizeof bits); break; /* int64, uint64 */
  }
  return element;
}

/* Floating-point element nearest to `value`. */
static element_t real_element(pccl_dtype_t dtype, double value) {
  element_t element = {{0}};
  switch (dtype) {
  case PCCL_FLOAT16: {
    uint16_t half = half_from_float((float)value);
    memcpy(element.bytes, &half, sizeof half);
    break;
  }
  case PCCL_BFLOAT16: {
    uint16_t bfloat = bfloat16_from_float((float)value);
    memcpy(element.bytes, &bfloat, sizeof bfloat);
    break;
  }
  case PCCL_FLOAT32: {
    float single = (float)value;
    memcpy(element.bytes, &single, sizeof single);
    break;
  }
  default: memcpy(element.bytes, &value, sizeof value); break; /* float64 */
  }
  return element;
}

static element_t small_integer_element(pccl_dtype_t dtype, int64_t value) {
  return dtype_is_float(dtype) ? real_element(dtype, (double)value)
                               : integer_element(dtype, (uint64_t)value);
}

/* ---- buffers and reference ---------------------------------------------- */

/* Input element `index` of `rank`: a small integer, so float sums are exact. */
static int64_t input_value(pccl_dtype_t dtype, int rank, size_t index) {
  int64_t value = (int64_t)(((size_t)rank * 7 + (index % PATTERN_PERIOD) * 3) % 5);
  return dtype_is_unsigned(dtype) ? value : value - 2;
}

void fill_input(const bench_t *b, void *buffer, size_t elements) {
  size_t elem_size = pccl_dtype_size(b->opts.dtype);
  element_t cycle[PATTERN_PERIOD];
  for (size_t j = 0; j < PATTERN_PERIOD; j++)
    cycle[j] = small_integer_element(b->opts.dtype, input_value(b->opts.dtype, b->rank, j));
  unsigned char *bytes = buffer;
  for (size_t i = 0; i < elements; i++)
    memcpy(bytes + i * elem_size, cycle[i % PATTERN_PERIOD].bytes, elem_size);
}

/* The wrapped integer sum as a value of `dtype`, divided by nranks in C. */
static uint64_t integer_average(pccl_dtype_t dtype, uint64_t sum, int nranks) {
  switch (dtype) {
  case PCCL_INT8: return (uint64_t)(int64_t)((int8_t)sum / nranks);
  case PCCL_UINT8: return (uint8_t)sum / (uint64_t)nranks;
  case PCCL_INT32: return (uint64_t)(int64_t)((int32_t)sum / nranks);
  case PCCL_UINT32: return (uint32_t)sum / (uint64_t)nranks;
  case PCCL_INT64: return (uint64_t)((int64_t)sum / nranks);
  default: return sum / (uint64_t)nranks; /* uint64 */
  }
}

/* Every rank's input element `index` reduced, for an integer dtype;
 * sum and prod wrap like unsigned C arithmetic. */
static element_t reduced_integer(const bench_t *b, int nranks, size_t index) {
  pccl_dtype_t dtype = b->opts.dtype;
  int64_t first = input_value(dtype, 0, index);
  uint64_t sum = (uint64_t)first, product = (uint64_t)first;
  int64_t min = first, max = first;
  for (int r = 1; r < nranks; r++) {
    int64_t value = input_value(dtype, r, index);
    sum += (uint64_t)value;
    product *= (uint64_t)value;
    min = value < min ? value : min;
    max = value > max ? value : max;
  }
  switch (b->opts.op) {
  case PCCL_SUM: return integer_element(dtype, sum);
  case PCCL_PROD: return integer_element(dtype, product);
  case PCCL_MIN: return integer_element(dtype, (uint64_t)min);
  case PCCL_MAX: return integer_element(dtype, (uint64_t)max);
  default: return integer_element(dtype, integer_average(dtype, sum, nranks));
  }
}

/* Every rank's input element `index` reduced, for a floating-point dtype;
 * exact in double for small integers, avg divided in the dtype's precision. */
static element_t reduced_real(const bench_t *b, int nranks, size_t index) {
  pccl_dtype_t dtype = b->opts.dtype;
  double first = (double)input_value(dtype, 0, index);
  double sum = first, product = first, min = first, max = first;
  for (int r = 1; r < nranks; r++) {
    double value = (double)input_value(dtype, r, index);
    sum += value;
    product *= value;
    min = value < min ? value : min;
    max = value > max ? value : max;
  }
  switch (b->opts.op) {
  case PCCL_SUM: return real_element(dtype, sum);
  case PCCL_PROD: return real_element(dtype, product);
  case PCCL_MIN: return real_element(dtype, min);
  case PCCL_MAX: return real_element(dtype, max);
  default:
    if (dtype == PCCL_FLOAT64) return real_element(dtype, sum / nranks);
    return real_element(dtype, (double)((float)sum / (float)nranks));
  }
}

/* The element pccl should have written at position `k` of its output;
 * `reduced` holds the reduced inputs by index modulo PATTERN_PERIOD. */
static element_t expected_element(const bench_t *b, const bench_case_t *c,
                                  const element_t reduced[PATTERN_PERIOD], size_t k) {
  pccl_dtype_t dtype = b->opts.dtype;
  size_t my_block = (size_t)b->rank * c->count;
  int source_rank = (int)(k / c->count);
  if (c->coll == PCCL_COLL_REDUCE_SCATTERV) { /* this rank's block of the reduced vector */
    size_t first = 0;
    for (int r = 0; r < b->rank; r++) first += c->vcounts[r];
    return reduced[(first + k) % PATTERN_PERIOD];
  }
  if (c->coll == PCCL_COLL_ALLGATHERV || c->coll == PCCL_COLL_GATHERV) {
    size_t first = 0; /* the packed blocks: whose holds k */
    int r = 0;
    while (k >= first + c->vcounts[r]) first += c->vcounts[r++];
    return small_integer_element(dtype, input_value(dtype, r, k - first));
  }
  if (c->coll == PCCL_COLL_SCATTERV) { /* this rank's block of the root's packed input */
    size_t first = 0;
    for (int r = 0; r < b->rank; r++) first += c->vcounts[r];
    return small_integer_element(dtype, input_value(dtype, b->opts.root, first + k));
  }
  if (c->coll == PCCL_COLL_ALLTOALLV) { /* rank r's block for this rank, packed at both ends */
    size_t first = 0, sent_before = 0;
    int r = 0;
    while (k >= first + alltoallv_count(c->vcounts, b->nranks, r, b->rank))
      first += alltoallv_count(c->vcounts, b->nranks, r++, b->rank);
    for (int j = 0; j < b->rank; j++) sent_before += alltoallv_count(c->vcounts, b->nranks, r, j);
    return small_integer_element(dtype, input_value(dtype, r, sent_before + k - first));
  }
  switch (c->coll) {
  case PCCL_COLL_ALLGATHER:
  case PCCL_COLL_GATHER:
    return small_integer_element(dtype, input_value(dtype, source_rank, k % c->count));
  case PCCL_COLL_ALLTOALL:
    return small_integer_element(dtype,
                                 input_value(dtype, source_rank, my_block + k % c->count));
  case PCCL_COLL_BROADCAST:
    return small_integer_element(dtype, input_value(dtype, b->opts.root, k));
  case PCCL_COLL_SCATTER:
    return small_integer_element(dtype, input_value(dtype, b->opts.root, my_block + k));
  case PCCL_COLL_REDUCE_SCATTER: return reduced[(my_block + k) % PATTERN_PERIOD];
  default: return reduced[k % PATTERN_PERIOD]; /* allreduce, reduce, scans */
  }
}

/* Output elements this rank checks: none off the root for reduce and the gathers. */
static size_t checked_elements(const bench_t *b, const bench_case_t *c) {
  bool root_only = c->coll == PCCL_COLL_REDUCE || c->coll == PCCL_COLL_GATHER ||
                   c->coll == PCCL_COLL_GATHERV;
  if (root_only && b->rank != b->opts.root) return 0;
  if (c->coll == PCCL_COLL_EXSCAN && b->rank == 0) return 0; /* left alone */
  if (c->coll == PCCL_COLL_REDUCE_SCATTERV || c->coll == PCCL_COLL_SCATTERV)
    return c->vcounts[b->rank];
  return recv_elements(c->coll, c->count, b->nranks, b->opts.heavy);
}

bool output_matches(const bench_t *b, const bench_case_t *c) {
  pccl_dtype_t dtype = b->opts.dtype;
  size_t elem_size = pccl_dtype_size(dtype);
  element_t reduced[PATTERN_PERIOD] = {{{0}}};
  /* the ranks a result reduces: all, or a scan's prefix */
  int nranks = c->coll == PCCL_COLL_SCAN     ? b->rank + 1
               : c->coll == PCCL_COLL_EXSCAN ? b->rank
                                             : b->nranks;
  if (is_reduction(c->coll) && nranks > 0)
    for (size_t j = 0; j < PATTERN_PERIOD; j++)
      reduced[j] = dtype_is_float(dtype) ? reduced_real(b, nranks, j)
                                         : reduced_integer(b, nranks, j);
  bool within_one_ulp = is_reduction(c->coll) && b->opts.op == PCCL_AVG &&
                        (dtype == PCCL_FLOAT16 || dtype == PCCL_BFLOAT16);
  const unsigned char *output = b->recv;
  size_t elements = checked_elements(b, c);
  for (size_t k = 0; k < elements; k++) {
    element_t expected = expected_element(b, c, reduced, k);
    const unsigned char *actual = output + k * elem_size;
    bool match;
    if (within_one_ulp) {
      uint16_t got, want;
      memcpy(&got, actual, sizeof got);
      memcpy(&want, expected.bytes, sizeof want);
      long distance = ulp_index(got) - ulp_index(want);
      match = distance >= -1 && distance <= 1;
    } else {
      match = memcmp(actual, expected.bytes, elem_size) == 0;
    }
    if (!match) {
      fprintf(stderr, "pccl-bench: rank %d: %s count %zu: wrong output element %zu\n",
              b->rank, pccl_coll_name(c->coll), c->count, k);
      return false;
    }
  }
  return true;
}

