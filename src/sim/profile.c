/* profile.c - machine profiles for the simulator: the line-based text format
 * of docs/profile-format.md (parse, load, write) and the bounds every field
 * must respect.
 *
 * One `key value` per line; `#` starts a comment. Every key but `source`,
 * `compress`, `decompress`, `duplex`, `host_cores` and `host_message` is
 * required (compress and decompress default to
 * PCCL_PROFILE_COMPRESS_DEFAULT / PCCL_PROFILE_DECOMPRESS_DEFAULT, duplex to
 * full duplex, the host keys to 0: nodes with CPUs of their own), and none
 * may appear twice. Times are in seconds, optionally with a unit (s, ms, us,
 * ns, ps); per-byte costs (G, gamma, copy, compress, decompress) also take a
 * bandwidth (B/s, kB/s, MB/s, GB/s, TB/s; decimal) whose inverse they store.
 * A unit scales the number's decimal exponent before it is converted, so
 * "1.5us" reads as exactly the double "1.5e-6" does. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define PCCL_PROFILE_LINE 1024          /* longest line, newline excluded */
#define PCCL_PROFILE_FILE (1024 * 1024) /* largest profile file */
#define PCCL_PROFILE_MAX_SECONDS 1e6    /* bound on any time or per-byte cost */

typedef enum { VAL_NAME, VAL_TEXT, VAL_INT, VAL_TIME, VAL_PER_BYTE, VAL_FACTOR } val_kind_t;

/* A VAL_FACTOR: a plain number in [1, 100] in a file; 0 in memory stands
 * for 1 (a profile built field by field leaves it 0). */
#define PCCL_PROFILE_MAX_FACTOR 100.0

typedef struct {
  const char *key;
  val_kind_t kind;
  size_t offset; /* of the field in pccl_profile_t */
  int min, max;  /* VAL_INT */
  int required;
} field_t;

#define LEVEL_FIELD(lvl, f) \
  (offsetof(pccl_profile_t, level) + (lvl) * sizeof(pccl_loggp_t) + offsetof(pccl_loggp_t, f))
#define LEVEL_KEYS(prefix, lvl)                                        \
  {prefix ".L", VAL_TIME, LEVEL_FIELD(lvl, L), 0, 0, 1},               \
      {prefix ".o_s", VAL_TIME, LEVEL_FIELD(lvl, o_s), 0, 0, 1},       \
      {prefix ".o_r", VAL_TIME, LEVEL_FIELD(lvl, o_r), 0, 0, 1},       \
      {prefix ".g", VAL_TIME, LEVEL_FIELD(lvl, g), 0, 0, 1},           \
      {prefix ".G", VAL_PER_BYTE, LEVEL_FIELD(lvl, G), 0, 0, 1}

static const field_t fields[] = {
    {"name", VAL_NAME, offsetof(pccl_profile_t, name), 0, 0, 1},
    {"source", VAL_TEXT, offsetof(pccl_profile_t, source), 0, 0, 0},
    {"ranks_per_node", VAL_INT, offsetof(pccl_profile_t, ranks_per_node), 1, 1 << 16, 1},
    {"nics_per_node", VAL_INT, offsetof(pccl_profile_t, nics_per_node), 1, 1 << 10, 1},
    {"device_radix", VAL_INT, offsetof(pccl_profile_t, device_radix), 0, 1 << 20, 1},
    {"node_radix", VAL_INT, offsetof(pccl_profile_t, node_radix), 0, 1 << 20, 1},
    {"gamma", VAL_PER_BYTE, offsetof(pccl_profile_t, gamma), 0, 0, 1},
    {"copy", VAL_PER_BYTE, offsetof(pccl_profile_t, copy), 0, 0, 1},
    {"compress", VAL_PER_BYTE, offsetof(pccl_profile_t, compress), 0, 0, 0},
    {"decompress", VAL_PER_BYTE, offsetof(pccl_profile_t, decompress), 0, 0, 0},
    {"duplex", VAL_FACTOR, offsetof(pccl_profile_t, duplex), 0, 0, 0},
    {"host_cores", VAL_INT, offsetof(pccl_profile_t, host_cores), 0, 1 << 16, 0},
    {"host_message", VAL_TIME, offsetof(pccl_profile_t, host_message), 0, 0, 0},
    LEVEL_KEYS("intra", PCCL_LEVEL_INTRA),
    LEVEL_KEYS("inter", PCCL_LEVEL_INTER),
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static void set_error(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || errlen == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

static const field_t *find_field(const char *key, size_t len) {
  for (size_t i = 0; i < NFIELDS; i++)
    if (strlen(fields[i].key) == len && memcmp(fields[i].key, key, len) == 0) return &fields[i];
  return NULL;
}

/* ---- values -------------------------------------------------------------- */

typedef struct {
  const char *suffix;
  int exp10; /* the unit is 10^exp10 seconds, or 10^exp10 bytes per second */
  int rate;
} unit_t;

static const unit_t units[] = {
    {"", 0, 0},        {"s", 0, 0},       {"ms", -3, 0},    {"us", -6, 0},
    {"ns", -9, 0},     {"ps", -12, 0},    {"B/s", 0, 1},    {"kB/s", 3, 1},
    {"MB/s", 6, 1},    {"GB/s", 9, 1},    {"TB/s", 12, 1},
};

static size_t skip_digits(const char *s, size_t i) {
  while (s[i] >= '0' && s[i] <= '9') i++;
  return i;
}

/* The number at the start of tok: only digits, one '.', and an exponent (no
 * sign, hex, inf, nan). Its mantissa's length, its exponent and where what
 * follows it begins go to the out-arguments; NULL or the reason it is not
 * one. */
static const char *scan_number(const char *tok, size_t *mant_len, long *exp10, size_t *rest) {
  if (tok[0] == '-') return "negative values are not allowed";
  size_t i = skip_digits(tok, 0), int_digits = i;
  if (tok[i] == '.') i = skip_digits(tok, i + 1);
  *mant_len = i;
  if (int_digits == 0 && i <= 1) return "not a number";
  *exp10 = 0;
  if (tok[i] == 'e' || tok[i] == 'E') {
    size_t j = i + 1, first;
    int neg = tok[j] == '-';
    if (tok[j] == '-' || tok[j] == '+') j++;
    first = j;
    j = skip_digits(tok, j);
    if (j == first || j - first > 4) return "malformed exponent";
    *exp10 = strtol(tok + first, NULL, 10) * (neg ? -1 : 1);
    i = j;
  }
  *rest = i;
  return NULL;
}

/* The value of a scanned mantissa times 10^exp10. */
static double number_value(const char *tok, size_t mant_len, long exp10) {
  char buf[PCCL_PROFILE_LINE + 32];
  snprintf(buf, sizeof buf, "%.*se%ld", (int)mant_len, tok, exp10);
  return strtod(buf, NULL);
}

/* A non-negative decimal number with an optional unit; NULL or the reason it
 * is not one. */
static const char *parse_seconds(const char *tok, int per_byte, double *out) {
  size_t mant_len, rest;
  long exp10;
  const char *why = scan_number(tok, &mant_len, &exp10, &rest);
  if (why) return why;
  const unit_t *u = NULL;
  for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++)
    if (strcmp(tok + rest, units[k].suffix) == 0) u = &units[k];
  if (!u) return "not a number with a known unit";
  if (u->rate && !per_byte) return "a bandwidth where a time is expected";
  double v = number_value(tok, mant_len, exp10 + u->exp10);
  if (u->rate) {
    if (v == 0) return "a bandwidth of zero";
    v = 1.0 / v;
  }
  if (!isfinite(v) || v > PCCL_PROFILE_MAX_SECONDS) return "out of range (at most 1e6 seconds)";
  *out = v;
  return NULL;
}

/* A number without a unit in [1, PCCL_PROFILE_MAX_FACTOR]. */
static const char *parse_factor(const char *tok, double *out) {
  size_t mant_len, rest;
  long exp10;
  const char *why = scan_number(tok, &mant_len, &exp10, &rest);
  if (why) return why;
  if (tok[rest] != '\0') return "a plain number expected (no unit)";
  double v = number_value(tok, mant_len, exp10);
  if (!(v >= 1 && v <= PCCL_PROFILE_MAX_FACTOR)) return "out of range (1 to 100)";
  *out = v;
  return NULL;
}

static const char *parse_int(const char *tok, const field_t *f, int *out) {
  if (tok[0] == '-') return "negative values are not allowed";
  size_t n = skip_digits(tok, 0);
  if (n == 0 || tok[n] != '\0') return "not an integer";
  long v = n > 9 ? -1 : strtol(tok, NULL, 10);
  if (v < f->min || v > f->max) return "out of range";
  *out = (int)v;
  return NULL;
}

static int name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

static const char *check_text(const char *s, size_t len, int is_name) {
  if (len >= PCCL_PROFILE_TEXT) return "too long (at most 255 characters)";
  if (is_name && len == 0) return "empty";
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (is_name ? !name_char((char)c) : (c < 0x20 || c > 0x7e || c == '#'))
      return is_name ? "may hold only letters, digits, '_', '-' and '.'" : "unprintable character";
  }
  return NULL;
}

/* Stores one value; NULL or the reason it is malformed. */
static const char *set_value(pccl_profile_t *p, const field_t *f, const char *val, size_t len) {
  char *dst = (char *)p + f->offset;
  if (f->kind == VAL_TEXT || f->kind == VAL_NAME) {
    const char *why = check_text(val, len, f->kind == VAL_NAME);
    if (why) return why;
    memcpy(dst, val, len);
    dst[len] = '\0';
    return NULL;
  }
  char tok[PCCL_PROFILE_LINE + 1];
  memcpy(tok, val, len);
  tok[len] = '\0';
  if (strpbrk(tok, " \t\r\v\f")) return "one value expected";
  if (f->kind == VAL_INT) return parse_int(tok, f, (int *)(void *)dst);
  if (f->kind == VAL_FACTOR) return parse_factor(tok, (double *)(void *)dst);
  return parse_seconds(tok, f->kind == VAL_PER_BYTE, (double *)(void *)dst);
}

/* ---- lines --------------------------------------------------------------- */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* One line (without its newline): a comment, blank, or `key value`. */
static pccl_status_t parse_line(pccl_profile_t *p, const char *line, size_t len, int lineno,
                                int *seen_at, char *err, size_t errlen) {
  const char *hash = memchr(line, '#', len);
  if (hash) len = (size_t)(hash - line);
  size_t b = 0;
  while (b < len && is_space(line[b])) b++;
  while (len > b && is_space(line[len - 1])) len--;
  if (b == len) return PCCL_OK;
  size_t k = b;
  while (k < len && !is_space(line[k])) k++;
  const field_t *f = find_field(line + b, k - b);
  if (!f) {
    set_error(err, errlen, "line %d: unknown key '%.*s'", lineno, (int)(k - b < 64 ? k - b : 64),
              line + b);
    return PCCL_ERR_CONFIG;
  }
  size_t idx = (size_t)(f - fields);
  if (seen_at[idx]) {
    set_error(err, errlen, "line %d: duplicate key '%s' (first on line %d)", lineno, f->key,
              seen_at[idx]);
    return PCCL_ERR_CONFIG;
  }
  seen_at[idx] = lineno;
  while (k < len && is_space(line[k])) k++;
  if (k == len) {
    set_error(err, errlen, "line %d: key '%s' has no value", lineno, f->key);
    return PCCL_ERR_CONFIG;
  }
  const char *why = set_value(p, f, line + k, len - k);
  if (why) {
    set_error(err, errlen, "line %d: %s '%.*s': %s", lineno, f->key,
              (int)(len - k < 64 ? len - k : 64), line + k, why);
    return PCCL_ERR_CONFIG;
  }
  return PCCL_OK;
}

pccl_status_t pccl_profile_parse(const char *text, pccl_profile_t *p, char *err, size_t errlen) {
  set_error(err, errlen, "%s", "");
  if (!text || !p) {
    set_error(err, errlen, "NULL profile text or output");
    return PCCL_ERR_INVALID_ARGUMENT;
  }
  pccl_profile_t tmp;
  memset(&tmp, 0, sizeof tmp);
  tmp.compress = PCCL_PROFILE_COMPRESS_DEFAULT; /* the optional keys */
  tmp.decompress = PCCL_PROFILE_DECOMPRESS_DEFAULT;
  int seen_at[NFIELDS] = {0}, lineno = 0;
  for (const char *s = text; *s;) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    lineno++;
    if (len > PCCL_PROFILE_LINE) {
      set_error(err, errlen, "line %d: longer than %d characters", lineno, PCCL_PROFILE_LINE);
      return PCCL_ERR_CONFIG;
    }
    pccl_status_t st = parse_line(&tmp, s, len, lineno, seen_at, err, errlen);
    if (st != PCCL_OK) return st;
    s += len + (nl ? 1 : 0);
  }
  for (size_t i = 0; i < NFIELDS; i++)
    if (fields[i].required && !seen_at[i]) {
      set_error(err, errlen, "line %d (end of profile): required key '%s' is missing", lineno,
                fields[i].key);
      return PCCL_ERR_CONFIG;
    }
  if ((tmp.host_cores > 0) != (tmp.host_message > 0)) {
    set_error(err, errlen, "line %d (end of profile): host_cores and host_message go together", lineno);
    return PCCL_ERR_CONFIG;
  }
  *p = tmp;
  return PCCL_OK;
}

pccl_status_t pccl_profile_load(const char *path, pccl_profile_t *p, char *err, size_t errlen) {
  if (!path || !p) {
    set_error(err, errlen, "NULL profile path or output");
    return PCCL_ERR_INVALID_ARGUMENT;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    set_error(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return PCCL_ERR_INVALID_ARGUMENT;
  }
  char *text = malloc(PCCL_PROFILE_FILE + 1);
  size_t n = text ? fread(text, 1, PCCL_PROFILE_FILE + 1, f) : 0;
  int read_error = ferror(f);
  fclose(f);
  pccl_status_t st = PCCL_ERR_CONFIG;
  if (!text) {
    set_error(err, errlen, "%s: out of memory", path);
    st = PCCL_ERR_NO_MEMORY;
  } else if (read_error) {
    set_error(err, errlen, "%s: read error", path);
    st = PCCL_ERR_INVALID_ARGUMENT;
  } else if (n > PCCL_PROFILE_FILE) {
    set_error(err, errlen, "%s: larger than %d bytes", path, PCCL_PROFILE_FILE);
  } else if (memchr(text, '\0', n)) {
    set_error(err, errlen, "%s: contains a NUL byte (not a text file)", path);
  } else {
    text[n] = '\0';
    char inner[PCCL_PROFILE_TEXT];
    st = pccl_profile_parse(text, p, inner, sizeof inner);
    if (st != PCCL_OK) set_error(err, errlen, "%s: %s", path, inner);
  }
  free(text);
  return st;
}

/* ---- checking and writing -------------------------------------------------- */

pccl_status_t pccl_profile_check(const pccl_profile_t *p, char *err, size_t errlen) {
  if (!p) {
    set_error(err, errlen, "NULL profile");
    return PCCL_ERR_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < NFIELDS; i++) {
    const field_t *f = &fields[i];
    const char *at = (const char *)p + f->offset, *why = NULL;
    if (f->kind == VAL_NAME || f->kind == VAL_TEXT) {
      size_t len = strnlen(at, PCCL_PROFILE_TEXT);
      why = check_text(at, len, f->kind == VAL_NAME);
    } else if (f->kind == VAL_INT) {
      int v = *(const int *)(const void *)at;
      if (v < f->min || v > f->max) why = "out of range";
    } else if (f->kind == VAL_FACTOR) {
      double v = *(const double *)(const void *)at;
      if (!(v == 0 || (v >= 1 && v <= PCCL_PROFILE_MAX_FACTOR))) why = "not 0 or in [1, 100]";
    } else {
      double v = *(const double *)(const void *)at;
      if (!(v >= 0 && v <= PCCL_PROFILE_MAX_SECONDS)) why = "not in [0, 1e6] seconds";
    }
    if (why) {
      set_error(err, errlen, "profile field %s: %s", f->key, why);
      return PCCL_ERR_CONFIG;
    }
  }
  if ((p->host_cores > 0) != (p->host_message > 0)) {
    set_error(err, errlen, "profile fields host_cores and host_message: one is set without the other");
    return PCCL_ERR_CONFIG;
  }
  return PCCL_OK;
}

/* An optional key whose 0 means what its absence means (full duplex, no
 * shared host) is not written; compress and decompress, whose absence means
 * a default, always are. */
static int left_unset(const field_t *f, const char *at) {
  if (f->required) return 0;
  if (f->kind == VAL_INT) return *(const int *)(const void *)at == 0;
  if (f->kind == VAL_FACTOR || f->kind == VAL_TIME) return *(const double *)(const void *)at == 0;
  return 0;
}

pccl_status_t pccl_profile_write(FILE *f, const pccl_profile_t *p) {
  if (!f || !p) return PCCL_ERR_INVALID_ARGUMENT;
  pccl_status_t st = pccl_profile_check(p, NULL, 0);
  if (st != PCCL_OK) return st;
  fputs("# pccl machine profile (docs/profile-format.md); seconds, seconds per byte\n", f);
  for (size_t i = 0; i < NFIELDS; i++) {
    const field_t *fl = &fields[i];
    const char *at = (const char *)p + fl->offset;
    if (fl->kind == VAL_NAME || (fl->kind == VAL_TEXT && at[0]))
      fprintf(f, "%s %s\n", fl->key, at);
    else if (left_unset(fl, at))
      continue;
    else if (fl->kind == VAL_INT)
      fprintf(f, "%s %d\n", fl->key, *(const int *)(const void *)at);
    else if (fl->kind != VAL_TEXT)
      fprintf(f, "%s %.17g\n", fl->key, *(const double *)(const void *)at);
  }
  return ferror(f) ? PCCL_ERR_INVALID_ARGUMENT : PCCL_OK;
}
