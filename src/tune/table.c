/* table.c - parsing and lookup of tuning tables; see table.h. */
#include "table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define LINE_MAX_LEN 256

static int bad(char *err, size_t errlen, int line, const char *what, const char *text) {
  snprintf(err, errlen, "tuning table line %d: %s \"%.60s\"", line, what, text);
  return 0;
}

static int parse_size(const char *s, size_t *out) {
  if (strcmp(s, "inf") == 0) {
    *out = SIZE_MAX;
    return 1;
  }
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno == ERANGE || v >= SIZE_MAX) return 0;
  *out = (size_t)v;
  return 1;
}

static int parse_pos_int(const char *s, int *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno == ERANGE || v < 1 || v > (1L << 24)) return 0;
  *out = (int)v;
  return 1;
}

static int add_section(pccl_tune_table_t *t, int nranks, int rpn) {
  for (int i = 0; i < t->nsecs; i++)
    if (t->secs[i].nranks == nranks && t->secs[i].ranks_per_node == rpn) return -1;
  pccl_tune_section_t *ns = realloc(t->secs, ((size_t)t->nsecs + 1) * sizeof(*ns));
  if (!ns) return 0;
  t->secs = ns;
  t->secs[t->nsecs++] = (pccl_tune_section_t){nranks, rpn, t->nrows, 0};
  return 1;
}

/* A row "coll max_bytes algo[:k]" of the current section; a lossy row (for
 * the lossy calls) may name compressed or plain algorithms, a plain row only
 * plain ones. */
static int add_row(pccl_tune_table_t *t, char **tok, int lossy, int line, char *err,
                   size_t errlen) {
  int coll = pccl__coll_from_name(tok[0]);
  if (coll < 0) return bad(err, errlen, line, "unknown collective", tok[0]);
  size_t max;
  if (!parse_size(tok[1], &max)) return bad(err, errlen, line, "size is not a byte count or inf", tok[1]);
  pccl_choice_t ch;
  char why[160];
  if (pccl_choice_parse((pccl_coll_t)coll, tok[2], &ch, why, sizeof(why)) != PCCL_OK)
    return bad(err, errlen, line, why, tok[2]);
  if (ch.algo->lossy && !lossy)
    return bad(err, errlen, line, "a compressed algorithm in a plain row (prefix it with lossy)", tok[2]);
  pccl_tune_section_t *s = &t->secs[t->nsecs - 1];
  for (int i = s->first; i < t->nrows; i++)
    if ((int)t->rows[i].coll == coll && t->rows[i].lossy == lossy && t->rows[i].max_bytes >= max)
      return bad(err, errlen, line, "sizes of a collective must increase", tok[1]);
  pccl_tune_row_t *nr = realloc(t->rows, ((size_t)t->nrows + 1) * sizeof(*nr));
  if (!nr) return bad(err, errlen, line, "out of memory at", tok[0]);
  t->rows = nr;
  t->rows[t->nrows++] = (pccl_tune_row_t){(pccl_coll_t)coll, lossy, max, ch};
  s->nrows++;
  return 1;
}

/* One line, already stripped of its comment. */
static int parse_line(pccl_tune_table_t *t, char *s, int line, char *err, size_t errlen) {
  char *tok[4], *save = NULL;
  int n = 0;
  for (char *p = strtok_r(s, " \t\r", &save); p; p = strtok_r(NULL, " \t\r", &save)) {
    if (n == 4) return bad(err, errlen, line, "too many fields after", tok[3]);
    tok[n++] = p;
  }
  if (n == 0) return 1;
  if (strcmp(tok[0], "layout") == 0) {
    int nranks, rpn;
    if (n != 3 || !parse_pos_int(tok[1], &nranks) || !parse_pos_int(tok[2], &rpn))
      return bad(err, errlen, line, "expected: layout RANKS RANKS_PER_NODE, got", tok[0]);
    int r = add_section(t, nranks, rpn);
    if (r < 0) return bad(err, errlen, line, "duplicate layout", tok[1]);
    return r ? 1 : bad(err, errlen, line, "out of memory at", tok[0]);
  }
  int lossy = strcmp(tok[0], "lossy") == 0;
  if (n - lossy != 3)
    return bad(err, errlen, line, "expected: [lossy] COLLECTIVE MAX_BYTES ALGORITHM[:K], got", tok[0]);
  if (t->nsecs == 0) return bad(err, errlen, line, "row before any layout line", tok[0]);
  return add_row(t, tok + lossy, lossy, line, err, errlen);
}

pccl_status_t pccl_tune_parse(const char *text, pccl_tune_table_t *t, char *err, size_t errlen) {
  memset(t, 0, sizeof(*t));
  int line = 0;
  for (const char *p = text; *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char buf[LINE_MAX_LEN];
    line++;
    if (len >= sizeof(buf)) {
      snprintf(err, errlen, "tuning table line %d: longer than %d characters", line, LINE_MAX_LEN - 1);
      pccl_tune_free(t);
      return PCCL_ERR_CONFIG;
    }
    memcpy(buf, p, len);
    buf[len] = '\0';
    char *hash = strchr(buf, '#');
    if (hash) *hash = '\0';
    if (memchr(p, '\0', len) || !parse_line(t, buf, line, err, errlen)) {
      if (memchr(p, '\0', len)) snprintf(err, errlen, "tuning table line %d: NUL byte", line);
      pccl_tune_free(t);
      return PCCL_ERR_CONFIG;
    }
    p += len + (eol ? 1 : 0);
  }
  return PCCL_OK;
}

pccl_status_t pccl_tune_load(const char *path, pccl_tune_table_t *t, char *err, size_t errlen) {
  memset(t, 0, sizeof(*t));
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "cannot open tuning table %s: %s", path, strerror(errno));
    return PCCL_ERR_CONFIG;
  }
  size_t cap = 1 << 16, len = 0;
  char *text = malloc(cap);
  for (size_t got = 1; text && got > 0;) {
    if (len + 1 == cap) {
      char *nt = cap < (64u << 20) ? realloc(text, cap * 2) : NULL;
      if (!nt) break;
      text = nt;
      cap *= 2;
    }
    got = fread(text + len, 1, cap - 1 - len, f);
    len += got;
  }
  int failed = !text || ferror(f) || !feof(f);
  fclose(f);
  if (failed) {
    free(text);
    snprintf(err, errlen, "cannot read tuning table %s (unreadable, or over 64 MiB)", path);
    return PCCL_ERR_CONFIG;
  }
  text[len] = '\0';
  if (strlen(text) != len) {
    free(text);
    snprintf(err, errlen, "tuning table %s holds a NUL byte", path);
    return PCCL_ERR_CONFIG;
  }
  pccl_status_t st = pccl_tune_parse(text, t, err, errlen);
  free(text);
  return st;
}

void pccl_tune_free(pccl_tune_table_t *t) {
  free(t->rows);
  free(t->secs);
  memset(t, 0, sizeof(*t));
}

const pccl_tune_section_t *pccl_tune_section(const pccl_tune_table_t *t, int nranks,
                                             int ranks_per_node) {
  const pccl_tune_section_t *best = NULL;
  double best_d = 0;
  for (int i = 0; i < t->nsecs; i++) {
    if (t->secs[i].ranks_per_node != ranks_per_node) continue;
    int a = t->secs[i].nranks;
    double d = a > nranks ? (double)a / nranks : (double)nranks / a;
    if (!best || d < best_d) {
      best = &t->secs[i];
      best_d = d;
    }
  }
  return best;
}

pccl_choice_t pccl_tune_lookup(const pccl_tune_table_t *t, const pccl_tune_section_t *s,
                               pccl_coll_t coll, int lossy, size_t bytes) {
  for (int i = s->first; i < s->first + s->nrows; i++)
    if (t->rows[i].coll == coll && t->rows[i].lossy == lossy && bytes <= t->rows[i].max_bytes)
      return t->rows[i].choice;
  return (pccl_choice_t){NULL, 0};
}

uint32_t pccl_tune_hash(const pccl_tune_table_t *t, const pccl_tune_section_t *s) {
  uint32_t h = 2166136261u;
  if (!s) return h;
  for (int i = s->first; i < s->first + s->nrows; i++) {
    uint64_t v[5] = {(uint64_t)t->rows[i].coll, (uint64_t)t->rows[i].max_bytes,
                     (uint64_t)t->rows[i].choice.algo->id, (uint64_t)t->rows[i].choice.k,
                     (uint64_t)t->rows[i].lossy};
    const unsigned char *b = (const unsigned char *)v;
    for (size_t j = 0; j < sizeof(v); j++) h = (h ^ b[j]) * 16777619u;
  }
  return h;
}
