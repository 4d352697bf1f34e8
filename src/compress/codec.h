/* codec.h - the codec table behind pccl_compress / pccl_decompress.
 *
 * Every compressed stream starts with the container header written by
 * codec.c (magic, version, codec id, dtype, count, bound); a codec sees only
 * the bytes after it. Codecs are rows of PCCL_CODEC_MAP, so a new one is one
 * row plus its file. */
#ifndef PCCL_CODEC_H
#define PCCL_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "pccl.h"

#define PCCL_CODEC_HEADER 24 /* bytes of the container header */

typedef struct {
  size_t count;
  pccl_dtype_t dtype;
  size_t esize;
  double bound; /* the user's absolute bound, > 0 and finite */
  size_t dims[3]; /* the array's shape, x fastest; product count (only szi uses it) */
} pccl_codec_args_t;

typedef struct {
  const char *name;
  int (*available)(void);
  /* Largest payload for a.count elements; 0 when it would overflow. */
  size_t (*bound)(const pccl_codec_args_t *a);
  /* Writes at most cap bytes; *size gets the payload length. A payload that
   * would not fit is PCCL_ERR_INVALID_ARGUMENT. */
  pccl_status_t (*compress)(const pccl_codec_args_t *a, const void *src, uint8_t *dst,
                            size_t cap, size_t *size);
  /* Must reject any payload it did not write, reading only src[0 .. size). */
  pccl_status_t (*decompress)(const pccl_codec_args_t *a, const uint8_t *src, size_t size,
                              void *dst);
} pccl_codec_ops_t;

/* Bytes a compressed slot of the collectives (szp, header included) needs
 * for `count` elements of `esize` bytes. */
size_t pccl__codec_slot_bytes(size_t count, size_t esize);

extern const pccl_codec_ops_t pccl__codec_szp;
extern const pccl_codec_ops_t pccl__codec_zfp;
extern const pccl_codec_ops_t pccl__codec_szi;

/* X(id, ops): the table, in pccl_codec_t order. */
#define PCCL_CODEC_MAP(X)         \
  X(PCCL_CODEC_SZP, pccl__codec_szp) \
  X(PCCL_CODEC_ZFP, pccl__codec_zfp) \
  X(PCCL_CODEC_SZI, pccl__codec_szi)

#endif
