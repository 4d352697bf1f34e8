/* wire.c - request signatures (what every rank must agree on) and the byte
 * form the negotiation sends them in. Integers go little-endian whatever
 * the host, strings as a length and their bytes; a reader that runs past
 * the end sets `failed` and yields zeros, so a damaged message is detected
 * once, after parsing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

int pccl_sig_equal(const pccl_sig_t *a, const pccl_sig_t *b) {
  if (a->coll != b->coll || a->dtype != b->dtype || a->op != b->op || a->root != b->root ||
      a->count != b->count || a->ndim != b->ndim || a->group_size != b->group_size)
    return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return a->group_size == 0 || strcmp(a->group, b->group) == 0; /* no group: no name to read */
}

static int reduces(int32_t coll) {
  return coll == PCCL_COLL_ALLREDUCE || coll == PCCL_COLL_REDUCE_SCATTER;
}

void pccl_sig_describe(const pccl_sig_t *s, char *buf, size_t len) {
  size_t n = 0;
#define ADD(...) n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__)
  ADD("%s %s", pccl_coll_name((pccl_coll_t)s->coll), pccl_dtype_name((pccl_dtype_t)s->dtype));
  if (reduces(s->coll)) ADD(" %s", pccl_op_name((pccl_op_t)s->op));
  if (s->coll == PCCL_COLL_BROADCAST) ADD(" root %d", (int)s->root);
  ADD(" count %llu", (unsigned long long)s->count);
  if (s->ndim > 0) {
    ADD(" shape [");
    for (int i = 0; i < s->ndim; i++) ADD("%s%lld", i ? "," : "", (long long)s->shape[i]);
    ADD("]");
  }
  if (s->group_size > 0) ADD(" in group '%s' of %d", s->group, (int)s->group_size);
#undef ADD
}

static void put(pccl_wbuf_t *w, const void *p, size_t n) {
  if (w->failed) return;
  if (w->len + n > w->cap) {
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + n) cap *= 2;
    uint8_t *d = realloc(w->data, cap);
    if (!d) {
      w->failed = 1;
      return;
    }
    w->data = d;
    w->cap = cap;
  }
  memcpy(w->data + w->len, p, n);
  w->len += n;
}

void pccl_w_u32(pccl_wbuf_t *w, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  put(w, b, 4);
}

static void w_u64(pccl_wbuf_t *w, uint64_t v) {
  pccl_w_u32(w, (uint32_t)v);
  pccl_w_u32(w, (uint32_t)(v >> 32));
}

void pccl_w_str(pccl_wbuf_t *w, const char *s) {
  size_t n = strlen(s);
  pccl_w_u32(w, (uint32_t)n);
  put(w, s, n);
}

void pccl_w_sig(pccl_wbuf_t *w, const pccl_sig_t *s) {
  pccl_w_u32(w, (uint32_t)s->coll);
  pccl_w_u32(w, (uint32_t)s->dtype);
  pccl_w_u32(w, (uint32_t)s->op);
  pccl_w_u32(w, (uint32_t)s->root);
  w_u64(w, s->count);
  pccl_w_u32(w, (uint32_t)s->ndim);
  for (int i = 0; i < s->ndim; i++) w_u64(w, (uint64_t)s->shape[i]);
  pccl_w_u32(w, (uint32_t)s->group_size);
  pccl_w_str(w, s->group);
}

static const uint8_t *take(pccl_rbuf_t *r, size_t n) {
  if (r->failed || r->len - r->pos < n) {
    r->failed = 1;
    return NULL;
  }
  const uint8_t *p = r->data + r->pos;
  r->pos += n;
  return p;
}

uint32_t pccl_r_u32(pccl_rbuf_t *r) {
  const uint8_t *b = take(r, 4);
  return b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24 : 0;
}

static uint64_t r_u64(pccl_rbuf_t *r) {
  uint64_t lo = pccl_r_u32(r);
  return lo | (uint64_t)pccl_r_u32(r) << 32;
}

void pccl_r_str(pccl_rbuf_t *r, char *out, size_t cap) {
  uint32_t n = pccl_r_u32(r);
  const uint8_t *p = n < cap ? take(r, n) : NULL;
  if (!p) {
    r->failed = 1;
    out[0] = '\0';
    return;
  }
  memcpy(out, p, n);
  out[n] = '\0';
}

void pccl_r_sig(pccl_rbuf_t *r, pccl_sig_t *s) {
  s->coll = (int32_t)pccl_r_u32(r);
  s->dtype = (int32_t)pccl_r_u32(r);
  s->op = (int32_t)pccl_r_u32(r);
  s->root = (int32_t)pccl_r_u32(r);
  s->count = r_u64(r);
  s->ndim = (int32_t)pccl_r_u32(r);
  if (s->ndim < 0 || s->ndim > PCCL_ENGINE_MAX_DIMS) {
    r->failed = 1;
    s->ndim = 0;
  }
  for (int i = 0; i < s->ndim; i++) s->shape[i] = (int64_t)r_u64(r);
  s->group_size = (int32_t)pccl_r_u32(r);
  pccl_r_str(r, s->group, sizeof s->group);
}
